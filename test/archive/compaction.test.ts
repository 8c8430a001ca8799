/**
 * Compaction: a writer merges the small files its flushes left into one file per day, touching no
 * other instance's files; a crash anywhere in it leaves a directory whose rows, once the archive is
 * opened again, are there exactly once; and a reader querying while it runs never sees a row twice
 * or misses one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { journalName, journalText } from "../../src/archive/layout.js";
import { ParquetArchive, type ParquetArchiveOptions } from "../../src/archive/parquet-archive.js";
import type { ArchiveRow, ArchiveTable } from "../../src/archive/tables.js";

const DAY1 = Date.UTC(2026, 2, 1);
const DAY2 = Date.UTC(2026, 2, 2);
const COMPACTION_WRITER = path.join(import.meta.dirname, "fixtures", "compaction-writer.ts");

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-archive-compaction-"));
  roots.push(root);
  return path.join(root, "archive");
}

function openArchive(dir: string, options: Partial<ParquetArchiveOptions> = {}): Promise<ParquetArchive> {
  // Neither the interval nor the compaction schedule fires unless a test asks: tests flush and compact.
  return ParquetArchive.open({ dir, flushMs: 3_600_000, compactEveryMs: 0, ...options });
}

/** The names in a table's day directory, sorted. */
function namesIn(dir: string, table: ArchiveTable, day: string): string[] {
  const dayPath = path.join(dir, table, `day=${day}`);
  return fs.existsSync(dayPath) ? fs.readdirSync(dayPath).sort() : [];
}

const ofInstance = (instance: string) => (name: string) => name.includes(`-${instance}-`);

function frame(seq: number, ts: number): ArchiveRow<"frames"> {
  return {
    channel: "ticker",
    seq,
    ts,
    ticker: `KX-${seq % 3}`,
    message: JSON.stringify({ type: "ticker", msg: { price: seq } }),
  };
}

function trade(id: number, createdTime: number): ArchiveRow<"trades"> {
  return {
    trade_id: `t${id}`,
    ticker: `KX-${id % 3}`,
    created_time: createdTime,
    count: id / 4,
    yes_price: 0.42,
    no_price: 0.58,
    taker_side: id % 2 === 0 ? "yes" : "no",
  };
}

/** A time in the day starting at `dayStart`, scattered so that files overlap and rows come out of order. */
const scattered = (dayStart: number, n: number) => dayStart + ((n * 7_919_113) % 86_400_000);

/** Frames on two days and trades on one, `flushes` flushes of a few rows each; answers every frame and trade written. */
async function writeSmallFiles(
  archive: ParquetArchive,
  flushes: number,
  firstSeq: number,
): Promise<{ frames: ArchiveRow<"frames">[]; trades: ArchiveRow<"trades">[] }> {
  const frames: ArchiveRow<"frames">[] = [];
  const trades: ArchiveRow<"trades">[] = [];
  let seq = firstSeq;
  for (let i = 0; i < flushes; i++) {
    const batch = [0, 1, 2, 3].map(() => {
      seq++;
      return frame(seq, scattered(seq % 2 === 0 ? DAY1 : DAY2, seq));
    });
    // Two frames of one instant: the merged file keeps them in seq order.
    batch.push(frame(++seq, batch[0]!.ts));
    const tradeBatch = [trade(seq, scattered(DAY1, seq)), trade(seq + 1, scattered(DAY1, seq + 1))];
    archive.append("frames", batch);
    archive.append("trades", tradeBatch);
    frames.push(...batch);
    trades.push(...tradeBatch);
    await archive.flush();
  }
  return { frames, trades };
}

const byTime = <R extends { seq: number; ts: number }>(a: R, b: R) => a.ts - b.ts || a.seq - b.seq;

async function readAll(dir: string): Promise<{
  frames: ArchiveRow<"frames">[];
  trades: ArchiveRow<"trades">[];
}> {
  const reader = await ArchiveReader.open(dir);
  try {
    return { frames: await reader.rows("frames"), trades: await reader.rows("trades") };
  } finally {
    reader.close();
  }
}

describe("compaction", () => {
  it("merges an instance's small files into one file per day, every row once, in time order", async () => {
    const dir = freshDir();
    const alpha = await openArchive(dir, { instance: "alpha" });
    const beta = await openArchive(dir, { instance: "beta" });
    const written = await writeSmallFiles(alpha, 20, 0);
    const betaWritten = await writeSmallFiles(beta, 14, 10_000);
    // A day with too few of alpha's files to compact.
    for (let i = 0; i < 5; i++) {
      alpha.append("orderbooks", [{ ts: DAY1 + i, ticker: "KX", yes_bids: "{}", no_bids: "{}" }]);
      await alpha.flush();
    }
    const betaFiles = (["frames", "trades"] as const).flatMap((table) =>
      ["2026-03-01", "2026-03-02"].flatMap((day) =>
        namesIn(dir, table, day)
          .filter(ofInstance("beta"))
          .map((name) => path.join(dir, table, `day=${day}`, name)),
      ),
    );
    const betaBefore = betaFiles.map((file) => [file, fs.statSync(file).mtimeMs, fs.statSync(file).size]);
    expect(namesIn(dir, "frames", "2026-03-01").filter(ofInstance("alpha"))).toHaveLength(20);

    const compacted = await alpha.compact();

    expect(compacted.map(({ table, day, files }) => ({ table, day, files })).sort(byTableDay)).toEqual([
      { table: "frames", day: "2026-03-01", files: 20 },
      { table: "frames", day: "2026-03-02", files: 20 },
      { table: "trades", day: "2026-03-01", files: 20 },
    ]);
    for (const [table, day] of [
      ["frames", "2026-03-01"],
      ["frames", "2026-03-02"],
      ["trades", "2026-03-01"],
    ] as const) {
      const names = namesIn(dir, table, day);
      expect(names.filter(ofInstance("alpha"))).toHaveLength(1);
      // Nothing else is left: no `.tmp`, no journal.
      expect(names.every((name) => /^\d+-(alpha|beta)-\d+\.parquet$/.test(name))).toBe(true);
    }
    expect(namesIn(dir, "orderbooks", "2026-03-01")).toHaveLength(5);
    // beta's files are as they were: the same names, times and sizes.
    expect(betaFiles.map((file) => [file, fs.statSync(file).mtimeMs, fs.statSync(file).size])).toEqual(
      betaBefore,
    );

    const read = await readAll(dir);
    expect(read.frames).toEqual([...written.frames, ...betaWritten.frames].sort(byTime));
    const byId = (a: ArchiveRow<"trades">, b: ArchiveRow<"trades">) => a.trade_id.localeCompare(b.trade_id);
    expect(read.trades.sort(byId)).toEqual([...written.trades, ...betaWritten.trades].sort(byId));

    // The merged file's own order is the dated column's, then seq.
    const merged = path.join(
      dir,
      "frames/day=2026-03-01",
      namesIn(dir, "frames", "2026-03-01").find(ofInstance("alpha"))!,
    );
    const database = await DuckDBInstance.create(":memory:");
    const connection = await database.connect();
    try {
      const result = await connection.runAndReadAll(
        "SELECT seq, epoch_ms(ts) AS ts FROM read_parquet($1, hive_partitioning = false)",
        [merged],
      );
      const stored = result.getRowObjects().map((row) => ({ seq: Number(row.seq), ts: Number(row.ts) }));
      expect(stored).toEqual(
        written.frames
          .filter((row) => row.ts < DAY2)
          .sort(byTime)
          .map(({ seq, ts }) => ({ seq, ts })),
      );
    } finally {
      connection.closeSync();
      database.closeSync();
    }

    // One file a day is below the bound: nothing more to do.
    expect(await alpha.compact()).toEqual([]);
    await alpha.close();
    await beta.close();
  });

  it("runs by itself after a flush once compactEveryMs has passed, and a restarted instance compacts what its previous run left", async () => {
    const dir = freshDir();
    let now = DAY2;
    const first = await openArchive(dir, { instance: "same", compactEveryMs: 60_000, now: () => now });
    const written = await writeSmallFiles(first, 15, 0);
    expect(namesIn(dir, "frames", "2026-03-01")).toHaveLength(15);
    now += 60_000;
    first.append("frames", [frame(1_000, DAY1)]);
    await first.flush();
    // Day by day, after the flush: the flush's caller does not wait for it.
    await vi.waitFor(
      () => {
        expect(namesIn(dir, "frames", "2026-03-01")).toHaveLength(1);
        expect(namesIn(dir, "frames", "2026-03-02")).toHaveLength(1);
        expect(namesIn(dir, "trades", "2026-03-01")).toHaveLength(1);
      },
      { timeout: 10_000 },
    );
    await first.close();

    // The same instance, restarted: the files of both runs go into one.
    const second = await openArchive(dir, { instance: "same", compactAbove: 3 });
    const more = await writeSmallFiles(second, 3, 2_000);
    expect(namesIn(dir, "frames", "2026-03-01")).toHaveLength(4);
    await second.compact();
    expect(namesIn(dir, "frames", "2026-03-01")).toHaveLength(1);
    await second.close();

    const read = await readAll(dir);
    expect(read.frames).toEqual([...written.frames, frame(1_000, DAY1), ...more.frames].sort(byTime));
    expect(read.trades).toHaveLength(written.trades.length + more.trades.length);
  });

  it("merges files of compactMaxBytes or more no more", async () => {
    const dir = freshDir();
    const first = await openArchive(dir, { instance: "capped", compactAbove: 3 });
    const written = await writeSmallFiles(first, 8, 0);
    await first.compact();
    await first.close();
    const [big] = namesIn(dir, "frames", "2026-03-01");
    const bigBytes = fs.statSync(path.join(dir, "frames/day=2026-03-01", big!)).size;

    const second = await openArchive(dir, { instance: "capped", compactAbove: 3, compactMaxBytes: bigBytes });
    const more = await writeSmallFiles(second, 4, 1_000);
    await second.compact();
    await second.close();
    const names = namesIn(dir, "frames", "2026-03-01");
    expect(names).toHaveLength(2);
    expect(names).toContain(big);
    expect((await readAll(dir)).frames).toEqual([...written.frames, ...more.frames].sort(byTime));
  });

  it("is read by a reader querying in a loop while it runs with every row exactly once", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir, { instance: "busy" });
    const written = await writeSmallFiles(archive, 120, 0);
    const expected = written.frames.length;
    const reader = await ArchiveReader.open(dir);
    let queries = 0;
    try {
      let done = false;
      const compaction = archive.compact().finally(() => {
        done = true;
      });
      const day2 = written.frames.filter((row) => row.ts >= DAY2).length;
      // Queries side by side, so that some list the directories at every step of the compaction.
      const readInLoop = async (window: { from?: number; to?: number }, rows: number) => {
        while (!done) {
          const frames = await reader.rows("frames", window);
          expect(frames).toHaveLength(rows);
          expect(new Set(frames.map((row) => row.seq)).size).toBe(rows);
          queries++;
        }
      };
      await Promise.all([
        readInLoop({}, expected),
        readInLoop({}, expected),
        readInLoop({ from: DAY2, to: DAY2 + 86_400_000 }, day2),
      ]);
      expect(await compaction).toHaveLength(3);
      expect(await reader.rows("frames")).toEqual([...written.frames].sort(byTime));
    } finally {
      reader.close();
      await archive.close();
    }
    expect(queries).toBeGreaterThan(0);
  });

  it("reads every row once whatever step a compaction stopped at, and recovery finishes it or leaves it to its live writer", async () => {
    const dir = freshDir();
    const alpha = await openArchive(dir, { instance: "alpha", compactAbove: 3 });
    const written = await writeSmallFiles(alpha, 6, 0);
    const dayPath = path.join(dir, "frames/day=2026-03-01");
    const backup = `${dayPath}.backup`;
    fs.cpSync(dayPath, backup, { recursive: true });
    const sources = fs.readdirSync(backup).sort();
    await alpha.compact();
    await alpha.close();
    const [merged] = fs.readdirSync(dayPath);
    const mergedBytes = fs.readFileSync(path.join(dayPath, merged!));
    const journal = path.join(dayPath, journalName("alpha"));
    const expected = [...written.frames].sort(byTime);
    const warnings: object[] = [];
    const logger = { error: () => {}, warn: (object: object) => warnings.push(object) };

    /** Lays the day out as a compaction stopped at a step: which sources remain, whether M is published. */
    const stoppedAt = (state: { sources: readonly string[]; published: boolean; journal?: boolean }) => {
      fs.rmSync(dayPath, { recursive: true });
      fs.mkdirSync(dayPath);
      for (const name of state.sources) fs.copyFileSync(path.join(backup, name), path.join(dayPath, name));
      fs.writeFileSync(path.join(dayPath, state.published ? merged! : `${merged}.tmp`), mergedBytes);
      if (state.journal !== false) fs.writeFileSync(journal, journalText({ merged: merged!, sources }));
    };
    const backdate = (file: string, ms: number) => {
      const then = new Date(Date.now() - ms);
      fs.utimesSync(file, then, then);
    };
    const expectRowsOnce = async () => expect((await readAll(dir)).frames).toEqual(expected);

    // Committed, not published: the sources are read; a live instance's young journal and its `.tmp`
    // (however old) are left to it, and the journal, once stale, is finished by any instance.
    stoppedAt({ sources, published: false });
    backdate(path.join(dayPath, `${merged}.tmp`), 3_600_000);
    await expectRowsOnce();
    await (await openArchive(dir, { instance: "beta", logger })).close();
    expect(namesIn(dir, "frames", "2026-03-01")).toEqual(
      [...sources, `${merged}.tmp`, journalName("alpha")].sort(),
    );
    await expectRowsOnce();
    backdate(journal, 120_000);
    await (await openArchive(dir, { instance: "beta", logger })).close();
    expect(namesIn(dir, "frames", "2026-03-01")).toEqual([merged]);
    expect(warnings).toEqual([expect.objectContaining({ instance: "alpha", outcome: "published" })]);
    await expectRowsOnce();

    // Published, some sources deleted: the merged file alone is read; its own instance finishes it at once.
    for (const remaining of [sources, sources.slice(2), []]) {
      stoppedAt({ sources: remaining, published: true });
      await expectRowsOnce();
      await (await openArchive(dir, { instance: "alpha" })).close();
      expect(namesIn(dir, "frames", "2026-03-01")).toEqual([merged]);
      await expectRowsOnce();
    }

    // Before the commit: only `.tmp` files, never read, swept once stale.
    stoppedAt({ sources, published: false, journal: false });
    fs.writeFileSync(`${journal}.tmp`, "{");
    await expectRowsOnce();
    backdate(path.join(dayPath, `${merged}.tmp`), 120_000);
    backdate(`${journal}.tmp`, 120_000);
    await (await openArchive(dir, { instance: "beta" })).close();
    expect(namesIn(dir, "frames", "2026-03-01")).toEqual(sources);
    await expectRowsOnce();
  });

  it("leaves every row readable exactly once, after open, when killed with SIGKILL anywhere in a compaction", async () => {
    // Six crashes, three at a time: each in a directory of its own, most of a run's time spent waiting
    // for its child.
    const crashAndRecover = async (run: number) => {
      const dir = freshDir();
      const rows = await killDuringCompaction(dir, "crashy", Math.random());

      // Readable exactly once even before any recovery.
      const before = (await readAll(dir)).frames;
      expect(before.map((row) => row.seq).sort((a, b) => a - b)).toEqual(
        Array.from({ length: rows }, (_, i) => i + 1),
      );

      // Recovered by the same instance restarted, or, once its journal is stale, by another.
      const restarted = run % 2 === 0;
      if (!restarted) {
        for (const file of fs.readdirSync(dir, { recursive: true }) as string[]) {
          const then = new Date(Date.now() - 120_000);
          fs.utimesSync(path.join(dir, file), then, then);
        }
      }
      const archive = await openArchive(dir, { instance: restarted ? "crashy" : "other" });
      for (const day of ["2026-03-01", "2026-03-02"]) {
        expect(namesIn(dir, "frames", day).every((name) => name.endsWith(".parquet"))).toBe(true);
      }
      const after = (await readAll(dir)).frames;
      expect(after.map((row) => row.seq).sort((a, b) => a - b)).toEqual(
        Array.from({ length: rows }, (_, i) => i + 1),
      );
      if (restarted) {
        // And it compacts again from there.
        await archive.compact();
        for (const day of ["2026-03-01", "2026-03-02"]) expect(namesIn(dir, "frames", day)).toHaveLength(1);
        expect((await readAll(dir)).frames).toHaveLength(rows);
      }
      await archive.close();
    };
    for (const batch of [
      [0, 1, 2],
      [3, 4, 5],
    ])
      await Promise.all(batch.map(crashAndRecover));
  }, 180_000);
});

function byTableDay(a: { table: string; day: string }, b: { table: string; day: string }): number {
  return a.table.localeCompare(b.table) || a.day.localeCompare(b.day);
}

/**
 * Runs the compaction writer in `dir` and kills it with SIGKILL at a point of its compaction chosen by
 * `fraction` (of the changes its compaction makes to the directory); answers the rows it flushed.
 */
async function killDuringCompaction(dir: string, instance: string, fraction: number): Promise<number> {
  const child = spawn(process.execPath, ["--import", "tsx", COMPACTION_WRITER], {
    env: { ...process.env, ARCHIVE_DIR: dir, INSTANCE: instance, FLUSHES: "40" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let watcher: fs.FSWatcher | undefined;
  try {
    const rows = await flushedRows(child);
    // About 2 × (40 deletions + a dozen other changes) in all; past the end, the compaction completes.
    const killAt = 1 + Math.floor(fraction * 110);
    let changes = 0;
    watcher = fs.watch(path.join(dir, "frames"), { recursive: true }, () => {
      if (++changes === killAt) child.kill("SIGKILL");
    });
    child.stdin?.end("GO\n");
    await exited;
    return rows;
  } finally {
    watcher?.close();
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  }
}

/** Waits for the writer's `COMPACTING` line (its rows all flushed); answers its `FLUSHED` count. */
function flushedRows(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let rows = 0;
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const flushed = /^FLUSHED (\d+)$/.exec(line);
      if (flushed) rows = Number(flushed[1]);
      if (line === "COMPACTING") resolve(rows);
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`compaction writer exited early (${code ?? signal})`)),
    );
  });
}
