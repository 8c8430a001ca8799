/**
 * Where the archive's files lie, and how the writer and the reader spell them in DuckDB's SQL. A table
 * is a directory of Hive partitions, one per UTC day of its dated column:
 * `<dir>/<table>/day=YYYY-MM-DD/<startMs>-<instance>-<counter>.parquet`, so a query for a time range
 * opens only the days it covers, and retention drops a day by removing its directory. A file is
 * written as `<name>.tmp` and renamed once complete: the reader (`*.parquet`) never reads a file
 * being written or torn by a crash. A day may also hold a compaction's journal,
 * `<instance>.compaction.json`, naming the file that replaces that instance's files listed in it
 * (compaction.ts says how it is used).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ARCHIVE_TABLE_NAMES, ARCHIVE_TABLES, type ArchiveTable, type ColumnKind } from "./tables.js";

export const DAY_MS = 86_400_000;
/**
 * The dated column's accepted range, 1970-01-01 to 9999-12-31: the days whose names are plain
 * `YYYY-MM-DD` (Date's ISO form of other years has a sign and six digits, which no reader parses as a date).
 */
const LAST_DATABLE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const DAY_DIR = /^day=(\d{4}-\d{2}-\d{2})$/;
export const TMP_SUFFIX = ".tmp";
const PARQUET_SUFFIX = ".parquet";
const JOURNAL_SUFFIX = ".compaction.json";
/** A complete file's name: the millisecond its flush started, its writer's instance, a counter. */
const FILE_NAME = /^(\d+)-([A-Za-z0-9_.-]{1,64})-(\d+)\.parquet$/;

/** Whether `ms` can date a row: a time whose UTC day names a partition. */
export function isDatable(ms: unknown): ms is number {
  return typeof ms === "number" && ms >= 0 && ms <= LAST_DATABLE_MS;
}

/** The UTC day of `ms`, as `YYYY-MM-DD`; `ms` is clamped to the datable range. */
export function dayOf(ms: number): string {
  return new Date(Math.min(Math.max(ms, 0), LAST_DATABLE_MS)).toISOString().slice(0, 10);
}

export function tableDir(dir: string, table: ArchiveTable): string {
  return path.join(dir, table);
}

export function dayDir(dir: string, table: ArchiveTable, day: string): string {
  return path.join(dir, table, `day=${day}`);
}

/** A table's day partitions, oldest first; none when the table has no directory yet. */
export async function listDays(dir: string, table: ArchiveTable): Promise<{ day: string; path: string }[]> {
  const names = await readDirNames(tableDir(dir, table));
  return names
    .map((name) => ({ day: DAY_DIR.exec(name)?.[1], path: path.join(tableDir(dir, table), name) }))
    .filter((entry): entry is { day: string; path: string } => entry.day !== undefined)
    .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/** Whether a table has a complete file at all; usually one listing. */
export async function hasFiles(dir: string, table: ArchiveTable): Promise<boolean> {
  for (const { path: dayPath } of (await listDays(dir, table)).reverse()) {
    if ((await readDirNames(dayPath)).some(isParquetName)) return true;
  }
  return false;
}

/**
 * Removes the `.tmp` files a killed writer left, those older than `olderThanMs`: a younger one may be
 * another instance's write in progress in the same directory (those of `ownInstance`, when given, go
 * whatever their age: its writer is the caller, writing nothing yet). A `.tmp` that a compaction's
 * journal names is kept whatever its age: it is the merged file that recovering the journal publishes.
 * Answers how many it removed.
 */
export async function removeStaleTmpFiles(
  dir: string,
  olderThanMs: number,
  ownInstance?: string,
): Promise<number> {
  let removed = 0;
  for (const table of ARCHIVE_TABLE_NAMES) {
    for (const { path: dayPath } of await listDays(dir, table)) {
      const names = await readDirNames(dayPath);
      if (!names.some((name) => name.endsWith(TMP_SUFFIX))) continue;
      const journaled = new Set(
        (await readJournals(dayPath, names)).map(({ journal }) => journal.merged + TMP_SUFFIX),
      );
      for (const name of names) {
        if (!name.endsWith(TMP_SUFFIX) || journaled.has(name)) continue;
        const file = path.join(dayPath, name);
        const completeName = name.slice(0, -TMP_SUFFIX.length);
        const own =
          ownInstance !== undefined &&
          (instanceOf(completeName) === ownInstance || completeName === journalName(ownInstance));
        const stat = await fs.stat(file).catch(() => undefined);
        if (!stat || (!own && Date.now() - stat.mtimeMs < olderThanMs)) continue;
        await fs.rm(file, { force: true });
        removed++;
      }
    }
  }
  return removed;
}

/** Removes every day partition of every table before `firstKeptDay` (YYYY-MM-DD); answers which. */
export async function removeDaysBefore(dir: string, firstKeptDay: string): Promise<string[]> {
  const removed: string[] = [];
  for (const table of ARCHIVE_TABLE_NAMES) {
    for (const { day, path: dayPath } of await listDays(dir, table)) {
      if (day >= firstKeptDay) break;
      await fs.rm(dayPath, { recursive: true, force: true });
      removed.push(`${table}/day=${day}`);
    }
  }
  return removed;
}

/** Makes a file's bytes durable before a rename publishes it: a power cut must not leave an empty file. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes a directory's entries durable (renames, removals) before the next step relies on them. Where
 * a directory cannot be synced (some platforms refuse), its changes are as durable as the system makes them.
 */
export async function syncDir(dirPath: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dirPath, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EBADF") throw error;
  } finally {
    await handle?.close();
  }
}

/** The names in a directory; none when it is missing or no directory (nothing was written there). */
export async function readDirNames(dirPath: string): Promise<string[]> {
  try {
    return await fs.readdir(dirPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}

/** Whether `name` is a complete file's (what readers read). */
export function isParquetName(name: string): boolean {
  return name.endsWith(PARQUET_SUFFIX);
}

/** The instance that wrote the complete file `name`, if it is named as the writer names its files. */
export function instanceOf(name: string): string | undefined {
  return FILE_NAME.exec(name)?.[2];
}

/** The name of an instance's compaction journal in a day's directory. */
export function journalName(instance: string): string {
  return instance + JOURNAL_SUFFIX;
}

/** What a compaction's journal records: the file of merged rows and the files it replaces. */
export interface CompactionJournal {
  /** The merged file's name (while unpublished, it lies as `<merged>.tmp`). */
  merged: string;
  /** The names of the files whose rows it holds, all of the same instance as the merged file. */
  sources: string[];
}

export interface JournalEntry {
  /** The journal's file name; `instance` is whose it is. */
  name: string;
  instance: string;
  journal: CompactionJournal;
  mtimeMs: number;
}

/**
 * The committed journals in a day's directory (`names` is its listing, read again when absent). A
 * journal gone since the listing is skipped (its compaction ended), and so is one that is no journal
 * this code wrote (its names must be complete files of its own instance), so nothing can make a
 * reader or a recovery touch other files.
 */
export async function readJournals(dayPath: string, names?: readonly string[]): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  for (const name of names ?? (await readDirNames(dayPath))) {
    if (!name.endsWith(JOURNAL_SUFFIX)) continue;
    const instance = name.slice(0, -JOURNAL_SUFFIX.length);
    const file = path.join(dayPath, name);
    let text: string;
    let mtimeMs: number;
    try {
      [text, { mtimeMs }] = await Promise.all([fs.readFile(file, "utf8"), fs.stat(file)]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const journal = parseJournal(text, instance);
    if (journal) entries.push({ name, instance, journal, mtimeMs });
  }
  return entries;
}

function parseJournal(text: string, instance: string): CompactionJournal | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { merged, sources } = (parsed ?? {}) as { merged?: unknown; sources?: unknown };
  const own = (name: unknown): name is string => typeof name === "string" && instanceOf(name) === instance;
  if (!own(merged) || !Array.isArray(sources) || !sources.every(own) || sources.includes(merged)) {
    return undefined;
  }
  return { merged, sources };
}

/** A journal's text (what readJournals parses). */
export function journalText(journal: CompactionJournal): string {
  return JSON.stringify({ merged: journal.merged, sources: journal.sources });
}

/** A table's declared columns, in declaration order (the order of every file's schema). */
export function columnsOf(table: ArchiveTable): [name: string, kind: ColumnKind][] {
  return Object.entries(ARCHIVE_TABLES[table].columns);
}

/** The column that dates a row of `table`. */
export function datedColumn(table: ArchiveTable): string {
  return ARCHIVE_TABLES[table].dated;
}

/** How a column is typed in the Parquet files: times as timestamps, JSON as its text. */
export const PARQUET_TYPES: Readonly<Record<ColumnKind, string>> = {
  text: "VARCHAR",
  json: "VARCHAR",
  int: "BIGINT",
  float: "DOUBLE",
  time: "TIMESTAMP",
};

/** A quoted identifier of DuckDB's SQL (column names such as `count` are keywords). */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
