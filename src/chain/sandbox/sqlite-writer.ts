/**
 * Commits the sandbox chain's batches to SQLite from a worker thread with its own connection to the
 * same database file, so that SQLite's work (and the WAL's fsyncs at checkpoints) runs beside the
 * main thread's transaction execution instead of blocking it. A batch is written in one SQLite
 * transaction in WAL mode with synchronous=NORMAL, as on the main connection (together with the
 * batches sent while the one before was being written): when `commit` resolves, the batch survives a
 * crash of the process. Commits may be sent before the previous one has finished (they are written
 * in the order sent); once one fails, it and those written with it fail, and the worker refuses every
 * commit after them until it is told to resume, because those were executed on top of their effects.
 * Each batch first proves that this process still holds the chain's lease (see lease.ts), on the
 * worker's connection, so nothing is written once another process has taken over. The worker is
 * plain JavaScript (evaluated, not loaded from a file) so that it runs the same under tsx, vitest
 * and the compiled build.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import {
  type CommitBatch,
  type CommitStatement,
  commitStatementText,
  encodeBatch,
  HISTORY_MERGE_EVERY,
  mergeHistoryStatementTexts,
  VALUES_PER_ROW,
} from "./commit-batch.js";
import { ChainLeaseLostError, type LeaseFence, SQLITE_NOW_MS } from "./lease.js";

// Runs in the worker. Rows arrive as flat arrays of column values, already encoded: strings and
// numbers cost little to copy between threads, byte arrays and nested objects much more.
const WORKER_SOURCE = `
const { parentPort, receiveMessageOnPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = " + workerData.checkpointPages);
const sql = workerData.statements;
const upsert = db.prepare(sql.upsertAccount);
const remove = db.prepare(sql.deleteAccount);
const insert = db.prepare(sql.insertTransaction);
// History rows go in many at a time: a transaction names a dozen keys, and each statement run has a
// cost.
const MANY = workerData.rowsPerRun;
const oneHistoryRow = db.prepare(sql.insertHistoryRow);
const manyHistoryRows = db.prepare(sql.insertHistoryRows);
const mergeHistory = sql.mergeHistory.map((text) => db.prepare(text));
function runInGroups(values, perRow, one, many) {
  const group = MANY * perRow;
  let i = 0;
  for (; i + group <= values.length; i += group) many.run(values.slice(i, i + group));
  for (; i < values.length; i += perRow) one.run(values.slice(i, i + perRow));
}
const fence = db.prepare(
  'update "chain_lease" set "expires_at" = ' + workerData.nowMs + ' + ? where "id" = 1 and "holder" = ? and "epoch" = ?',
);
class LeaseLost extends Error {}
function write(batch, lease) {
  if (fence.run(lease.ttlMs, lease.holder, lease.epoch).changes !== 1) {
    throw new LeaseLost("another instance took over the sandbox chain's lease (this holder " + lease.holder + ", epoch " + lease.epoch + ")");
  }
  const a = batch.accounts;
  for (let i = 0; i < a.length; i += 5) upsert.run(a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4]);
  for (const address of batch.deletions) remove.run(address);
  const t = batch.transactions;
  for (let i = 0; i < t.length; i += sql.transactionValues) insert.run(t.slice(i, i + sql.transactionValues));
  runInGroups(batch.history, sql.historyValues, oneHistoryRow, manyHistoryRows);
  if (batch.mergeBelow !== null) for (const statement of mergeHistory) statement.run(batch.mergeBelow);
}
// The commits that queued up while the last one was written go in one SQLite transaction: a page
// that several of them touch is written once, not once per commit.
const writeAll = db.transaction((messages) => {
  for (const message of messages) write(message.batch, message.lease);
});
let refusing = false;
function handle(message) {
  if (message.kind === "close") {
    db.close();
    parentPort.close();
    return;
  }
  if (message.kind === "resume") {
    refusing = false;
    return;
  }
  if (refusing) {
    parentPort.postMessage({ id: message.id, ok: false, message: "an earlier commit failed" });
    return;
  }
  const commits = [message];
  let next = receiveMessageOnPort(parentPort);
  while (next && next.message.kind === undefined) {
    commits.push(next.message);
    next = receiveMessageOnPort(parentPort);
  }
  try {
    writeAll(commits);
    for (const commit of commits) parentPort.postMessage({ id: commit.id, ok: true });
  } catch (error) {
    refusing = true;
    for (const commit of commits) {
      parentPort.postMessage({
        id: commit.id,
        ok: false,
        message: String((error && error.message) || error),
        leaseLost: error instanceof LeaseLost,
      });
    }
  }
  if (next) handle(next.message);
}
parentPort.on("message", handle);
`;

const BUSY_TIMEOUT_MS = 5000;
// WAL pages between the writer's checkpoints (SQLite's default is 1,000). A checkpoint copies each
// page once however many commits rewrote it, and the chain rewrites the same index and account
// pages in every commit: at 16,000 (a WAL of up to 64 MiB) the writer spends ~8 µs less a transfer
// (docs/performance.md). Commits are as durable either way: each is in the WAL when it resolves.
export const WRITER_CHECKPOINT_PAGES = 16_000;
// Rows per run of the history statement.
const ROWS_PER_RUN = 64;

// The worker's statements, from the text the store's own commits use.
function workerStatements() {
  const text = (kind: CommitStatement, rows: number) => commitStatementText(kind, rows, () => "?");
  return {
    upsertAccount: text("upsertAccounts", 1),
    deleteAccount: text("deleteAccounts", 1),
    insertTransaction: text("insertTransactions", 1),
    transactionValues: VALUES_PER_ROW.insertTransactions,
    insertHistoryRow: text("insertHistory", 1),
    insertHistoryRows: text("insertHistory", ROWS_PER_RUN),
    historyValues: VALUES_PER_ROW.insertHistory,
    mergeHistory: mergeHistoryStatementTexts(() => "?", "sqlite"),
  };
}

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

type Reply = { id: number; ok: true } | { id: number; ok: false; message: string; leaseLost: boolean };

/** The worker thread that writes the chain's commits to SQLite (see the module comment). */
export class SqliteWriter {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;

  private readonly historyMergeEvery: number;

  constructor(file: string, options: { historyMergeEvery?: number } = {}) {
    this.historyMergeEvery = options.historyMergeEvery ?? HISTORY_MERGE_EVERY;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        driver,
        busyTimeoutMs: BUSY_TIMEOUT_MS,
        checkpointPages: WRITER_CHECKPOINT_PAGES,
        nowMs: SQLITE_NOW_MS,
        statements: workerStatements(),
        rowsPerRun: ROWS_PER_RUN,
      },
    });
    // Only a commit in flight keeps the process alive.
    this.worker.unref();
    this.worker.on("message", (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (reply.ok) waiting.resolve();
      else if (reply.leaseLost) waiting.reject(new ChainLeaseLostError(reply.message));
      else waiting.reject(new Error(`sandbox chain commit failed: ${reply.message}`));
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    this.worker.on("error", (error) => fail(error));
    this.worker.on("exit", () => fail(new Error("the sandbox chain's SQLite writer stopped")));
  }

  /** Whether the writer can take commits (false once its thread has failed or stopped). */
  get usable(): boolean {
    return this.failure === null;
  }

  /**
   * Writes `batch` in one SQLite transaction, after the batches sent before it, if `lease` still
   * holds (else it fails with ChainLeaseLostError); resolves once it is committed. After a failed
   * commit, every later one fails too until `resume`.
   */
  commit(batch: CommitBatch, lease: LeaseFence): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const encoded = encodeBatch(batch, this.historyMergeEvery);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ id, batch: encoded, lease });
    });
  }

  /** Accepts commits again after a failure (the state they build on has been reloaded). */
  resume(): void {
    if (!this.failure) this.worker.postMessage({ kind: "resume" });
  }

  /** Closes the worker's connection once the commits already sent are done. */
  async close(): Promise<void> {
    if (this.failure) return;
    this.failure = new Error("the sandbox chain's SQLite writer is closed");
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ kind: "close" });
    await exited;
  }
}
