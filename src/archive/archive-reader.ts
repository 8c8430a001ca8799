/**
 * Reads the archive's Parquet files, for the history routes, `oddsgate archive` and the tests: rows of
 * a table within a time window, what each table holds (`stats`), and a window written out as one
 * Parquet file per table (`export`). It never changes a file, so it reads while writers write.
 *
 * An in-memory DuckDB holds two views per table: `<table>_partitioned`, over every complete file
 * with the Hive `day` column (a time window becomes a filter on `day`, so DuckDB opens only the
 * days it covers), and `<table>`, exactly the declared columns. DuckDB expands a view's glob at each
 * query, so files written since are seen; only a table with no file at all needs another view (a
 * glob matching nothing fails), so each query first checks that its table's view fits the directory.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from "@duckdb/node-api";
import { InvalidArchiveQueryError, UnknownArchiveColumnError, UnknownArchiveTableError } from "./errors.js";
import {
  columnsOf,
  datedColumn,
  dayOf,
  hasFiles,
  listFiles,
  PARQUET_TYPES,
  sqlIdentifier,
  sqlString,
  TMP_SUFFIX,
  tableGlob,
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

export class ArchiveReader {
  /** Whether each table's views read files (true) or stand empty (false); unset until made. */
  private readonly viewsReadFiles = new Map<ArchiveTable, boolean>();
  /** View changes one at a time: DuckDB refuses concurrent changes of one catalogue entry. */
  private viewChanges: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly database: DuckDBInstance,
  ) {}

  /** Opens a reader of the archive in `dir` (which may not exist yet: every table reads empty). */
  static async open(dir: string): Promise<ArchiveReader> {
    const database = await DuckDBInstance.create(":memory:", { autoinstall_known_extensions: "false" });
    const reader = new ArchiveReader(path.resolve(dir), database);
    await reader.refresh();
    return reader;
  }

  /** Fits every table's views to its directory now (queries do this for their own tables). */
  async refresh(): Promise<void> {
    for (const table of ARCHIVE_TABLE_NAMES) await this.fitViews(table);
  }

  /** Rows of `table`, times and integers as numbers, JSON as its text. */
  async rows<T extends ArchiveTable>(table: T, query: ArchiveQuery<T> = {}): Promise<ArchiveRow<T>[]> {
    checkTable(table);
    const columns = columnsOf(table);
    const selected = columns.map(([name, kind]) =>
      kind === "time" ? `epoch_ms(${sqlIdentifier(name)}) AS ${sqlIdentifier(name)}` : sqlIdentifier(name),
    );
    const { sql, values } = selectRows(table, selected, query);
    await this.fitViews(table);
    const result = await this.withConnection((connection) => connection.runAndReadAll(sql, values));
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
    for (const table of tables) {
      const file = path.join(options.outDir, `${table}.parquet`);
      const selected = columnsOf(table).map(([name]) => sqlIdentifier(name));
      const { sql, values } = selectRows(table, selected, { from: options.from, to: options.to });
      await this.fitViews(table);
      const rows = await this.withConnection(async (connection) => {
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
      written.push({ table, file, rows });
    }
    return written;
  }

  close(): void {
    this.database.closeSync();
  }

  private async tableStats(table: ArchiveTable): Promise<TableStats> {
    const files = await listFiles(this.dir, table);
    const days = [...new Set(files.map((file) => file.day))].sort();
    const bytes = files.reduce((sum, file) => sum + file.bytes, 0);
    await this.fitViews(table);
    const view = sqlIdentifier(`${table}_partitioned`);
    const dated = sqlIdentifier(datedColumn(table));
    const hasTicker = Object.hasOwn(ARCHIVE_TABLES[table].columns, "ticker");
    const [summary] = await this.withConnection(async (connection) => {
      const marketDays = hasTicker
        ? `(SELECT count(*) FROM (SELECT DISTINCT ticker, day FROM ${view} WHERE ticker IS NOT NULL AND ticker <> ''))`
        : "NULL";
      const result = await connection.runAndReadAll(
        `SELECT count(*) AS rows, epoch_ms(min(${dated})) AS first, epoch_ms(max(${dated})) AS last,
          ${marketDays} AS market_days FROM ${view}`,
      );
      return result.getRowObjects();
    });
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

  /** Makes `table`'s views read its files, or stand empty while it has none. */
  private async fitViews(table: ArchiveTable): Promise<void> {
    const readFiles = await hasFiles(this.dir, table);
    if (this.viewsReadFiles.get(table) === readFiles) return;
    const change = this.viewChanges.then(async () => {
      if (this.viewsReadFiles.get(table) === readFiles) return;
      await this.withConnection(async (connection) => {
        await connection.run(partitionedViewSql(this.dir, table, readFiles));
        await connection.run(publicViewSql(table));
      });
      this.viewsReadFiles.set(table, readFiles);
    });
    this.viewChanges = change.catch(() => {});
    await change;
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

/** The files' columns with the Hive `day`, or the same columns with no row while there is no file. */
function partitionedViewSql(dir: string, table: ArchiveTable, readFiles: boolean): string {
  const view = sqlIdentifier(`${table}_partitioned`);
  const columns = columnsOf(table);
  if (!readFiles) {
    const typed = columns.map(
      ([name, kind]) => `CAST(NULL AS ${PARQUET_TYPES[kind]}) AS ${sqlIdentifier(name)}`,
    );
    return `CREATE OR REPLACE VIEW ${view} AS SELECT CAST(NULL AS DATE) AS day, ${typed.join(", ")} WHERE false`;
  }
  const names = columns.map(([name]) => sqlIdentifier(name));
  return `CREATE OR REPLACE VIEW ${view} AS SELECT day, ${names.join(", ")}
    FROM read_parquet(${sqlString(tableGlob(dir, table))},
      hive_partitioning = true, union_by_name = true, hive_types = {'day': DATE})`;
}

function publicViewSql(table: ArchiveTable): string {
  const names = columnsOf(table).map(([name]) => sqlIdentifier(name));
  return `CREATE OR REPLACE VIEW ${sqlIdentifier(table)} AS SELECT ${names.join(", ")} FROM ${sqlIdentifier(`${table}_partitioned`)}`;
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

/** A SELECT of `selected` from `table`'s rows that `query` asks for, its values bound, never spliced in. */
function selectRows<T extends ArchiveTable>(
  table: T,
  selected: readonly string[],
  query: ArchiveQuery<T>,
): { sql: string; values: DuckDBValue[] } {
  const params = new Parameters();
  const conditions = [
    ...windowConditions(table, query, params),
    ...equalsConditions(table, query.equals, params),
  ];
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(" AND ")}` : "";
  const limit = query.limit === undefined ? "" : ` LIMIT ${params.bigint(checkedLimit(query.limit))}`;
  const view = sqlIdentifier(`${table}_partitioned`);
  return {
    sql: `SELECT ${selected.join(", ")} FROM ${view}${where} ORDER BY ${orderBy(table, query)}${limit}`,
    values: params.values,
  };
}

/**
 * [from, to) on the dated column, and the same on the Hive `day`, which is what spares DuckDB the
 * files of other days (it cannot infer the day from a bound on the time).
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
