/**
 * The archive's writer: rows are buffered in memory per table and written every `flushMs` (and on
 * close) as Parquet files, one per table and UTC day of the rows' dated column (see layout.ts).
 * A private in-memory DuckDB does the writing: the rows go into a staging table through its Appender,
 * then a COPY writes them zstd-compressed, times as Parquet timestamps.
 *
 * Archiving must never hurt the venue: `append` only pushes onto an array, a buffer that grows past
 * four flushes' worth (the disk full, the directory gone) drops further rows and counts them rather
 * than growing without bound, and a failed write keeps its rows for the next flush. A file appears
 * under its final name only complete (written as `.tmp`, synced, renamed), so a crash at any moment
 * leaves nothing a reader would choke on; `open` sweeps up the `.tmp` files of a killed writer.
 *
 * About every `compactEveryMs`, after a flush and before the next can start (so never beside its own
 * writes), the writer merges each day's files of its own instance into one once it has more than
 * `compactAbove` there, leaving files past `compactMaxBytes` as they are (compaction.ts: crash-safe,
 * and readers see every row once throughout).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { every, type Repeating } from "../every.js";
import {
  COMPACTION_GAP_MS,
  type CompactedDay,
  compactDay,
  type RecoveredJournal,
  recoverCompactions,
} from "./compaction.js";
import { openDuckDb } from "./duckdb.js";
import { ArchiveFlushError, type FailedWrite } from "./errors.js";
import {
  columnsOf,
  DAY_MS,
  datedColumn,
  dayDir,
  dayOf,
  isDatable,
  listDays,
  removeDaysBefore,
  removeStaleTmpFiles,
  sqlIdentifier,
  syncFile,
  TMP_SUFFIX,
} from "./layout.js";
import {
  ARCHIVE_TABLE_NAMES,
  type ArchiveRow,
  type ArchiveSink,
  type ArchiveTable,
  type ColumnKind,
} from "./tables.js";

export interface ArchiveLogger {
  error(object: object, message: string): void;
  warn?(object: object, message: string): void;
}

export interface ParquetArchiveOptions {
  /** The archive's directory; instances sharing it each write their own files. */
  dir: string;
  /** How often buffered rows are written. */
  flushMs: number;
  /** Days of files kept (by their day's name); 0 or unset keeps every day. */
  retentionDays?: number;
  /** Rows of one table buffered before a flush starts early (default 50 000); 4× that are held at most. */
  maxBufferedRows?: number;
  /**
   * Names this writer's files, unique among the instances sharing `dir` (default: a random id). A name
   * kept across restarts lets a restarted writer compact the files its previous run wrote.
   */
  instance?: string;
  /** How often, at most, the writer compacts its files (default 10 minutes); 0: only when compact() is called. */
  compactEveryMs?: number;
  /** A day is compacted once the writer's instance has more files than this in it (default 12). */
  compactAbove?: number;
  /**
   * Files of this many bytes or more are not merged again (default 16 MiB): a day that big ends as a
   * few files of about this size, not one file read, sorted and rewritten whole at every compaction.
   */
  compactMaxBytes?: number;
  logger?: ArchiveLogger;
  /** The clock, in Unix milliseconds (tests move it for retention). */
  now?: () => number;
}

type Row = Readonly<Record<string, unknown>>;

/** A table's rows waiting for a flush, and how many of its rows a running flush holds. */
interface TableBuffer {
  rows: Row[];
  writing: number;
  /** Set while rows are being dropped, so the drop is logged once, not once per append. */
  overflowing: boolean;
}

const DEFAULT_MAX_BUFFERED_ROWS = 50_000;
/** Buffered rows past `maxBufferedRows` times this are dropped: room for a few slow or failed flushes. */
const HELD_ROWS_FACTOR = 4;
/** How often the writer looks after the directory: killed writers' leftovers, expired days. */
const MAINTENANCE_EVERY_MS = 3_600_000;
/** A `.tmp` this old is no write in progress (a flush takes seconds at most): a killed writer's. */
const STALE_TMP_MS = 60_000;
/** Another instance's compaction journal this old is no compaction in progress (those take seconds). */
const STALE_JOURNAL_MS = 60_000;
const DEFAULT_COMPACT_EVERY_MS = 600_000;
const DEFAULT_COMPACT_ABOVE = 12;
const DEFAULT_COMPACT_MAX_BYTES = 16 * 1024 * 1024;
/** Rows staged through one appender: ~10 ms of the event loop for catalogue rows of ~1 KB. */
const ROWS_PER_APPENDER = 2_000;
const INSTANCE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** How rows are staged before the COPY: times as the milliseconds they arrive in, converted by the COPY. */
const STAGING_TYPES: Readonly<Record<ColumnKind, string>> = {
  text: "VARCHAR",
  json: "VARCHAR",
  int: "BIGINT",
  float: "DOUBLE",
  time: "BIGINT",
};
/** Microseconds of a Parquet timestamp must fit 64 bits; Date's own range is well inside. */
const MAX_TIME_MS = 8.64e15;
const INT64_LIMIT = 2 ** 63;

/** Distinguishes the files of every writer of this process, whatever instance names they were given. */
let fileCounter = 0;

export class ParquetArchive implements ArchiveSink {
  private readonly buffers = new Map<ArchiveTable, TableBuffer>(
    ARCHIVE_TABLE_NAMES.map((table) => [table, { rows: [], writing: 0, overflowing: false }]),
  );
  private readonly maxBufferedRows: number;
  private readonly instance: string;
  private readonly now: () => number;
  private readonly timer: Repeating;
  private droppedRows = 0;
  /** The flush waiting to start, which every flush() call until it starts joins. */
  private queued: Promise<void> | undefined;
  /** The last flush started, settled either way: the next waits for it, so writes never overlap. */
  private previous: Promise<void> = Promise.resolve();
  private flushesPending = 0;
  /** After a failed flush, a full buffer waits for the timer rather than retrying at every append. */
  private lastFlushFailed = false;
  private lastMaintenanceAt: number;
  private lastCompactionAt: number;
  private readonly compactEveryMs: number;
  private readonly compactAbove: number;
  private readonly compactMaxBytes: number;
  /** The days written since they were last compacted or found too few files to compact, by `<table>/<day>`. */
  private readonly touched = new Map<string, { table: ArchiveTable; day: string }>();
  /** Whether the next compaction looks at every day, for files an earlier run of this instance left. */
  private scanAllDays = true;
  /** When each day's last compaction (or recovery) by this writer ended, in performance.now() time. */
  private readonly compactedAt = new Map<string, number>();
  private readonly loggedFailures = new WeakSet<object>();
  private closing: Promise<void> | undefined;
  private closed = false;

  /** DuckDB, loaded with the first write: a venue that has archived nothing yet pays neither its load nor its memory. */
  private duck: Promise<{ database: DuckDBInstance; connection: DuckDBConnection }> | undefined;

  private constructor(
    private readonly options: ParquetArchiveOptions,
    instance: string,
  ) {
    this.maxBufferedRows = options.maxBufferedRows ?? DEFAULT_MAX_BUFFERED_ROWS;
    this.instance = instance;
    this.now = options.now ?? Date.now;
    this.compactEveryMs = options.compactEveryMs ?? DEFAULT_COMPACT_EVERY_MS;
    this.compactAbove = options.compactAbove ?? DEFAULT_COMPACT_ABOVE;
    this.compactMaxBytes = options.compactMaxBytes ?? DEFAULT_COMPACT_MAX_BYTES;
    this.lastMaintenanceAt = this.now();
    this.lastCompactionAt = this.now();
    this.timer = every(options.flushMs, () => this.flush(), { onError: (error) => this.logFailure(error) });
  }

  /**
   * Opens the archive in `options.dir` (made if missing), after finishing the compactions killed
   * writers left (this instance's, and other instances' stale ones) and sweeping leftovers (this
   * instance's, and other instances' stale ones) and expired days.
   */
  static async open(options: ParquetArchiveOptions): Promise<ParquetArchive> {
    checkOptions(options);
    const instance = options.instance ?? randomBytes(4).toString("hex");
    await fs.mkdir(options.dir, { recursive: true });
    const recovered = await recoverCompactions(options.dir, { instance, staleMs: STALE_JOURNAL_MS });
    await removeStaleTmpFiles(options.dir, STALE_TMP_MS, instance);
    await applyRetention(options.dir, options.retentionDays, (options.now ?? Date.now)());
    const archive = new ParquetArchive(options, instance);
    archive.noteRecovered(recovered);
    return archive;
  }

  /** Rows refused: past the buffer's bound, undatable (their dated column no time 1970–9999), or after close. */
  get dropped(): number {
    return this.droppedRows;
  }

  append<T extends ArchiveTable>(table: T, rows: readonly ArchiveRow<T>[]): void {
    const buffer = this.buffers.get(table);
    if (!buffer || this.closing) {
      this.droppedRows += rows.length;
      return;
    }
    const dated = datedColumn(table);
    const room = this.maxBufferedRows * HELD_ROWS_FACTOR - buffer.rows.length - buffer.writing;
    let accepted = 0;
    let full = false;
    for (const row of rows as readonly Row[]) {
      if (!isDatable(row[dated])) continue;
      if (accepted >= room) {
        full = true;
        continue;
      }
      buffer.rows.push(row);
      accepted++;
    }
    this.droppedRows += rows.length - accepted;
    this.noteOverflow(table, buffer, full);
    if (buffer.rows.length >= this.maxBufferedRows) this.flushEarly();
  }

  /**
   * Writes every buffered row; rejects with an ArchiveFlushError when some could not be written (they
   * stay buffered). Never overlaps another flush: it starts once the running one has ended.
   */
  flush(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.queued) return this.queued;
    const run = this.previous.then(() => {
      this.queued = undefined;
      return this.writeBuffered();
    });
    this.queued = run;
    this.flushesPending++;
    // A compaction that is due runs after the flush, before the next one starts; the flush's callers do not wait for it.
    this.previous = run
      .then(
        () => this.settleFlush(false),
        () => this.settleFlush(true),
      )
      .then(() => this.compactIfDue())
      .catch((error: unknown) => this.options.logger?.error({ err: error }, "archive: compaction failed"));
    return run;
  }

  /**
   * Merges, in every day where this instance has more than `compactAbove` files, its files into one,
   * now (between flushes, as the schedule would); answers what it merged. Rejects (an AggregateError)
   * when some day could not be compacted: that day's files stay as they were, and the next run tries again.
   */
  compact(): Promise<CompactedDay[]> {
    if (this.closing) return Promise.resolve([]);
    const run = this.previous.then(() => this.compactNow());
    this.previous = run.then(
      () => {},
      () => {},
    );
    return run.then(({ compacted, failures }) => {
      if (failures.length > 0) {
        throw new AggregateError(failures, `archive: ${failures.length} day(s) could not be compacted`);
      }
      return compacted;
    });
  }

  /** Stops the schedule, writes what is buffered and closes DuckDB; rejects like flush() when rows were lost. */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    this.timer.stop();
    try {
      await this.flush();
    } finally {
      // A compaction chained before close() ends before DuckDB closes; none starts after (`closing`).
      await this.previous;
      this.closed = true;
      const duck = await this.duck?.catch(() => undefined);
      duck?.connection.closeSync();
      duck?.database.closeSync();
    }
  }

  private connection(): Promise<DuckDBConnection> {
    this.duck ??= (async () => {
      // One thread: the writer shares the venue's cores, and a flush's few files gain nothing from more.
      const database = await openDuckDb({ threads: 1 });
      return { database, connection: await database.connect() };
    })();
    return this.duck.then((duck) => duck.connection);
  }

  private settleFlush(failed: boolean): void {
    this.flushesPending--;
    this.lastFlushFailed = failed;
  }

  private flushEarly(): void {
    if (this.flushesPending > 0 || this.lastFlushFailed) return;
    this.flush().catch((error) => this.logFailure(error));
  }

  private noteOverflow(table: ArchiveTable, buffer: TableBuffer, overflowing: boolean): void {
    if (overflowing && !buffer.overflowing) {
      this.options.logger?.warn?.(
        { table, held: buffer.rows.length + buffer.writing },
        "archive: buffer full (flushes failing or too slow); dropping rows until it drains",
      );
    }
    buffer.overflowing = overflowing;
  }

  /** Logs a flush's failure once, however many callers (the timer, a full buffer) waited on it. */
  private logFailure(error: unknown): void {
    if (typeof error === "object" && error !== null) {
      if (this.loggedFailures.has(error)) return;
      this.loggedFailures.add(error);
    }
    this.options.logger?.error({ err: error }, "archive: flush failed; its rows are kept for the next flush");
  }

  private async writeBuffered(): Promise<void> {
    const startMs = this.now();
    const failures: FailedWrite[] = [];
    for (const [table, buffer] of this.buffers) {
      if (buffer.rows.length === 0) continue;
      const rows = buffer.rows;
      buffer.rows = [];
      buffer.writing = rows.length;
      const kept: Row[] = [];
      for (const [day, dayRows] of groupByDay(rows, datedColumn(table))) {
        try {
          await this.writeDay(table, day, dayRows, startMs);
        } catch (cause) {
          failures.push({ table, day, rows: dayRows.length, cause });
          for (const row of dayRows) kept.push(row);
        }
      }
      buffer.writing = 0;
      // Rows that arrived during the write go after the kept ones, as they came.
      if (kept.length > 0) buffer.rows = kept.concat(buffer.rows);
    }
    await this.maintainHourly(startMs);
    if (failures.length > 0) throw new ArchiveFlushError(failures);
  }

  private async compactIfDue(): Promise<void> {
    if (this.compactEveryMs === 0 || this.closing) return;
    const now = this.now();
    if (now - this.lastCompactionAt < this.compactEveryMs) return;
    this.lastCompactionAt = now;
    const { failures } = await this.compactNow();
    for (const failure of failures) {
      this.options.logger?.error(
        { err: failure },
        "archive: compacting a day's files failed; they stay as they are until the next compaction",
      );
    }
  }

  /** Compacts each day written since it was last looked at (every day, the first time); never rejects. */
  private async compactNow(): Promise<{ compacted: CompactedDay[]; failures: unknown[] }> {
    const compacted: CompactedDay[] = [];
    const failures: unknown[] = [];
    if (this.scanAllDays) {
      try {
        for (const table of ARCHIVE_TABLE_NAMES) {
          for (const { day } of await listDays(this.options.dir, table)) this.touch(table, day);
        }
        this.scanAllDays = false;
      } catch (error) {
        failures.push(error);
      }
    }
    for (const [key, { table, day }] of [...this.touched]) {
      if (this.closing) break;
      try {
        // Two compactions of a day this close together could hide rows from a reader's listing (compaction.ts).
        const wait =
          (this.compactedAt.get(key) ?? Number.NEGATIVE_INFINITY) + COMPACTION_GAP_MS - performance.now();
        if (wait > 0) await sleep(wait);
        // DuckDB is loaded only for a day that has files to merge.
        const done = await compactDay(() => this.connection(), {
          dir: this.options.dir,
          table,
          day,
          instance: this.instance,
          above: this.compactAbove,
          maxBytes: this.compactMaxBytes,
          newName: () => this.newFileName(this.now()),
        });
        if (done === undefined) {
          this.touched.delete(key);
          continue;
        }
        this.compactedAt.set(key, performance.now());
        if (done === "recovered") continue;
        this.touched.delete(key);
        compacted.push(done);
      } catch (error) {
        // The day stays touched: the next run tries it again.
        failures.push(error);
      }
    }
    return { compacted, failures };
  }

  private touch(table: ArchiveTable, day: string): void {
    this.touched.set(`${table}/${day}`, { table, day });
  }

  private newFileName(startMs: number): string {
    return `${startMs}-${this.instance}-${++fileCounter}.parquet`;
  }

  private noteRecovered(recovered: readonly RecoveredJournal[]): void {
    for (const { table, day, instance, outcome } of recovered) {
      if (instance === this.instance) this.compactedAt.set(`${table}/${day}`, performance.now());
      const where = { table, day, instance, outcome };
      if (outcome === "lost") {
        this.options.logger?.error(
          where,
          "archive: a killed compaction's merged file is gone and so are some of its sources",
        );
      } else {
        this.options.logger?.warn?.(where, "archive: finished a compaction a killed writer left");
      }
    }
  }

  /** Writes one file of `table`'s rows of `day`: staged, copied to a `.tmp`, synced, renamed. */
  private async writeDay(
    table: ArchiveTable,
    day: string,
    rows: readonly Row[],
    startMs: number,
  ): Promise<void> {
    const dir = dayDir(this.options.dir, table, day);
    const file = path.join(dir, this.newFileName(startMs));
    const tmp = file + TMP_SUFFIX;
    await fs.mkdir(dir, { recursive: true });
    const connection = await this.connection();
    try {
      await this.stage(connection, table, rows);
      await connection.run(
        `COPY (SELECT ${parquetSelectList(table)} FROM staging) TO $1 (FORMAT parquet, COMPRESSION zstd)`,
        [tmp],
      );
      await syncFile(tmp);
      await fs.rename(tmp, file);
      this.touch(table, day);
    } catch (error) {
      await fs.rm(tmp, { force: true }).catch(() => {});
      throw error;
    } finally {
      await connection.run("DROP TABLE IF EXISTS staging").catch(() => {});
    }
  }

  private async stage(
    connection: DuckDBConnection,
    table: ArchiveTable,
    rows: readonly Row[],
  ): Promise<void> {
    const columns = columnsOf(table);
    const definitions = columns.map(([name, kind]) => `${sqlIdentifier(name)} ${STAGING_TYPES[kind]}`);
    await connection.run(`CREATE OR REPLACE TABLE staging (${definitions.join(", ")})`);
    // A chunk at a time, each through an appender of its own (closing it writes its rows into the
    // table), with a turn of the event loop between chunks: the daily snapshot of 50,000 markets held
    // the loop ~500 ms in one go. An appender's flush grows with the table, so none is flushed midway.
    for (let start = 0; start < rows.length; start += ROWS_PER_APPENDER) {
      if (start > 0) await setImmediate();
      const appender = await connection.createAppender("staging");
      try {
        const end = Math.min(start + ROWS_PER_APPENDER, rows.length);
        for (let index = start; index < end; index++) {
          const row = rows[index] as Row;
          for (const [name, kind] of columns) appendCell(appender, kind, row[name]);
          appender.endRow();
        }
      } finally {
        appender.closeSync();
      }
    }
  }

  /** About hourly: finishes the compactions of killed writers, sweeps their `.tmp` files, drops expired days. */
  private async maintainHourly(nowMs: number): Promise<void> {
    if (nowMs - this.lastMaintenanceAt < MAINTENANCE_EVERY_MS) return;
    this.lastMaintenanceAt = nowMs;
    try {
      const recovered = await recoverCompactions(this.options.dir, {
        instance: this.instance,
        staleMs: STALE_JOURNAL_MS,
      });
      this.noteRecovered(recovered);
      await removeStaleTmpFiles(this.options.dir, STALE_TMP_MS);
      await applyRetention(this.options.dir, this.options.retentionDays, nowMs);
    } catch (error) {
      // Not the flush's failure: its rows were written; the next hour tries again.
      this.options.logger?.error({ err: error }, "archive: looking after the archive's directory failed");
    }
  }
}

function checkOptions(options: ParquetArchiveOptions): void {
  if (!(options.flushMs > 0))
    throw new RangeError(`archive flushMs must be positive, not ${options.flushMs}`);
  const max = options.maxBufferedRows;
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    throw new RangeError(`archive maxBufferedRows must be a positive integer, not ${max}`);
  }
  const days = options.retentionDays;
  if (days !== undefined && !(Number.isSafeInteger(days) && days >= 0)) {
    throw new RangeError(`archive retentionDays must be a whole number of days, not ${days}`);
  }
  const every = options.compactEveryMs;
  if (every !== undefined && !(every >= 0)) {
    throw new RangeError(`archive compactEveryMs must be 0 or positive, not ${every}`);
  }
  const above = options.compactAbove;
  if (above !== undefined && !(Number.isSafeInteger(above) && above > 0)) {
    throw new RangeError(`archive compactAbove must be a positive integer, not ${above}`);
  }
  const maxBytes = options.compactMaxBytes;
  if (maxBytes !== undefined && !(maxBytes > 0)) {
    throw new RangeError(`archive compactMaxBytes must be positive, not ${maxBytes}`);
  }
  if (options.instance !== undefined && !INSTANCE_NAME.test(options.instance)) {
    throw new RangeError(`archive instance "${options.instance}" must be 1-64 letters, digits, _ . or -`);
  }
}

/** Deletes the days wholly older than `retentionDays` before `nowMs`: every younger row is kept. */
async function applyRetention(dir: string, retentionDays: number | undefined, nowMs: number): Promise<void> {
  if (!retentionDays) return;
  await removeDaysBefore(dir, dayOf(nowMs - retentionDays * DAY_MS));
}

function groupByDay(rows: readonly Row[], dated: string): Map<string, Row[]> {
  const days = new Map<string, Row[]>();
  let lastDayStart = Number.NaN;
  let lastRows: Row[] = [];
  for (const row of rows) {
    const ms = row[dated] as number;
    // Rows come mostly in time order: the day's bounds spare a Date per row.
    if (!(ms >= lastDayStart && ms < lastDayStart + DAY_MS)) {
      lastDayStart = ms - (ms % DAY_MS);
      const day = dayOf(ms);
      lastRows = days.get(day) ?? [];
      days.set(day, lastRows);
    }
    lastRows.push(row);
  }
  return days;
}

/** The COPY's columns: as staged, times turned from milliseconds into timestamps. */
function parquetSelectList(table: ArchiveTable): string {
  return columnsOf(table)
    .map(([name, kind]) => {
      const column = sqlIdentifier(name);
      return kind === "time" ? `epoch_ms(${column}) AS ${column}` : column;
    })
    .join(", ");
}

/**
 * Appends one value, as forgivingly as the staging type allows: a value no column of its kind can hold
 * (a missing field, a time out of range) is written as NULL, because one bad value must not fail its
 * whole file flush after flush.
 */
function appendCell(appender: DuckDBAppender, kind: ColumnKind, value: unknown): void {
  const staged = stagedValue(kind, value);
  if (staged === undefined) appender.appendNull();
  else if (typeof staged === "string") appender.appendVarchar(staged);
  else if (typeof staged === "bigint") appender.appendBigInt(staged);
  else appender.appendDouble(staged);
}

function stagedValue(kind: ColumnKind, value: unknown): string | bigint | number | undefined {
  if (value === null || value === undefined) return undefined;
  switch (kind) {
    case "text":
      return typeof value === "string" ? value : String(value);
    case "json":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "float":
      return typeof value === "number" ? value : undefined;
    case "int":
      return toInt64(value, INT64_LIMIT);
    case "time":
      return toInt64(value, MAX_TIME_MS);
  }
}

function toInt64(value: unknown, limit: number): bigint | undefined {
  if (typeof value === "bigint") return value < limit && value >= -limit ? value : undefined;
  if (typeof value !== "number" || !(Math.abs(value) < limit)) return undefined;
  return BigInt(Math.trunc(value));
}
