/**
 * The relational store: Kysely over embedded SQLite (better-sqlite3, WAL) or PostgreSQL
 * (node-postgres, `pg`), chosen by `DATABASE_URL`. Both run the same migrations and the same queries.
 */
import fs from "node:fs";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import {
  type Generated,
  Kysely,
  type SqliteDatabase as KyselySqliteDatabase,
  PostgresAdapter,
  SqliteDialect,
} from "kysely";
import { LRUCache } from "lru-cache";
import { type Config, sqlitePath } from "../config.js";
import { migrateToLatest } from "./migrations.js";

export interface MetaTable {
  key: string;
  value: string;
}

export interface SeriesTable {
  ticker: string;
  data: string;
}

export interface EventsTable {
  ticker: string;
  series_ticker: string;
  data: string;
}

export interface MarketsTable {
  ticker: string;
  event_ticker: string;
  market_ledger: string;
  yes_mint: string;
  no_mint: string;
  /** The CASH rail's addresses, derived from `market_ledger` (markets/accounts.ts). */
  cash_market_ledger: string | null;
  cash_yes_mint: string | null;
  cash_no_mint: string | null;
  data: string;
  /** The catalogue version whose writer last wrote the row. */
  changed_version: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  tier: string;
  /** 1 when the key may open streams (WebSocket upgrades), else 0. */
  streams: number;
  secret_prefix: string;
  hash: string;
  previous_hash: string | null;
  /** ISO time until which `previous_hash` (the secret before a rotation) still works. */
  previous_valid_until: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** A sandbox-chain account; `lamports` is a decimal u64, `data` base64. */
export interface ChainAccountsTable {
  address: string;
  lamports: string;
  owner: string;
  /** 1 for program accounts, else 0. */
  executable: number;
  data: string;
}

/** A landed sandbox-chain transaction; `err` is Solana's JSON TransactionError or null. */
export interface ChainTransactionsTable {
  signature: string;
  slot: number | string | bigint;
  /** Unix seconds of the slot it landed in. */
  block_time: number | string | bigint;
  err: string | null;
  fee: string;
  compute_units: string;
  /** JSON array of log lines. */
  logs: string;
  /** JSON `{pre: string[], post: string[]}` lamports of every account key, in message order. */
  balances: string;
  /** The signed wire transaction, base64. */
  wire: string;
  /** Its message's hash (chain/wire.ts, messageHash); null on rows stored before migration 0012. */
  message_hash: string | null;
  /** JSON of what execution alone knows (chain/sandbox/transaction-meta.ts); null before migration 0014. */
  meta: string | null;
  /** How many transactions landed before it: orders the chain's transactions (backfilled by migration 0015). */
  position: number | string | bigint;
}

/** The one row (id 1) naming the process that runs the sandbox chain; see chain/sandbox/lease.ts. */
export interface ChainLeaseTable {
  id: number;
  /** Random per start of a chain, readable: `hostname/pid/random`. */
  holder: string;
  /** The holder's host and PID namespace, to recognise a crashed predecessor on this host. */
  host: string;
  pid: number;
  /** The holder's JSON-RPC URL, once it listens. */
  rpc_url: string | null;
  /** Grows by one on every takeover; a commit proves its holder's epoch still holds the lease. */
  epoch: number | string | bigint;
  /** Milliseconds since 1970 by the database's clock. */
  expires_at: number | string | bigint;
}

/** A mint that had a pool at least once. */
export interface TradingTokensTable {
  mint: string;
  decimals: number;
  /** The token program that owns the mint (SPL Token or Token-2022). */
  program: string;
  /** Unix seconds. */
  listed_at: number | string | bigint;
}

/** A pool of a spot venue; `address` is its authority, which owns its two vaults. */
export interface PoolsTable {
  address: string;
  venue: string;
  /** Public input to the derivation of the pool authority's key (see trading/spot/pools/authority.ts). */
  key_id: string;
  mint_a: string;
  mint_b: string;
  fee_bps: number;
  /** Unix seconds. */
  created_at: number | string | bigint;
  removed_at: number | string | bigint | null;
}

/** An escrowed order; amounts are decimal u64 strings, `fills`/`reverts` JSON arrays. */
export interface OrdersTable {
  id: string;
  /** `intent` (the venue sends the open transaction) or `async` (the user does). */
  kind: string;
  status: string;
  user_key: string;
  input_mint: string;
  output_mint: string;
  in_amount: string;
  /** The least output a fill may deliver. */
  threshold: string;
  /** The escrow authority (the order's address). */
  escrow: string;
  open_signature: string | null;
  /** The signed open transaction (base64) when the venue sends it, so a restart can send it again. */
  open_wire: string | null;
  open_valid_height: number | string | bigint;
  open_slot: number | string | bigint | null;
  expiry_slots: number;
  fee_budget: string;
  /** `/submit-intent`'s answer, JSON, given again to a resubmission. */
  answer: string | null;
  /** An async order's or a market initialization's own terms (`OrderTerms`), JSON. */
  terms: string | null;
  /** The settling transaction in flight: its signature, wire (base64), last valid height and plan (JSON). */
  close_signature: string | null;
  close_wire: string | null;
  close_valid_height: number | string | bigint | null;
  close_plan: string | null;
  /** When the keeper may sweep a settled intent's escrow back to its user (ms); null once swept. */
  sweep_after: string | number | null;
  /** A prediction-market fill's order on the upstream exchange (`UpstreamFill`), JSON: stored before it is placed. */
  upstream: string | null;
  fills: string;
  reverts: string;
  created_at: number | string | bigint;
  updated_at: number | string | bigint;
}

/** A wallet the operator verified (the reference's Proof check); `oddsgate wallets` keeps the list. */
export interface VerifiedWalletsTable {
  /** The wallet's base58 address. */
  address: string;
  /** Why it was verified, in the operator's words; null without one. */
  note: string | null;
  /** ISO time it was verified. */
  verified_at: string;
}

/**
 * A prediction-market fill this venue settled on its chain (see markets/onchain-trades.ts). Amounts
 * are in each mint's smallest unit; `contracts` in the outcome mint's, `notional` and `fee_amount` in
 * the settlement mint's.
 */
export interface OnchainTradesTable {
  /** Ascending in insertion order; generated by the database. */
  id: Generated<number | string | bigint>;
  /** The settling transaction (its first signature). */
  transaction_signature: string;
  order_id: string;
  /** The order's user: who paid the input and received the output. */
  wallet: string;
  /** The order's escrow authority. */
  order_account: string;
  input_mint: string;
  input_amount: number | string | bigint;
  output_mint: string;
  output_amount: number | string | bigint;
  /** The outcome token the fill minted (a buy) or burnt (a sale or a redemption). */
  outcome_mint: string;
  /** The mint the outcome is priced in (USDC, CASH, ...): the fill's other mint. */
  settlement_mint: string;
  contracts: number | string | bigint;
  /** What the contracts cost or fetched, the builder fee aside. */
  notional: number | string | bigint;
  /** The builder fee the fill paid, in the settlement mint (0 without one). */
  fee_amount: number | string | bigint;
  /** Unix seconds it was recorded settled. */
  created_at: number | string | bigint;
}

/** One account key of one landed transaction: a wallet's history (getSignaturesForAddress). */
/** Every address a landed transaction named, numbered (chain_address_transactions refers to it by id). */
export interface ChainAddressesTable {
  id: Generated<number | string | bigint>;
  address: string;
}

/**
 * The newest transactions of the history index, one row each in the order they landed, with the
 * JSON array of the addresses they name, until merged into chain_address_transactions
 * (commit-batch.ts, HISTORY_MERGE_EVERY).
 */
export interface ChainRecentHistoryTable {
  position: number | string | bigint;
  addresses: string;
  slot: number | string | bigint;
}

/** One row per account key of each landed transaction: an address's history, read newest first. */
export interface ChainAddressTransactionsTable {
  address_id: number | string | bigint;
  slot: number | string | bigint;
  /** How many transactions landed before it (chain_transactions.position). */
  position: number | string | bigint;
}

export interface Tables {
  meta: MetaTable;
  series: SeriesTable;
  events: EventsTable;
  markets: MarketsTable;
  api_keys: ApiKeysTable;
  chain_accounts: ChainAccountsTable;
  chain_transactions: ChainTransactionsTable;
  chain_addresses: ChainAddressesTable;
  chain_address_transactions: ChainAddressTransactionsTable;
  chain_recent_history: ChainRecentHistoryTable;
  chain_lease: ChainLeaseTable;
  trading_tokens: TradingTokensTable;
  pools: PoolsTable;
  orders: OrdersTable;
  verified_wallets: VerifiedWalletsTable;
  onchain_trades: OnchainTradesTable;
}

export type Dialect = "sqlite" | "postgres";

/** The dialect behind `db`, for modules handed only the Kysely instance. */
export function dialectOf(db: Kysely<Tables>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

export interface Storage {
  readonly db: Kysely<Tables>;
  /**
   * For long consistent reads (a catalogue load reads 250,000 rows over seconds) that must not hold
   * up other queries: with SQLite, a read-only connection of its own, since `db` is one connection
   * that runs one transaction at a time; with PostgreSQL, the same pool as `db`.
   */
  readonly snapshots: Kysely<Tables>;
  readonly dialect: Dialect;
  /** Where the data lives, for logs: the SQLite file or the PostgreSQL database name (never credentials). */
  readonly location: string;
  close(): Promise<void>;
}

/** Opens the configured database and brings its schema up to date. */
export async function openStorage(config: Pick<Config, "DATA_DIR" | "DATABASE_URL">): Promise<Storage> {
  const storage = config.DATABASE_URL
    ? await openPostgres(config.DATABASE_URL)
    : openSqlite(sqlitePath(config));
  try {
    await migrateToLatest(storage.db);
  } catch (error) {
    await storage.close();
    throw error;
  }
  return storage;
}

async function openPostgres(url: string): Promise<Storage> {
  // The driver is loaded only when it is used: it costs ~150 ms of every start to import.
  const { postgresPool } = await import("./postgres.js");
  const pool = postgresPool(url);
  const db = new Kysely<Tables>({ dialect: pool.dialect });
  const location = `postgres database ${new URL(url).pathname.slice(1) || "(default)"}`;
  const close = async () => {
    await pool.close();
    await db.destroy();
  };
  return { db, snapshots: db, dialect: "postgres", location, close };
}

function openSqlite(file: string): Storage {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  database.pragma("journal_mode = WAL");
  // WAL with synchronous=NORMAL is durable across process crashes, which is what a kill -9 tests.
  database.pragma("synchronous = NORMAL");
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: cachingStatements(database) }) });
  // WAL lets a reader keep its snapshot while the main connection writes.
  let reader: SqliteDatabase.Database;
  try {
    reader = new SqliteDatabase(file, { readonly: true });
    reader.pragma("busy_timeout = 5000");
  } catch (error) {
    database.close();
    throw error;
  }
  const snapshots = new Kysely<Tables>({ dialect: new SqliteDialect({ database: reader }) });
  return {
    db,
    snapshots,
    dialect: "sqlite",
    location: file,
    close: async () => {
      try {
        await snapshots.destroy();
      } finally {
        await db.destroy();
      }
    },
  };
}

/** Distinct SQL texts whose prepared statements are kept (multi-row inserts vary in length). */
const CACHED_STATEMENTS = 500;

/**
 * `database` as Kysely's SQLite driver sees it, preparing each distinct SQL text once: the driver
 * calls `prepare` for every query, and preparing costs more than running the small queries of the
 * order path. Kysely runs one query at a time on its single SQLite connection, so a cached statement
 * is never in use twice at once.
 */
function cachingStatements(database: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new LRUCache<string, SqliteDatabase.Statement>({ max: CACHED_STATEMENTS });
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
