/**
 * Reads the archive's Parquet files, for the history routes, `oddsgate archive` and the tests: rows of
 * a table within a time window, what each table holds (`stats`), and a window written out as one
 * Parquet file per table (`export`). It never changes a file, so it reads while writers write.
 *
 * Each query lists the day directories its time window covers and reads exactly the files listed
 * (an in-memory DuckDB, `read_parquet` over the list with the Hive `day` column), so files written
 * since the last query are seen. A day's listing (compaction.ts: `readableFiles`) leaves out the files
 * a compaction in progress has already merged into a published file, so a query reads every row
 * once while writers compact; a file that disappears before DuckDB opens it (a compaction finishing,
 * retention) fails the attempt, and the query lists again.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { type DuckDBConnection, type DuckDBInstance, type DuckDBValue, listValue } from "@duckdb/node-api";
import { readableFiles } from "./compaction.js";
import { openDuckDb } from "./duckdb.js";
import { InvalidArchiveQueryError, UnknownArchiveColumnError, UnknownArchiveTableError } from "./errors.js";
import {
  columnsOf,
  datedColumn,
  dayOf,
  listDays,
  PARQUET_TYPES,
  sqlIdentifier,
  TMP_SUFFIX,
} from "./layout.js";
import {
  ARCHIVE_TABLE_NAMES,
  ARCHIVE_TABLES,
  type ArchiveRow,
  type ArchiveTable,
  isArchiveTable,
} from "./tables.js";

/** A column of `table`, by name. */
export type ArchiveColumn<T extends ArchiveTable> = Extract<keyof ArchiveRow<T>, string>;

/** Which rows of a table to read; every bound is optional. */
export interface ArchiveQuery<T extends ArchiveTable> {
  /** Rows dated (by the table's dated column) at or after this, in Unix milliseconds. */
  from?: number;
  /** Rows dated before this, in Unix milliseconds. */
  to?: number;
  /** Rows whose columns hold exactly these values (times in Unix milliseconds). */
  equals?: Partial<Record<ArchiveColumn<T>, string | number>>;
  /** Sorts by this column (default: the dated column), ties by the dated column and `seq`. */
  orderBy?: ArchiveColumn<T>;
  descending?: boolean;
  limit?: number;
}

/** What one table holds. Counts are of complete files; times and days are null while it has no row. */
export interface TableStats {
  table: ArchiveTable;
  files: number;
  rows: number;
  bytes: number;
  days: number;
  firstDay: string | null;
  lastDay: string | null;
  /** The dated column of the oldest and the newest row, in Unix milliseconds. */
  firstTime: number | null;
  lastTime: number | null;
  /** Distinct (ticker, day) pairs, for tables with a ticker column (else null). */
  marketDays: number | null;
  /** What a market's day costs on disk: bytes / marketDays, rounded (null without any). */
  bytesPerMarketDay: number | null;
}

export interface ExportOptions {
  from: number;
  to: number;
  outDir: string;
  /** Default: every table. */
  tables?: readonly ArchiveTable[];
}

export interface ExportedTable {
  table: ArchiveTable;
  file: string;
  rows: number;
}

/** Columns that break ties after the dated one, when a table has them: frames of one instant by their order. */
const TIE_BREAKERS = ["seq"];
/** Times a query lists and reads again when files it listed went before DuckDB opened them. */
const QUERY_ATTEMPTS = 5;

/** The days a query reads, inclusive (YYYY-MM-DD); unbounded where unset. */
interface DayRange {
  first?: string;
  last?: string;
}

/** A complete file a query reads. */
interface ListedFile {
  day: string;
  path: string;
}

export class ArchiveReader {
  private constructor(
    private readonly dir: string,
    private readonly database: DuckDBInstance,
  ) {}

  /** Opens a reader of the archive in `dir` (which may not exist yet: every table reads empty). */
  static async open(dir: string): Promise<ArchiveReader> {
    const database = await openDuckDb();
    return new ArchiveReader(path.resolve(dir), database);
  }

  /** Rows of `table`, times and integers as numbers, JSON as its text. */
  async rows<T extends ArchiveTable>(table: T, query: ArchiveQuery<T> = {}): Promise<ArchiveRow<T>[]> {
    checkTable(table);
    const columns = columnsOf(table);
    const selected = columns.map(([name, kind]) =>
      kind === "time" ? `epoch_ms(${sqlIdentifier(name)}) AS ${sqlIdentifier(name)}` : sqlIdentifier(name),
    );
    selectRows(table, selected, query, []);
    const result = await this.withFiles(table, queryDays(query), (files) => {
      const { sql, values } = selectRows(table, selected, query, files);
      return this.withConnection((connection) => connection.runAndReadAll(sql, values));
    });
    return result.getRowObjects().map((row) => {
      const converted: Record<string, string | number | null> = {};
      for (const [name] of columns) converted[name] = fromDuckDB(row[name] ?? null);
      return converted as ArchiveRow<T>;
    });
  }

  /** What each table holds: files, rows, bytes, days and the span of its rows' times. */
  async stats(): Promise<TableStats[]> {
    const stats: TableStats[] = [];
    for (const table of ARCHIVE_TABLE_NAMES) stats.push(await this.tableStats(table));
    return stats;
  }

  /**
   * Writes the rows of [from, to) of each table to `<outDir>/<table>.parquet` (zstd), ordered by time;
   * each file appears complete or not at all. Every table is written, with no row if none.
   */
  async export(options: ExportOptions): Promise<ExportedTable[]> {
    const tables = options.tables ?? ARCHIVE_TABLE_NAMES;
    for (const table of tables) checkTable(table);
    checkTime("from", options.from);
    checkTime("to", options.to);
    await fs.mkdir(options.outDir, { recursive: true });
    const written: ExportedTable[] = [];
    const window = { from: options.from, to: options.to };
    for (const table of tables) {
      const file = path.join(options.outDir, `${table}.parquet`);
      const selected = columnsOf(table).map(([name]) => sqlIdentifier(name));
      const rows = await this.withFiles(table, queryDays(window), (files) => {
        const { sql, values } = selectRows(table, selected, window, files);
        return this.copyTo(file, sql, values);
      });
      written.push({ table, file, rows });
    }
    return written;
  }

  close(): void {
    this.database.closeSync();
  }

  /** Writes a query's rows to `file` (zstd), which appears complete or not at all; answers how many. */
  private copyTo(file: string, sql: string, values: DuckDBValue[]): Promise<number> {
    return this.withConnection(async (connection) => {
      const tmp = file + TMP_SUFFIX;
      try {
        const result = await connection.run(
          `COPY (${sql}) TO $${values.length + 1} (FORMAT parquet, COMPRESSION zstd)`,
          [...values, tmp],
        );
        await fs.rename(tmp, file);
        return Number(result.rowsChanged);
      } catch (error) {
        await fs.rm(tmp, { force: true }).catch(() => {});
        throw error;
      }
    });
  }

  private async tableStats(table: ArchiveTable): Promise<TableStats> {
    const dated = sqlIdentifier(datedColumn(table));
    const hasTicker = Object.hasOwn(ARCHIVE_TABLES[table].columns, "ticker");
    const { files, bytes, summary } = await this.withFiles(table, {}, async (files) => {
      // A file gone since the listing fails this attempt, as DuckDB would.
      const sizes = await Promise.all(files.map(async (file) => (await fs.stat(file.path)).size));
      const params = new Parameters();
      const source = sourceSql(table, files, params);
      const marketDays = hasTicker
        ? "(SELECT count(*) FROM (SELECT DISTINCT ticker, day FROM listed WHERE ticker IS NOT NULL AND ticker <> ''))"
        : "NULL";
      const [summary] = await this.withConnection(async (connection) => {
        const result = await connection.runAndReadAll(
          `WITH listed AS (SELECT * FROM ${source})
          SELECT count(*) AS rows, epoch_ms(min(${dated})) AS first, epoch_ms(max(${dated})) AS last,
            ${marketDays} AS market_days FROM listed`,
          params.values,
        );
        return result.getRowObjects();
      });
      return { files, bytes: sizes.reduce((sum, size) => sum + size, 0), summary };
    });
    const days = [...new Set(files.map((file) => file.day))].sort();
    const marketDays = toNumberOrNull(summary?.market_days ?? null);
    return {
      table,
      files: files.length,
      rows: toNumberOrNull(summary?.rows ?? null) ?? 0,
      bytes,
      days: days.length,
      firstDay: days[0] ?? null,
      lastDay: days.at(-1) ?? null,
      firstTime: toNumberOrNull(summary?.first ?? null),
      lastTime: toNumberOrNull(summary?.last ?? null),
      marketDays,
      bytesPerMarketDay: marketDays ? Math.round(bytes / marketDays) : null,
    };
  }

  /**
   * Runs `read` over the complete files of `table` in `days`, each row in one file (see the header);
   * again, over a new listing, when it fails and some of the files it was given are gone.
   */
  private async withFiles<R>(
    table: ArchiveTable,
    days: DayRange,
    read: (files: readonly ListedFile[]) => Promise<R>,
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const files = await this.listFiles(table, days);
      try {
        return await read(files);
      } catch (error) {
        if (attempt >= QUERY_ATTEMPTS || !(await anyGone(files))) throw error;
      }
    }
  }

  private async listFiles(table: ArchiveTable, { first, last }: DayRange): Promise<ListedFile[]> {
    const files: ListedFile[] = [];
    for (const { day, path: dayPath } of await listDays(this.dir, table)) {
      if ((first !== undefined && day < first) || (last !== undefined && day > last)) continue;
      for (const name of await readableFiles(dayPath)) files.push({ day, path: path.join(dayPath, name) });
    }
    return files;
  }

  /** A connection of its own for each query (they cost microseconds), so queries run side by side. */
  private async withConnection<R>(use: (connection: DuckDBConnection) => Promise<R>): Promise<R> {
    const connection = await this.database.connect();
    try {
      return await use(connection);
    } finally {
      connection.closeSync();
    }
  }
}

function checkTable(table: string): asserts table is ArchiveTable {
  if (!isArchiveTable(table)) throw new UnknownArchiveTableError(table);
}

function checkTime(bound: string, ms: unknown): asserts ms is number {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    throw new InvalidArchiveQueryError(`${bound} must be a time in Unix milliseconds, not ${String(ms)}`);
  }
}

function checkColumn(table: ArchiveTable, column: string): void {
  if (!Object.hasOwn(ARCHIVE_TABLES[table].columns, column))
    throw new UnknownArchiveColumnError(table, column);
}

/** Whether some of `files` no longer exist. */
async function anyGone(files: readonly ListedFile[]): Promise<boolean> {
  const gone = await Promise.all(
    files.map((file) =>
      fs.access(file.path).then(
        () => false,
        (error: NodeJS.ErrnoException) => error.code === "ENOENT",
      ),
    ),
  );
  return gone.includes(true);
}

/** The days a query's window covers (its bounds checked), for the listing. */
function queryDays(query: { from?: number; to?: number }): DayRange {
  const days: DayRange = {};
  if (query.from !== undefined) {
    checkTime("from", query.from);
    days.first = dayOf(Math.ceil(query.from));
  }
  if (query.to !== undefined) {
    checkTime("to", query.to);
    days.last = dayOf(Math.ceil(query.to) - 1);
  }
  return days;
}

/**
 * A subquery of `files`' rows: the declared columns and the Hive `day`, or the same columns with no
 * row when there is no file (read_parquet refuses an empty list).
 */
function sourceSql(table: ArchiveTable, files: readonly ListedFile[], params: Parameters): string {
  const columns = columnsOf(table);
  if (files.length === 0) {
    const typed = columns.map(
      ([name, kind]) => `CAST(NULL AS ${PARQUET_TYPES[kind]}) AS ${sqlIdentifier(name)}`,
    );
    return `(SELECT CAST(NULL AS DATE) AS day, ${typed.join(", ")} WHERE false)`;
  }
  const names = columns.map(([name]) => sqlIdentifier(name));
  const list = params.add(listValue(files.map((file) => file.path)));
  return `(SELECT day, ${names.join(", ")} FROM read_parquet(${list},
    hive_partitioning = true, union_by_name = true, hive_types = {'day': DATE}))`;
}

/** Collects a statement's bound values, answering each one's placeholder. */
class Parameters {
  readonly values: DuckDBValue[] = [];

  add(value: DuckDBValue): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** A whole number as a BIGINT: a JS bigint alone binds as HUGEINT, which epoch_ms does not take. */
  bigint(value: number): string {
    return `CAST(${this.add(BigInt(value))} AS BIGINT)`;
  }
}

/**
 * A SELECT of `selected` from the rows of `files` that `query` asks for, its values bound, never
 * spliced in; throws on a query that asks for what `table` has not.
 */
function selectRows<T extends ArchiveTable>(
  table: T,
  selected: readonly string[],
  query: ArchiveQuery<T>,
  files: readonly ListedFile[],
): { sql: string; values: DuckDBValue[] } {
  const params = new Parameters();
  const source = sourceSql(table, files, params);
  const conditions = [
    ...windowConditions(table, query, params),
    ...equalsConditions(table, query.equals, params),
  ];
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(" AND ")}` : "";
  const limit = query.limit === undefined ? "" : ` LIMIT ${params.bigint(checkedLimit(query.limit))}`;
  return {
    sql: `SELECT ${selected.join(", ")} FROM ${source}${where} ORDER BY ${orderBy(table, query)}${limit}`,
    values: params.values,
  };
}

/**
 * [from, to) on the dated column, and the same on the Hive `day` (the listing already reads only
 * the days of the window).
 */
function windowConditions<T extends ArchiveTable>(
  table: T,
  query: ArchiveQuery<T>,
  params: Parameters,
): string[] {
  const dated = sqlIdentifier(datedColumn(table));
  const conditions: string[] = [];
  if (query.from !== undefined) {
    checkTime("from", query.from);
    const from = Math.ceil(query.from);
    conditions.push(
      `day >= CAST(${params.add(dayOf(from))} AS DATE)`,
      `${dated} >= epoch_ms(${params.bigint(from)})`,
    );
  }
  if (query.to !== undefined) {
    checkTime("to", query.to);
    const to = Math.ceil(query.to);
    conditions.push(
      `day <= CAST(${params.add(dayOf(to - 1))} AS DATE)`,
      `${dated} < epoch_ms(${params.bigint(to)})`,
    );
  }
  return conditions;
}

function equalsConditions<T extends ArchiveTable>(
  table: T,
  equals: ArchiveQuery<T>["equals"],
  params: Parameters,
): string[] {
  const conditions: string[] = [];
  for (const [column, value] of Object.entries(equals ?? {}) as [string, string | number | undefined][]) {
    if (value === undefined) continue;
    checkColumn(table, column);
    const kind = (ARCHIVE_TABLES[table].columns as Record<string, string>)[column];
    const name = sqlIdentifier(column);
    if (kind === "text" || kind === "json") {
      conditions.push(`${name} = ${params.add(String(value))}`);
    } else if (kind === "float") {
      conditions.push(`${name} = ${params.add(checkedNumber(column, value))}`);
    } else {
      const int = checkedNumber(column, value);
      if (!Number.isSafeInteger(int)) throw new InvalidArchiveQueryError(`${column} must be a whole number`);
      conditions.push(
        kind === "time" ? `${name} = epoch_ms(${params.bigint(int)})` : `${name} = ${params.bigint(int)}`,
      );
    }
  }
  return conditions;
}

function orderBy<T extends ArchiveTable>(table: T, query: ArchiveQuery<T>): string {
  const first = query.orderBy ?? datedColumn(table);
  checkColumn(table, first);
  const direction = query.descending ? " DESC" : "";
  const ties = [datedColumn(table), ...TIE_BREAKERS].filter(
    (column) => column !== first && Object.hasOwn(ARCHIVE_TABLES[table].columns, column),
  );
  return [first, ...new Set(ties)].map((column) => `${sqlIdentifier(column)}${direction}`).join(", ");
}

function checkedNumber(column: string, value: string | number): number {
  const number = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(number) || (typeof value === "string" && value.trim() === "")) {
    throw new InvalidArchiveQueryError(`${column} must be a number, not ${JSON.stringify(value)}`);
  }
  return number;
}

function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new InvalidArchiveQueryError(`limit must be a whole number of rows, not ${limit}`);
  }
  return limit;
}

/** A value as rows carry it: BIGINTs (integers, times in milliseconds) as numbers, exact to 2^53. */
function fromDuckDB(value: DuckDBValue): string | number | null {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" || typeof value === "string" || value === null) return value;
  return String(value);
}

function toNumberOrNull(value: DuckDBValue): number | null {
  const converted = fromDuckDB(value);
  return typeof converted === "number" ? converted : null;
}
