/**
 * The archive's storage: rows appended to the writer land as Parquet files, one per table and UTC day,
 * that the reader and any plain DuckDB read back exactly, with the declared types. A crash never
 * leaves a file a reader chokes on, a failing disk never lets the buffer grow without bound, old days
 * go when retention says so, and a window exports as files other tools read.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { DuckDBInstance, type DuckDBValue } from "@duckdb/node-api";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type ArchiveQuery, ArchiveReader } from "../../src/archive/archive-reader.js";
import {
  ArchiveFlushError,
  InvalidArchiveQueryError,
  UnknownArchiveColumnError,
  UnknownArchiveTableError,
} from "../../src/archive/errors.js";
import { ParquetArchive, type ParquetArchiveOptions } from "../../src/archive/parquet-archive.js";
import { ARCHIVE_TABLE_NAMES, type ArchiveRow } from "../../src/archive/tables.js";

const DAY_MS = 86_400_000;
/** The last millisecond of 2026-03-01 and the first of 2026-03-02 (UTC): rows either side of midnight. */
const LATE_DAY1 = Date.UTC(2026, 2, 1, 23, 59, 59, 999);
const EARLY_DAY2 = Date.UTC(2026, 2, 2, 0, 0, 0, 0);
const CRASH_WRITER = path.join(import.meta.dirname, "fixtures", "crash-writer.ts");

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-archive-store-"));
  roots.push(root);
  return path.join(root, "archive");
}

function openArchive(dir: string, options: Partial<ParquetArchiveOptions> = {}): Promise<ParquetArchive> {
  // The interval never fires in a test unless it asks for one: tests flush and close.
  return ParquetArchive.open({ dir, flushMs: 3_600_000, ...options });
}

/** Every file under `dir`, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(dir, name)).isFile())
    .sort();
}

/** Runs `sql` on a DuckDB of its own, as a user's tool would. */
async function duckdb(sql: string): Promise<Record<string, DuckDBValue>[]> {
  const database = await DuckDBInstance.create(":memory:");
  const connection = await database.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjects();
  } finally {
    connection.closeSync();
    database.closeSync();
  }
}

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

async function parquetTypes(file: string): Promise<Record<string, string>> {
  // Without the Hive `day` DuckDB would add from the file's directory: the file's own columns.
  const described = await duckdb(
    `DESCRIBE SELECT * FROM read_parquet(${quoted(file)}, hive_partitioning = false)`,
  );
  return Object.fromEntries(described.map((row) => [String(row.column_name), String(row.column_type)]));
}

async function parquetRowCount(fileOrGlob: string): Promise<number> {
  const [row] = await duckdb(`SELECT count(*) AS n FROM read_parquet(${quoted(fileOrGlob)})`);
  return Number(row?.n);
}

function frame(seq: number, ts: number, ticker = "KXHIGHNY-26MAR01-T50"): ArchiveRow<"frames"> {
  return {
    channel: "ticker",
    seq,
    ts,
    ticker,
    message: JSON.stringify({ type: "ticker", msg: { market_ticker: ticker, price: seq } }),
  };
}

function trade(id: string, createdTime: number, ticker = "KXHIGHNY-26MAR01-T50"): ArchiveRow<"trades"> {
  return {
    trade_id: id,
    ticker,
    created_time: createdTime,
    count: 12.5,
    yes_price: 0.42,
    no_price: 0.58,
    taker_side: "yes",
  };
}

function fill(id: number, ts: number): ArchiveRow<"fills"> {
  return {
    id,
    ts,
    signature: `sig${id}`,
    order_id: `order-${id}`,
    wallet: "Wa11et1111111111111111111111111111111111111",
    input_mint: "USDC",
    input_amount: 1_000_000,
    output_mint: "YES",
    output_amount: 2_000_000,
    outcome_mint: "YES",
    settlement_mint: "USDC",
    contracts: 2_000_000,
    notional: 1_000_000,
    fee_amount: 1_000,
  };
}

describe("the archive writer", () => {
  it("writes each table's rows into one partition per UTC day, in Parquet types any DuckDB reads", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir, { instance: "test" });
    archive.append("frames", [frame(1, LATE_DAY1), frame(2, EARLY_DAY2), frame(3, EARLY_DAY2 + 5)]);
    archive.append("trades", [trade("a", LATE_DAY1), trade("b", EARLY_DAY2)]);
    archive.append("fills", [fill(1, EARLY_DAY2)]);
    await archive.close();

    const files = filesUnder(dir);
    expect(files).toHaveLength(5);
    expect(files.map((file) => path.dirname(file))).toEqual([
      "fills/day=2026-03-02",
      "frames/day=2026-03-01",
      "frames/day=2026-03-02",
      "trades/day=2026-03-01",
      "trades/day=2026-03-02",
    ]);
    for (const file of files) expect(path.basename(file)).toMatch(/^\d+-test-\d+\.parquet$/);

    expect(await parquetRowCount(path.join(dir, "frames/day=2026-03-01/*.parquet"))).toBe(1);
    expect(await parquetRowCount(path.join(dir, "frames/day=2026-03-02/*.parquet"))).toBe(2);
    expect(await parquetTypes(path.join(dir, files[1]!))).toEqual({
      channel: "VARCHAR",
      seq: "BIGINT",
      ts: "TIMESTAMP",
      ticker: "VARCHAR",
      message: "VARCHAR",
    });
    expect(await parquetTypes(path.join(dir, files[3]!))).toMatchObject({
      created_time: "TIMESTAMP",
      count: "DOUBLE",
      yes_price: "DOUBLE",
      taker_side: "VARCHAR",
    });
    expect(await parquetTypes(path.join(dir, files[0]!))).toMatchObject({
      id: "BIGINT",
      fee_amount: "BIGINT",
    });

    const reader = await ArchiveReader.open(dir);
    try {
      expect(await reader.rows("frames")).toEqual([
        frame(1, LATE_DAY1),
        frame(2, EARLY_DAY2),
        frame(3, EARLY_DAY2 + 5),
      ]);
      expect(await reader.rows("trades")).toEqual([trade("a", LATE_DAY1), trade("b", EARLY_DAY2)]);
      expect(await reader.rows("fills")).toEqual([fill(1, EARLY_DAY2)]);
      expect(await reader.rows("orderbooks")).toEqual([]);
    } finally {
      reader.close();
    }
  });

  it("round-trips values exactly: millisecond times, integers to 2^53-1, unicode text, JSON text", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    const message = `${JSON.stringify({ text: "Größe ✓ 日本語 🎲", quote: 'it\'s "x"', nested: [1, { n: null }] })}\n`;
    const frames = [
      {
        channel: "trade",
        seq: Number.MAX_SAFE_INTEGER,
        ts: 1_772_409_600_123,
        ticker: "Ünïcødé-🎲",
        message,
      },
      { channel: "", seq: 0, ts: 1, ticker: "O'Brien", message: "{}" },
    ];
    const fills = [
      { ...fill(Number.MAX_SAFE_INTEGER, 1_772_409_600_001), input_amount: Number.MAX_SAFE_INTEGER },
    ];
    const trades = [{ ...trade("t", 1_772_409_600_999), count: 0.1, yes_price: 1e-9, no_price: -123456.789 }];
    archive.append("frames", frames);
    archive.append("fills", fills);
    archive.append("trades", trades);
    await archive.close();

    const reader = await ArchiveReader.open(dir);
    try {
      expect(await reader.rows("frames", { orderBy: "seq", descending: true })).toEqual(frames);
      expect(await reader.rows("fills")).toEqual(fills);
      expect(await reader.rows("trades")).toEqual(trades);
    } finally {
      reader.close();
    }
    const [stored] = await duckdb(
      `SELECT epoch_ms(ts) AS ts, seq, message FROM read_parquet(${quoted(path.join(dir, "frames/*/*.parquet"))}) WHERE seq > 0`,
    );
    expect(stored).toEqual({ ts: 1_772_409_600_123n, seq: BigInt(Number.MAX_SAFE_INTEGER), message });
  });

  it("writes every flushMs without being asked, and early once a table buffers maxBufferedRows", async () => {
    const timed = freshDir();
    const archive = await openArchive(timed, { flushMs: 20 });
    archive.append("frames", [frame(1, LATE_DAY1)]);
    await vi.waitFor(() => expect(filesUnder(timed)).toHaveLength(1), { timeout: 5_000 });
    await archive.close();

    const full = freshDir();
    const early = await openArchive(full, { maxBufferedRows: 10 });
    early.append(
      "frames",
      Array.from({ length: 9 }, (_, i) => frame(i, LATE_DAY1)),
    );
    early.append("frames", [frame(9, LATE_DAY1)]);
    await vi.waitFor(() => expect(filesUnder(full)).toHaveLength(1), { timeout: 5_000 });
    await early.close();
  });

  it("refuses rows it cannot date and rows appended after close, and counts them", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    archive.append("frames", [frame(1, LATE_DAY1), frame(2, Number.NaN), frame(3, -1)]);
    archive.append("frames", [{ ...frame(4, LATE_DAY1), ts: undefined as unknown as number }]);
    await archive.close();
    archive.append("frames", [frame(5, LATE_DAY1)]);
    expect(archive.dropped).toBe(4);
    const reader = await ArchiveReader.open(dir);
    try {
      expect((await reader.rows("frames")).map((row) => row.seq)).toEqual([1]);
    } finally {
      reader.close();
    }
  });

  it("drops and counts rows past 4× maxBufferedRows while flushes fail, and keeps the rest for the next flush", async () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    // A file where the frames' directory belongs: every write of frames fails, as on a broken disk.
    fs.writeFileSync(path.join(dir, "frames"), "not a directory");
    const errors: string[] = [];
    const warnings: string[] = [];
    const logger = {
      error: (_: object, message: string) => errors.push(message),
      warn: (_: object, message: string) => warnings.push(message),
    };
    const archive = await openArchive(dir, { maxBufferedRows: 10, logger });
    archive.append("trades", [trade("unaffected", LATE_DAY1)]);
    archive.append(
      "frames",
      Array.from({ length: 25 }, (_, i) => frame(i, LATE_DAY1)),
    );
    archive.append(
      "frames",
      Array.from({ length: 30 }, (_, i) => frame(25 + i, LATE_DAY1)),
    );
    expect(archive.dropped).toBe(15);
    expect(warnings).toHaveLength(1);

    const failure = await archive.flush().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ArchiveFlushError);
    expect((failure as ArchiveFlushError).failures).toEqual([
      expect.objectContaining({ table: "frames", day: "2026-03-01", rows: 40 }),
    ]);
    // The early flush the full buffer started failed, and was logged once; the explicit one is the caller's.
    expect(errors).toHaveLength(1);
    archive.append("frames", [frame(99, LATE_DAY1)]);
    expect(archive.dropped).toBe(16);

    fs.rmSync(path.join(dir, "frames"));
    await archive.close();
    const reader = await ArchiveReader.open(dir);
    try {
      const seqs = (await reader.rows("frames", { orderBy: "seq" })).map((row) => row.seq);
      expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(await reader.rows("trades")).toHaveLength(1);
    } finally {
      reader.close();
    }
  });

  it("deletes the days older than retentionDays at open and, as time passes, about hourly on a flush", async () => {
    const dir = freshDir();
    const today = Date.UTC(2026, 2, 10, 12);
    const unlimited = await openArchive(dir, { now: () => today });
    for (const daysAgo of [10, 3, 2, 1, 0])
      unlimited.append("trades", [trade(`${daysAgo}`, today - daysAgo * DAY_MS)]);
    unlimited.append("frames", [frame(1, today - 10 * DAY_MS)]);
    await unlimited.close();
    const days = () => fs.readdirSync(path.join(dir, "trades")).sort();
    expect(days()).toHaveLength(5);

    let now = today;
    const kept = await openArchive(dir, { retentionDays: 2, now: () => now });
    // Every row of the last two days is kept: 2026-03-08 has rows younger than 48 hours.
    expect(days()).toEqual(["day=2026-03-08", "day=2026-03-09", "day=2026-03-10"]);
    expect(fs.readdirSync(path.join(dir, "frames"))).toEqual([]);

    now = today + DAY_MS + 3_600_000;
    kept.append("trades", [trade("later", now)]);
    await kept.flush();
    expect(days()).toEqual(["day=2026-03-09", "day=2026-03-10", "day=2026-03-11"]);
    await kept.close();
  });

  it("leaves only complete, readable files when killed with SIGKILL in the middle of writing one", async () => {
    const dir = freshDir();
    const child = spawn(process.execPath, ["--import", "tsx", CRASH_WRITER], {
      env: { ...process.env, ARCHIVE_DIR: dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const flushes = followFlushes(child);
    try {
      await flushes.reached(3);
      // Killed as soon as its next file appears: while DuckDB writes it.
      await killOnNextFile(child, path.join(dir, "frames"));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await closed(child);
    }
    const written = flushes.rowsWritten();

    const files = filesUnder(dir);
    const complete = files.filter((file) => file.endsWith(".parquet"));
    expect(complete.length).toBeGreaterThanOrEqual(6);
    expect(files.every((file) => file.endsWith(".parquet") || file.endsWith(".parquet.tmp"))).toBe(true);
    let rows = 0;
    for (const file of complete) rows += await parquetRowCount(path.join(dir, file));
    // Every acknowledged flush is there, and a flush cut short is there whole or not at all (per day).
    expect(rows).toBeGreaterThanOrEqual(written);
    expect(rows % 2_000).toBe(0);
    const reader = await ArchiveReader.open(dir);
    try {
      expect((await reader.stats()).find((stats) => stats.table === "frames")?.rows).toBe(rows);
    } finally {
      reader.close();
    }
  });
});

describe("the archive's temporary files", () => {
  it("are never read, and a killed writer's are removed by the next open", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    archive.append("frames", [frame(1, LATE_DAY1)]);
    await archive.close();
    const dayDir = path.join(dir, "frames/day=2026-03-01");
    const stale = path.join(dayDir, "x.parquet.tmp");
    const inProgress = path.join(dayDir, "y.parquet.tmp");
    fs.writeFileSync(stale, "PAR1 torn garbage");
    fs.writeFileSync(inProgress, "PAR1 another instance writing");
    const anHourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(stale, anHourAgo, anHourAgo);

    const reader = await ArchiveReader.open(dir);
    try {
      expect(await reader.rows("frames")).toEqual([frame(1, LATE_DAY1)]);
      expect((await reader.stats()).find((stats) => stats.table === "frames")).toMatchObject({
        files: 1,
        rows: 1,
      });
    } finally {
      reader.close();
    }

    await (await openArchive(dir)).close();
    expect(fs.existsSync(stale)).toBe(false);
    // Young enough to be another instance's write in progress in the same directory.
    expect(fs.existsSync(inProgress)).toBe(true);
  });
});

describe("the archive reader", () => {
  it("answers an empty archive with no rows, and sees files written after it opened", async () => {
    const dir = freshDir();
    const reader = await ArchiveReader.open(dir);
    try {
      expect(await reader.rows("trades", { from: 0, to: Date.now(), limit: 5 })).toEqual([]);
      const stats = await reader.stats();
      expect(stats.map((table) => table.table)).toEqual(ARCHIVE_TABLE_NAMES);
      expect(stats.every((table) => table.files === 0 && table.rows === 0 && table.firstTime === null)).toBe(
        true,
      );

      const archive = await openArchive(dir);
      archive.append("trades", [trade("a", LATE_DAY1)]);
      await archive.flush();
      expect(await reader.rows("trades")).toEqual([trade("a", LATE_DAY1)]);
      archive.append("trades", [trade("b", EARLY_DAY2)]);
      await archive.close();
      expect((await reader.rows("trades")).map((row) => row.trade_id)).toEqual(["a", "b"]);
    } finally {
      reader.close();
    }
  });

  it("selects rows by window [from, to), by column values, sorted and limited", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    archive.append("trades", [
      trade("before", LATE_DAY1 - 1, "A"),
      trade("first", LATE_DAY1, "A"),
      trade("second", EARLY_DAY2, "B"),
      trade("third", EARLY_DAY2 + 1, "A"),
      trade("at-to", EARLY_DAY2 + 2, "A"),
    ]);
    await archive.close();
    const reader = await ArchiveReader.open(dir);
    const ids = async (query: ArchiveQuery<"trades">) =>
      (await reader.rows("trades", query)).map((row) => row.trade_id);
    try {
      expect(await ids({ from: LATE_DAY1, to: EARLY_DAY2 + 2 })).toEqual(["first", "second", "third"]);
      expect(await ids({ from: LATE_DAY1, to: EARLY_DAY2 + 2, equals: { ticker: "A" } })).toEqual([
        "first",
        "third",
      ]);
      expect(await ids({ equals: { created_time: EARLY_DAY2 } })).toEqual(["second"]);
      expect(await ids({ orderBy: "created_time", descending: true, limit: 2 })).toEqual(["at-to", "third"]);
      expect(await ids({ equals: { ticker: "A' OR '1'='1" } })).toEqual([]);

      await expect(reader.rows("nope" as "trades")).rejects.toBeInstanceOf(UnknownArchiveTableError);
      await expect(reader.rows("trades", { orderBy: "price" as "ticker" })).rejects.toBeInstanceOf(
        UnknownArchiveColumnError,
      );
      await expect(reader.rows("trades", { limit: -1 })).rejects.toBeInstanceOf(InvalidArchiveQueryError);
      await expect(reader.rows("trades", { equals: { count: "many" } })).rejects.toBeInstanceOf(
        InvalidArchiveQueryError,
      );
    } finally {
      reader.close();
    }
  });

  it("counts each table's files, rows, bytes and days, and the bytes of a market's day", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    archive.append("trades", [trade("1", LATE_DAY1, "A"), trade("2", LATE_DAY1 - 5, "B")]);
    await archive.flush();
    archive.append("trades", [trade("3", LATE_DAY1 - 9, "A"), trade("4", EARLY_DAY2, "A")]);
    archive.append("fills", [fill(1, EARLY_DAY2)]);
    await archive.close();

    const reader = await ArchiveReader.open(dir);
    try {
      const stats = await reader.stats();
      const trades = stats.find((table) => table.table === "trades")!;
      const bytes = filesUnder(path.join(dir, "trades")).reduce(
        (sum, file) => sum + fs.statSync(path.join(dir, "trades", file)).size,
        0,
      );
      expect(trades).toEqual({
        table: "trades",
        files: 3,
        rows: 4,
        bytes,
        days: 2,
        firstDay: "2026-03-01",
        lastDay: "2026-03-02",
        firstTime: LATE_DAY1 - 9,
        lastTime: EARLY_DAY2,
        marketDays: 3,
        bytesPerMarketDay: Math.round(bytes / 3),
      });
      expect(stats.find((table) => table.table === "fills")).toMatchObject({
        files: 1,
        rows: 1,
        marketDays: null,
        bytesPerMarketDay: null,
      });
    } finally {
      reader.close();
    }
  });

  it("exports a window as one Parquet file per table, ordered by time, that DuckDB reads", async () => {
    const dir = freshDir();
    const archive = await openArchive(dir);
    archive.append("frames", [
      frame(3, EARLY_DAY2),
      frame(2, EARLY_DAY2),
      frame(1, LATE_DAY1),
      frame(4, EARLY_DAY2 + DAY_MS),
    ]);
    archive.append("trades", [trade("a", LATE_DAY1), trade("late", EARLY_DAY2 + DAY_MS)]);
    await archive.close();
    const outDir = path.join(path.dirname(dir), "export");

    const reader = await ArchiveReader.open(dir);
    try {
      await expect(
        reader.export({
          from: LATE_DAY1,
          to: EARLY_DAY2 + DAY_MS,
          outDir,
          tables: ["frames", "nope" as "frames"],
        }),
      ).rejects.toBeInstanceOf(UnknownArchiveTableError);
      expect(fs.existsSync(outDir)).toBe(false);

      const written = await reader.export({
        from: LATE_DAY1,
        to: EARLY_DAY2 + DAY_MS,
        outDir,
        tables: ["frames", "trades", "orderbooks"],
      });
      expect(written).toEqual([
        { table: "frames", file: path.join(outDir, "frames.parquet"), rows: 3 },
        { table: "trades", file: path.join(outDir, "trades.parquet"), rows: 1 },
        { table: "orderbooks", file: path.join(outDir, "orderbooks.parquet"), rows: 0 },
      ]);
      expect(fs.readdirSync(outDir).sort()).toEqual([
        "frames.parquet",
        "orderbooks.parquet",
        "trades.parquet",
      ]);
    } finally {
      reader.close();
    }
    const frames = await duckdb(
      `SELECT seq, epoch_ms(ts) AS ts FROM read_parquet(${quoted(path.join(outDir, "frames.parquet"))})`,
    );
    expect(frames).toEqual([
      { seq: 1n, ts: BigInt(LATE_DAY1) },
      { seq: 2n, ts: BigInt(EARLY_DAY2) },
      { seq: 3n, ts: BigInt(EARLY_DAY2) },
    ]);
    expect(await parquetTypes(path.join(outDir, "orderbooks.parquet"))).toEqual({
      ts: "TIMESTAMP",
      ticker: "VARCHAR",
      yes_bids: "VARCHAR",
      no_bids: "VARCHAR",
    });
    expect(await parquetRowCount(path.join(outDir, "trades.parquet"))).toBe(1);
  });
});

/** Follows the crash writer's `FLUSHED <rows>` lines: the rows it reported written, and a wait for a count of flushes. */
function followFlushes(child: ChildProcess): {
  reached(flushes: number): Promise<void>;
  rowsWritten(): number;
} {
  let flushes = 0;
  let rows = 0;
  const waiting: { flushes: number; resolve: () => void }[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on("line", (line) => {
    const match = /^FLUSHED (\d+)$/.exec(line);
    if (!match) return;
    flushes++;
    rows = Number(match[1]);
    for (const wait of waiting) if (flushes >= wait.flushes) wait.resolve();
  });
  return {
    reached: (count) =>
      new Promise((resolve, reject) => {
        waiting.push({ flushes: count, resolve });
        child.once("exit", (code, signal) =>
          reject(new Error(`archive writer exited early (${code ?? signal})`)),
        );
      }),
    rowsWritten: () => rows,
  };
}

/** Kills `child` with SIGKILL at the first change of a file under `dir`. */
function killOnNextFile(child: ChildProcess, dir: string): Promise<void> {
  const watcher = fs.watch(dir, { recursive: true });
  return new Promise((resolve) => {
    watcher.once("change", () => {
      child.kill("SIGKILL");
      watcher.close();
      resolve();
    });
  });
}

/** Resolves once `child` has exited and its output has been read to the end. */
function closed(child: ChildProcess): Promise<void> {
  if (child.stdout?.closed && (child.exitCode !== null || child.signalCode !== null))
    return Promise.resolve();
  return new Promise((resolve) => child.once("close", () => resolve()));
}
