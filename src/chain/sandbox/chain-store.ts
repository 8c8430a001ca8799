/**
 * The sandbox chain's durable state in the relational store: every account as of the last commit,
 * every landed transaction, the genesis parameters and the clock's shift (time travel). A batch of transactions commits in one
 * database transaction, so a crash leaves either all of a batch or none of it; that transaction
 * first proves the chain's lease (lease.ts), so only the process that holds it writes.
 */
import type { Address } from "@solana/kit";
import { CompiledQuery, type Kysely, sql } from "kysely";
import { dialectOf, type Tables } from "../../storage/database.js";
import { parseAddress } from "../base58.js";
import type { TransactionError } from "../errors.js";
import { messageHash, parseWireTransaction } from "../wire.js";
import {
  type CommitBatch,
  type CommitStatement,
  type CommittedStatus,
  commitStatementText,
  encodeBatch,
  HISTORY_MERGE_EVERY,
  mergeHistoryStatementTexts,
  type StoredAccount,
  type StoredTransaction,
  VALUES_PER_ROW,
} from "./commit-batch.js";
import { type ChainLease, ChainLeaseLostError } from "./lease.js";
import type { ClockShift } from "./slot-clock.js";
import { SqliteWriter, WRITER_CHECKPOINT_PAGES } from "./sqlite-writer.js";
import { decodeMetaExtras } from "./transaction-meta.js";

export interface GenesisParameters {
  genesisHash: string;
  /** Wall time (ms) of slot 0. */
  genesisMs: number;
}

const GENESIS_KEY = "chain_genesis";
// A row of `meta` like genesis: a key-value table needs no migration for it.
const CLOCK_SHIFT_KEY = "chain_clock_shift";
// Rows per multi-row statement: well under SQLite's and PostgreSQL's bound-parameter limits.
const ROWS_PER_STATEMENT = 400;
// Commits sent to the SQLite writer before the first of them has finished: the main thread goes on
// executing while the writer works, instead of waiting for each commit in turn.
const PIPELINED_COMMITS = 4;
// While the SQLite writer commits the chain, the WAL checkpoints its commits call for run on its
// thread: the shared connection checkpoints only past more WAL pages than the writer does (SQLite's
// default is 1,000), so its checkpoints, which copy and sync pages, seldom block the event loop, and
// the WAL stays bounded while the chain is idle and the rest of the venue writes.
const SHARED_CONNECTION_CHECKPOINT_PAGES = WRITER_CHECKPOINT_PAGES + 4_000;
const SQLITE_CHECKPOINT_PAGES = 1_000;

// The message hash of a stored base64 wire transaction (for rows stored before the hash was).
function storedMessageHash(wire: string): string {
  return messageHash(parseWireTransaction(new Uint8Array(Buffer.from(wire, "base64"))));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

export interface ChainStoreOptions {
  /**
   * The SQLite database file behind `db`, when it is one: commits then go through a worker
   * thread's own connection to it (see sqlite-writer.ts). Reads always use `db`.
   */
  sqliteFile?: string;
  /** The lease every commit proves in its own transaction; a store without one only reads. */
  lease?: ChainLease;
  /** Transactions per step of the history index (HISTORY_MERGE_EVERY, its default). */
  historyMergeEvery?: number;
}

/** The sandbox chain's tables: reads, and commits proved by the lease (see the module comment). */
export class ChainStore {
  private readonly statements = new Map<string, string>();
  private mergeStatements: string[] | undefined;
  private writer: SqliteWriter | null;
  private readonly lease: ChainLease | undefined;
  private readonly historyMergeEvery: number;
  /** The position the next committed transaction takes (chain_transactions.position). */
  private nextPosition = 0;

  constructor(
    private readonly db: Kysely<Tables>,
    options: ChainStoreOptions = {},
  ) {
    this.lease = options.lease;
    this.historyMergeEvery = options.historyMergeEvery ?? HISTORY_MERGE_EVERY;
    this.writer =
      options.sqliteFile && options.lease
        ? new SqliteWriter(options.sqliteFile, { historyMergeEvery: this.historyMergeEvery })
        : null;
  }

  /** A store on `db` whose commits, on an SQLite file with a lease, go through a worker thread. */
  static async open(db: Kysely<Tables>, options: ChainStoreOptions = {}): Promise<ChainStore> {
    const store = new ChainStore(db, options);
    if (store.writer) await store.checkpointSharedConnectionPast(SHARED_CONNECTION_CHECKPOINT_PAGES);
    return store;
  }

  /** Stops the commit worker, if any (after the commits already started). */
  async close(): Promise<void> {
    const writer = this.writer;
    this.writer = null;
    await writer?.close();
    if (writer) await this.checkpointSharedConnectionPast(SQLITE_CHECKPOINT_PAGES);
  }

  private async checkpointSharedConnectionPast(pages: number): Promise<void> {
    await sql`pragma wal_autocheckpoint = ${sql.lit(pages)}`.execute(this.db);
  }

  /** The stored genesis parameters, storing `proposed` first on a fresh database (first writer wins). */
  async settleGenesis(proposed: GenesisParameters): Promise<GenesisParameters> {
    await this.db
      .insertInto("meta")
      .values({ key: GENESIS_KEY, value: JSON.stringify(proposed) })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    const row = await this.db
      .selectFrom("meta")
      .select("value")
      .where("key", "=", GENESIS_KEY)
      .executeTakeFirstOrThrow();
    return JSON.parse(row.value) as GenesisParameters;
  }

  /** The stored clock shift, or null while time has never been moved. */
  async loadClockShift(): Promise<ClockShift | null> {
    const row = await this.db
      .selectFrom("meta")
      .select("value")
      .where("key", "=", CLOCK_SHIFT_KEY)
      .executeTakeFirst();
    return row ? (JSON.parse(row.value) as ClockShift) : null;
  }

  /** Stores `shift` if this process still holds the lease (else ChainLeaseLostError, nothing written). */
  async saveClockShift(shift: ClockShift): Promise<void> {
    const lease = this.lease;
    if (!lease) throw new Error("this chain store has no lease: it cannot move the clock");
    const value = JSON.stringify(shift);
    await this.db.transaction().execute(async (trx) => {
      await lease.fence(trx);
      await trx
        .insertInto("meta")
        .values({ key: CLOCK_SHIFT_KEY, value })
        .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
        .execute();
    });
  }

  /** Every stored account; a Base58Error when a stored address is not one. */
  async loadAccounts(): Promise<(StoredAccount & { address: Address })[]> {
    const rows = await this.db.selectFrom("chain_accounts").selectAll().execute();
    return rows.map((row) => ({
      address: parseAddress(row.address),
      lamports: BigInt(row.lamports),
      owner: row.owner,
      executable: Number(row.executable) === 1,
      data: new Uint8Array(Buffer.from(row.data, "base64")),
    }));
  }

  /** Signatures, message hashes and outcomes of transactions that landed at or after `fromSlot`. */
  async loadRecentStatuses(fromSlot: bigint): Promise<CommittedStatus[]> {
    const rows = await this.db
      .selectFrom("chain_transactions")
      .select(["signature", "slot", "err", "message_hash"])
      // The wire only of rows stored before message hashes were (migration 0012), to hash it here.
      .select(sql<string | null>`case when "message_hash" is null then "wire" end`.as("unhashed_wire"))
      .where("slot", ">=", Number(fromSlot))
      .execute();
    return rows.map((row) => ({
      signature: row.signature,
      messageHash: row.message_hash ?? storedMessageHash(row.unhashed_wire ?? ""),
      slot: BigInt(row.slot),
      err: row.err === null ? null : (JSON.parse(row.err) as TransactionError),
    }));
  }

  /**
   * Numbers the transactions of later commits on from `landed` (how many are stored): called when
   * the state is (re)loaded, so a failed commit's numbers are taken again by what executes next.
   */
  numberTransactionsFrom(landed: number): void {
    this.nextPosition = landed;
  }

  /** How many transactions have landed. */
  async countTransactions(): Promise<number> {
    const row = await this.db
      .selectFrom("chain_transactions")
      .select((eb) => eb.fn.countAll().as("count"))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** One landed transaction, or null. */
  async getTransaction(signature: string): Promise<StoredTransaction | null> {
    const row = await this.db
      .selectFrom("chain_transactions")
      .selectAll()
      .where("signature", "=", signature)
      .executeTakeFirst();
    if (!row) return null;
    const balances = JSON.parse(row.balances) as { pre: string[]; post: string[] };
    return {
      signature: row.signature,
      slot: BigInt(row.slot),
      blockTime: Number(row.block_time),
      err: row.err === null ? null : (JSON.parse(row.err) as TransactionError),
      fee: BigInt(row.fee),
      computeUnits: BigInt(row.compute_units),
      logs: JSON.parse(row.logs) as string[],
      preBalances: balances.pre.map(BigInt),
      postBalances: balances.post.map(BigInt),
      wire: new Uint8Array(Buffer.from(row.wire, "base64")),
      messageHash: row.message_hash ?? storedMessageHash(row.wire),
      meta: decodeMetaExtras(row.meta ?? null),
    };
  }

  /** Slot and outcome of each signature found among `signatures`. */
  async getStatuses(
    signatures: readonly string[],
  ): Promise<Map<string, { slot: bigint; err: TransactionError | null }>> {
    const found = new Map<string, { slot: bigint; err: TransactionError | null }>();
    for (const group of chunks(signatures, ROWS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom("chain_transactions")
        .select(["signature", "slot", "err"])
        .where("signature", "in", group)
        .execute();
      for (const row of rows) {
        found.set(row.signature, {
          slot: BigInt(row.slot),
          err: row.err === null ? null : (JSON.parse(row.err) as TransactionError),
        });
      }
    }
    return found;
  }

  /**
   * How many commits may be in flight at once: several through the SQLite writer, which writes
   * them in order and refuses those behind a failed one; one otherwise (PostgreSQL's pooled
   * connections would not keep them in order).
   */
  maxCommitsInFlight(): number {
    return this.writer?.usable ? PIPELINED_COMMITS : 1;
  }

  /** Accepts commits again after a failed one, once the chain has reloaded what was stored. */
  resumeCommits(): void {
    this.writer?.resume();
  }

  /**
   * Writes a batch atomically if this process still holds the lease (else ChainLeaseLostError, and
   * nothing is written); resolves once it is durable.
   */
  async commit(batch: CommitBatch): Promise<void> {
    const lease = this.lease;
    if (!lease) throw new Error("this chain store has no lease: it cannot commit");
    batch.firstPosition = this.nextPosition;
    this.nextPosition += batch.transactions.length;
    if (this.writer && !this.writer.usable) {
      // The worker failed: fall back to the shared connection, which checkpoints as it did.
      this.writer = null;
      await this.checkpointSharedConnectionPast(SQLITE_CHECKPOINT_PAGES);
    }
    if (this.writer) {
      return this.writer.commit(batch, lease.fenceToken()).catch((error: unknown) => {
        throw error instanceof ChainLeaseLostError ? lease.lose() : error;
      });
    }
    const {
      accounts: upserts,
      deletions,
      transactions,
      history,
      mergeBelow,
    } = encodeBatch(batch, this.historyMergeEvery);
    await this.db.transaction().execute(async (trx) => {
      await lease.fence(trx);
      const rows: [CommitStatement, unknown[]][] = [
        ["upsertAccounts", upserts],
        ["deleteAccounts", deletions],
        ["insertTransactions", transactions],
        ["insertHistory", history],
      ];
      for (const [kind, values] of rows) {
        for (const group of chunks(values, ROWS_PER_STATEMENT * VALUES_PER_ROW[kind])) {
          await trx.executeQuery(this.statement(kind, group));
        }
      }
      if (mergeBelow !== null) {
        this.mergeStatements ??= mergeHistoryStatementTexts(this.placeholder(), dialectOf(this.db));
        for (const text of this.mergeStatements)
          await trx.executeQuery(CompiledQuery.raw(text, [mergeBelow]));
      }
    });
  }

  // The commit's statements are written once per shape (kind and row count) and reused: building
  // them through the query builder on every commit cost more than SQLite's own work.
  private statement(kind: CommitStatement, parameters: unknown[]): CompiledQuery {
    const rows = parameters.length / VALUES_PER_ROW[kind];
    const cacheKey = `${kind}:${rows}`;
    let text = this.statements.get(cacheKey);
    if (text === undefined) {
      text = commitStatementText(kind, rows, this.placeholder());
      this.statements.set(cacheKey, text);
    }
    return CompiledQuery.raw(text, parameters);
  }

  // The dialect's parameter placeholder: `?` (SQLite) or `$n` (PostgreSQL).
  private placeholder(): (index: number) => string {
    return dialectOf(this.db) === "postgres" ? (index) => `$${index + 1}` : () => "?";
  }
}
