/**
 * Where the archive's files lie, and how the writer and the reader spell them in DuckDB's SQL. A table
 * is a directory of Hive partitions, one per UTC day of its dated column:
 * `<dir>/<table>/day=YYYY-MM-DD/<startMs>-<instance>-<counter>.parquet`, so a query for a time range
 * opens only the days it covers, and retention drops a day by removing its directory. A file is
 * written as `<name>.tmp` and renamed once complete: the reader's glob (`*.parquet`) never matches
 * a file being written or torn by a crash.
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

/** What DuckDB globs for a table's complete files (never a `.tmp`, never a stray directory). */
export function tableGlob(dir: string, table: ArchiveTable): string {
  return path.join(dir, table, "day=*", "*.parquet");
}

/** A table's day partitions, oldest first; none when the table has no directory yet. */
export async function listDays(dir: string, table: ArchiveTable): Promise<{ day: string; path: string }[]> {
  const names = await readDirNames(tableDir(dir, table));
  return names
    .map((name) => ({ day: DAY_DIR.exec(name)?.[1], path: path.join(tableDir(dir, table), name) }))
    .filter((entry): entry is { day: string; path: string } => entry.day !== undefined)
    .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

export interface ArchiveFile {
  day: string;
  path: string;
  bytes: number;
}

/** Every complete file of a table, with its size. */
export async function listFiles(dir: string, table: ArchiveTable): Promise<ArchiveFile[]> {
  const files: ArchiveFile[] = [];
  for (const { day, path: dayPath } of await listDays(dir, table)) {
    for (const name of await readDirNames(dayPath)) {
      if (!name.endsWith(".parquet")) continue;
      const stat = await fs.stat(path.join(dayPath, name)).catch(() => undefined);
      // Gone since the listing: retention (maybe another instance's) removed its day.
      if (stat?.isFile()) files.push({ day, path: path.join(dayPath, name), bytes: stat.size });
    }
  }
  return files;
}

/** Whether a table has a complete file at all (DuckDB's glob fails on none); usually one listing. */
export async function hasFiles(dir: string, table: ArchiveTable): Promise<boolean> {
  for (const { path: dayPath } of (await listDays(dir, table)).reverse()) {
    if ((await readDirNames(dayPath)).some((name) => name.endsWith(".parquet"))) return true;
  }
  return false;
}

/**
 * Removes the `.tmp` files a killed writer left, those older than `olderThanMs`: a younger one may be
 * another instance's write in progress in the same directory. Answers how many it removed.
 */
export async function removeStaleTmpFiles(dir: string, olderThanMs: number): Promise<number> {
  let removed = 0;
  for (const table of ARCHIVE_TABLE_NAMES) {
    for (const { path: dayPath } of await listDays(dir, table)) {
      for (const name of await readDirNames(dayPath)) {
        if (!name.endsWith(TMP_SUFFIX)) continue;
        const file = path.join(dayPath, name);
        const stat = await fs.stat(file).catch(() => undefined);
        if (!stat || Date.now() - stat.mtimeMs < olderThanMs) continue;
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

/** The names in a directory; none when it is missing or no directory (nothing was written there). */
async function readDirNames(dirPath: string): Promise<string[]> {
  try {
    return await fs.readdir(dirPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
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

/** A string literal of DuckDB's SQL, for the file globs of views (a view's SQL takes no parameters). */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A quoted identifier of DuckDB's SQL (column names such as `count` are keywords). */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
