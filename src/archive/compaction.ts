/**
 * Compaction: a writer that flushes every few seconds leaves thousands of small files a day, which cost
 * every query (each file opened) and the disk (each file's footer). Now and then (parquet-archive.ts
 * decides when, between its own flushes) a writer merges, per day, the files ITS instance wrote into
 * one file, sorted by the dated column (files already big stay as they are); it never touches another
 * instance's files, so writers sharing a directory never coordinate.
 *
 * A compaction of a day's directory, publishing merged file M in place of its sources S:
 *   1. M's rows are written as `M.tmp` (one DuckDB COPY of S) and synced: invisible to readers.
 *   2. The journal `<instance>.compaction.json` (M and S) is written as `.tmp`, synced and renamed into
 *      place, the directory synced: THE COMMIT POINT. Before it, a crash leaves only `.tmp` files,
 *      swept later; after it, the compaction is finished by whoever recovers the journal.
 *   3. `M.tmp` is renamed to M (directory synced): M and S are both complete files now.
 *   4. S is deleted (directory synced).
 *   5. The journal is deleted.
 * Recovery (`open`, hourly, and before the instance's next compaction of that day) takes the journals
 * of its own instance, and those older than a minute of any other (a live instance's compaction takes
 * well under that between steps 2 and 5, so such a journal's writer is dead): it renames `M.tmp` to M
 * if that is not done, deletes what is left of S and then the journal: every step is idempotent, so a
 * recovery killed in turn is recovered again. A journal whose M is neither published nor `.tmp` (which
 * the protocol never leaves: the `.tmp` sweep keeps a `.tmp` a journal names) is only deleted.
 *
 * Readers never see a row twice or miss one. M is published BEFORE S goes (never a moment with the
 * rows in no file), so between steps 3 and 5 a directory holds the rows twice, and readers take the
 * journal into account: `readableFiles` lists the directory (L1), reads its journals (J), lists it
 * again (L3), and answers L1 without the sources of each journal in J whose M is in L1, provided
 * L1 = L3 (the complete files) and the three took under LISTING_WINDOW_MS; otherwise it lists again.
 * Why that is exact: a file name is used once (created once, deleted at most once), so a name in both
 * L1 and L3 existed throughout the time between them. M and a source both in L1 = L3 thus coexisted
 * through J's reading: that lies between steps 3 and 4, inside the journal's life (steps 2 to 5), so J
 * holds the journal and the source is dropped (no duplicate). A source that existed when the listing
 * began and is missing from L1 was deleted during L1 (step 4), so M was published before that and,
 * were it missing too, it would have to be born during L1 and gone before L3 ended: deleted by the
 * instance's next compaction of the day, which starts at least COMPACTION_GAP_MS after the last one
 * ended, longer than a listing may take (no row missing). A file deleted after the listing (a later
 * compaction, retention) is read as it was or makes the query that opens it fail, and the reader
 * queries again.
 * A plain DuckDB glob over the directory (not ArchiveReader) may see a compaction's rows twice
 * between steps 3 and 4, for the milliseconds the deletions take: never missing rows.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { DuckDBConnection } from "@duckdb/node-api";
import {
  type CompactionJournal,
  columnsOf,
  datedColumn,
  dayDir,
  instanceOf,
  isParquetName,
  type JournalEntry,
  journalName,
  journalText,
  listDays,
  readDirNames,
  readJournals,
  sqlIdentifier,
  syncDir,
  syncFile,
  TMP_SUFFIX,
} from "./layout.js";
import { ARCHIVE_TABLE_NAMES, ARCHIVE_TABLES, type ArchiveTable } from "./tables.js";

/** The longest a reader's listing of one day may take to count as one view of the directory. */
const LISTING_WINDOW_MS = 1_000;
/** The least time between two compactions of one instance in one day's directory (> LISTING_WINDOW_MS). */
export const COMPACTION_GAP_MS = 2_000;
/** Listings of one day a reader tries before giving up on a directory that keeps changing. */
const LISTING_ATTEMPTS = 20;
/** Files deleted at a time. */
const DELETE_BATCH = 16;
/** Columns that order a merged file's rows after the dated one, when its table has them. */
const TIE_BREAKERS = ["seq"];

/** One day's files of one instance merged into one. */
export interface CompactedDay {
  table: ArchiveTable;
  day: string;
  /** How many files were merged, and the rows they held. */
  files: number;
  rows: number;
  /** The merged file's path. */
  file: string;
}

export interface CompactionTarget {
  dir: string;
  table: ArchiveTable;
  day: string;
  instance: string;
  /** The day is compacted when the instance has more files than this in it (counting those merged). */
  above: number;
  /**
   * Files this large or larger are merged no more: a big day ends as a few files of about this size
   * rather than one file read, sorted and written again whole at every run.
   */
  maxBytes: number;
  /** Names the merged file: a new name of the instance's files. */
  newName(): string;
}

/**
 * Merges `target.instance`'s files of the day (those under `target.maxBytes`) into one, when it has
 * more than `target.above` of them, with the writer's DuckDB (`connect`, only then); answers
 * what it merged, or nothing. A journal the instance left there (a compaction that failed after its
 * commit) is finished instead ("recovered"), and the day waits for the next run (COMPACTION_GAP_MS).
 */
export async function compactDay(
  connect: () => Promise<DuckDBConnection>,
  target: CompactionTarget,
): Promise<CompactedDay | "recovered" | undefined> {
  const dayPath = dayDir(target.dir, target.table, target.day);
  const names = await readDirNames(dayPath);
  const left = (await readJournals(dayPath, names)).find((entry) => entry.instance === target.instance);
  if (left) {
    await finishCompaction(dayPath, left);
    return "recovered";
  }
  const own = names.filter((name) => instanceOf(name) === target.instance);
  if (own.length <= target.above) return undefined;
  const sizes = await Promise.all(
    own.map((name) =>
      fs.stat(path.join(dayPath, name)).then(
        (stat) => stat.size,
        () => undefined,
      ),
    ),
  );
  // A file gone since the listing (retention) is no source.
  const sources = own.filter((_, i) => (sizes[i] ?? Number.POSITIVE_INFINITY) < target.maxBytes).sort();
  if (sources.length <= target.above) return undefined;

  const merged = target.newName();
  const file = path.join(dayPath, merged);
  const tmp = file + TMP_SUFFIX;
  const journalPath = path.join(dayPath, journalName(target.instance));
  let committed = false;
  try {
    const rows = await mergeInto(
      await connect(),
      target.table,
      sources.map((name) => path.join(dayPath, name)),
      tmp,
    );
    await syncFile(tmp);
    await writeDurably(journalPath + TMP_SUFFIX, journalText({ merged, sources }));
    await fs.rename(journalPath + TMP_SUFFIX, journalPath);
    committed = true;
    await syncDir(dayPath);
    await publish(dayPath, journalPath, { merged, sources });
    return { table: target.table, day: target.day, files: sources.length, rows, file };
  } catch (error) {
    // Before the commit nothing is published: the `.tmp` files go. After it, the journal stays for recovery.
    if (!committed) {
      await fs.rm(tmp, { force: true }).catch(() => {});
      await fs.rm(journalPath + TMP_SUFFIX, { force: true }).catch(() => {});
    }
    throw error;
  }
}

/** How recovering a journal ended: its merged file published, or never published (its sources all there, or not). */
export type RecoveryOutcome = "published" | "rolled back" | "lost";

export interface RecoveredJournal {
  table: ArchiveTable;
  day: string;
  instance: string;
  outcome: RecoveryOutcome;
}

/**
 * Finishes the compactions left in `dir`: every journal of `instance`, and every other one older than
 * `staleMs` (a younger one may be a live instance's compaction in progress).
 */
export async function recoverCompactions(
  dir: string,
  options: { instance: string; staleMs: number },
): Promise<RecoveredJournal[]> {
  const recovered: RecoveredJournal[] = [];
  for (const table of ARCHIVE_TABLE_NAMES) {
    for (const { day, path: dayPath } of await listDays(dir, table)) {
      for (const entry of await readJournals(dayPath)) {
        const ownOrDead =
          entry.instance === options.instance || Date.now() - entry.mtimeMs >= options.staleMs;
        if (!ownOrDead) continue;
        const outcome = await finishCompaction(dayPath, entry);
        recovered.push({ table, day, instance: entry.instance, outcome });
      }
    }
  }
  return recovered;
}

/**
 * The complete files of a day's directory that a reader reads: every row of the day once, though a
 * compaction runs there (see the header). Names, sorted; none when the directory is gone.
 */
export async function readableFiles(dayPath: string): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const before = (await readDirNames(dayPath)).filter(isParquetName).sort();
    const journals = await readJournals(dayPath);
    const after = (await readDirNames(dayPath)).filter(isParquetName).sort();
    const stable = performance.now() - started <= LISTING_WINDOW_MS && sameNames(before, after);
    if (stable) {
      const present = new Set(before);
      const replaced = new Set<string>();
      for (const { journal } of journals) {
        if (present.has(journal.merged)) for (const source of journal.sources) replaced.add(source);
      }
      return replaced.size === 0 ? before : before.filter((name) => !replaced.has(name));
    }
    if (attempt >= LISTING_ATTEMPTS) {
      throw new Error(`the archive's ${dayPath} changed during each of ${LISTING_ATTEMPTS} listings`);
    }
    await sleep(attempt * 5);
  }
}

/** Writes the rows of `files`, sorted by time, as one zstd Parquet file `tmp`; answers how many. */
async function mergeInto(
  connection: DuckDBConnection,
  table: ArchiveTable,
  files: readonly string[],
  tmp: string,
): Promise<number> {
  // Loaded already: the connection is the writer's, made with the module.
  const { listValue } = await import("@duckdb/node-api");
  const columns = columnsOf(table).map(([name]) => sqlIdentifier(name));
  const order = [datedColumn(table), ...TIE_BREAKERS]
    .filter((column) => Object.hasOwn(ARCHIVE_TABLES[table].columns, column))
    .map(sqlIdentifier);
  const copied = await connection.run(
    `COPY (SELECT ${columns.join(", ")}
      FROM read_parquet($1, hive_partitioning = false, union_by_name = true)
      ORDER BY ${order.join(", ")}) TO $2 (FORMAT parquet, COMPRESSION zstd)`,
    [listValue([...files]), tmp],
  );
  const rows = Number(copied.rowsChanged);
  // What the file says it holds, read back from its footer: a short write must not replace its sources.
  const counted = await connection.runAndReadAll(
    "SELECT count(*) AS n FROM read_parquet($1, hive_partitioning = false)",
    [tmp],
  );
  const written = Number(counted.getRowObjects()[0]?.n);
  if (written !== rows) throw new Error(`the merged file ${tmp} holds ${written} rows, not ${rows}`);
  return rows;
}

/** Steps 3 to 5: M published, its sources deleted, the journal deleted. */
async function publish(dayPath: string, journalPath: string, journal: CompactionJournal): Promise<void> {
  const file = path.join(dayPath, journal.merged);
  await fs.rename(file + TMP_SUFFIX, file);
  await syncDir(dayPath);
  await removeSources(dayPath, journal.sources);
  await fs.rm(journalPath, { force: true });
}

/** Recovers one committed journal (see the header); safe to run again, and alongside another recovery of it. */
async function finishCompaction(dayPath: string, entry: JournalEntry): Promise<RecoveryOutcome> {
  const { journal } = entry;
  const journalPath = path.join(dayPath, entry.name);
  const file = path.join(dayPath, journal.merged);
  if (!(await exists(file))) {
    try {
      await fs.rename(file + TMP_SUFFIX, file);
      await syncDir(dayPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // Published meanwhile by another recovery, or never: then the sources hold the rows (if all are there).
      if (!(await exists(file))) {
        const present = await Promise.all(journal.sources.map((name) => exists(path.join(dayPath, name))));
        await fs.rm(journalPath, { force: true });
        return present.every(Boolean) ? "rolled back" : "lost";
      }
    }
  }
  await removeSources(dayPath, journal.sources);
  await fs.rm(journalPath, { force: true });
  return "published";
}

/** Deletes a published compaction's sources, durably before its journal goes. */
async function removeSources(dayPath: string, sources: readonly string[]): Promise<void> {
  for (let i = 0; i < sources.length; i += DELETE_BATCH) {
    await Promise.all(
      sources.slice(i, i + DELETE_BATCH).map((name) => fs.rm(path.join(dayPath, name), { force: true })),
    );
  }
  await syncDir(dayPath);
}

async function writeDurably(file: string, text: string): Promise<void> {
  const handle = await fs.open(file, "w");
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
