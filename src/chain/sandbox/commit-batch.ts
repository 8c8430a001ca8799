/**
 * What one commit of the sandbox chain writes, and its encoding as rows of column values: shared by
 * the store (chain-store.ts), which writes it on the shared connection, and the SQLite writer
 * (sqlite-writer.ts), which writes it from its worker thread.
 */
import type { Dialect } from "../../storage/database.js";
import type { TransactionError } from "../errors.js";
import { encodeMetaExtras, type TransactionMetaExtras } from "./transaction-meta.js";

/** An account as stored and as loaded into LiteSVM. */
export interface StoredAccount {
  address: string;
  lamports: bigint;
  owner: string;
  executable: boolean;
  data: Uint8Array;
}

/** A landed transaction as stored. */
export interface StoredTransaction {
  signature: string;
  /** Its message's hash (wire.ts, messageHash): a re-signed copy has another signature, not another hash. */
  messageHash: string;
  slot: bigint;
  blockTime: number;
  err: TransactionError | null;
  fee: bigint;
  computeUnits: bigint;
  logs: string[];
  preBalances: bigint[];
  postBalances: bigint[];
  wire: Uint8Array;
  /**
   * Every account key, loaded ones included: the addresses whose history it joins (set when it
   * executes; not read back from storage).
   */
  accountKeys?: readonly string[];
  /** Token balances, inner instructions, return data (transaction-meta.ts); empty on rows before 0014. */
  meta?: TransactionMetaExtras;
}

/** A landed transaction's outcome, as loaded to refuse replays and answer status queries. */
export interface CommittedStatus {
  signature: string;
  messageHash: string;
  slot: bigint;
  err: TransactionError | null;
}

/** What one commit writes: accounts (null = closed) and the transactions that wrote them. */
export interface CommitBatch {
  accounts: Map<string, StoredAccount | null>;
  transactions: StoredTransaction[];
  /** How many transactions landed before this batch's first (the store numbers them; 0 if unset). */
  firstPosition?: number;
}

/** The columns of `chain_accounts`, in the order `encodeBatch` lays out its values. */
export const ACCOUNT_COLUMNS = ["address", "lamports", "owner", "executable", "data"] as const;
/** The columns of `chain_transactions`, in the order `encodeBatch` lays out its values. */
export const TRANSACTION_COLUMNS = [
  "signature",
  "slot",
  "block_time",
  "err",
  "fee",
  "compute_units",
  "logs",
  "balances",
  "wire",
  "message_hash",
  "meta",
  "position",
] as const;

/**
 * The values of one row of `chain_recent_history` as `encodeBatch` lays them out, one row per
 * transaction: its position, the JSON array of its distinct account keys, then its slot.
 */
export const HISTORY_ROW_VALUES = 3;

/**
 * Transactions per step of the history index: a commit appends one row per transaction to
 * `chain_recent_history`, in position order, instead of dirtying a page of the address-ordered
 * index per address it names; the commit whose transactions reach a multiple of this moves every
 * transaction below it into `chain_address_transactions`, one row per address, in address order.
 */
export const HISTORY_MERGE_EVERY = 1024;

/** A batch encoded for binding: flat arrays of column values, in each table's column order. */
export interface EncodedBatch {
  accounts: unknown[];
  deletions: string[];
  transactions: unknown[];
  /** One row per transaction that names accounts, HISTORY_ROW_VALUES values each. */
  history: unknown[];
  /** When set, the commit then merges the recent history below this position (HISTORY_MERGE_EVERY). */
  mergeBelow: number | null;
}

/** A batch as rows of column values, ready to bind. */
export function encodeBatch(batch: CommitBatch, mergeEvery = HISTORY_MERGE_EVERY): EncodedBatch {
  const accounts: unknown[] = [];
  const deletions: string[] = [];
  for (const [address, account] of batch.accounts) {
    if (account === null) deletions.push(address);
    else {
      accounts.push(
        address,
        account.lamports.toString(),
        account.owner,
        account.executable ? 1 : 0,
        base64(account.data),
      );
    }
  }
  const transactions: unknown[] = [];
  const history: unknown[] = [];
  const first = batch.firstPosition ?? 0;
  batch.transactions.forEach((tx, i) => {
    const slot = Number(tx.slot);
    transactions.push(
      tx.signature,
      slot,
      tx.blockTime,
      tx.err === null ? null : JSON.stringify(tx.err),
      tx.fee.toString(),
      tx.computeUnits.toString(),
      JSON.stringify(tx.logs),
      balancesJson(tx.preBalances, tx.postBalances),
      base64(tx.wire),
      tx.messageHash,
      tx.meta ? encodeMetaExtras(tx.meta) : null,
      first + i,
    );
    // The history getSignaturesForAddress reads: the transaction under each distinct account key
    // (a landed transaction names each once: Solana refuses one that loads an account twice).
    const keys = tx.accountKeys ?? [];
    if (keys.length > 0) history.push(first + i, JSON.stringify(distinct(keys)), slot);
  });
  const next = first + batch.transactions.length;
  const reached = next - (next % mergeEvery);
  return { accounts, deletions, transactions, history, mergeBelow: reached > first ? reached : null };
}

/** The statements a commit runs; each is written for a number of rows. */
export type CommitStatement = "upsertAccounts" | "deleteAccounts" | "insertTransactions" | "insertHistory";

/** Values each row of a statement binds, in `encodeBatch`'s layout. */
export const VALUES_PER_ROW: Record<CommitStatement, number> = {
  upsertAccounts: ACCOUNT_COLUMNS.length,
  deleteAccounts: 1,
  insertTransactions: TRANSACTION_COLUMNS.length,
  insertHistory: HISTORY_ROW_VALUES,
};

/**
 * The text of `kind` for `rows` rows, with the dialect's placeholders (`?` on SQLite, `$n` on
 * PostgreSQL): the one source of the commit's SQL, for the store and the SQLite writer's worker.
 */
export function commitStatementText(
  kind: CommitStatement,
  rows: number,
  placeholder: (index: number) => string,
): string {
  const list = (cell: (index: number, column: number) => string) => {
    const columns = VALUES_PER_ROW[kind];
    const tuples: string[] = [];
    for (let row = 0; row < rows; row++) {
      const cells: string[] = [];
      for (let column = 0; column < columns; column++) cells.push(cell(row * columns + column, column));
      tuples.push(`(${cells.join(", ")})`);
    }
    return tuples.join(", ");
  };
  const plain = (index: number) => placeholder(index);
  const quoted = (columns: readonly string[]) => columns.map((c) => `"${c}"`).join(", ");
  switch (kind) {
    case "upsertAccounts":
      return (
        `insert into "chain_accounts" (${quoted(ACCOUNT_COLUMNS)}) values ${list(plain)} on conflict ("address") do update set ` +
        ACCOUNT_COLUMNS.slice(1)
          .map((c) => `"${c}" = "excluded"."${c}"`)
          .join(", ")
      );
    case "deleteAccounts":
      return `delete from "chain_accounts" where "address" in (${Array.from({ length: rows }, (_, i) => placeholder(i)).join(", ")})`;
    case "insertTransactions":
      return `insert into "chain_transactions" (${quoted(TRANSACTION_COLUMNS)}) values ${list(plain)}`;
    case "insertHistory":
      return `insert into "chain_recent_history" ("position", "addresses", "slot") values ${list(plain)}`;
  }
}

/**
 * The statements that merge the recent history below a position (their one parameter) into the
 * address-ordered index, in this order: each address numbered once, its rows moved, then cleared.
 * Each recent row's addresses are a JSON array, read as rows by the dialect's own function.
 */
export function mergeHistoryStatementTexts(
  placeholder: (index: number) => string,
  dialect: Dialect,
): string[] {
  const below = `"r"."position" < ${placeholder(0)}`;
  const recentAddresses =
    dialect === "postgres"
      ? `"chain_recent_history" as "r" cross join lateral json_array_elements_text("r"."addresses"::json) as "k"("value")`
      : `"chain_recent_history" as "r" join json_each("r"."addresses") as "k"`;
  return [
    // SQLite reads ON CONFLICT after a SELECT only behind a WHERE, which this has.
    `insert into "chain_addresses" ("address") select distinct "k"."value" from ${recentAddresses} where ${below} on conflict ("address") do nothing`,
    `insert into "chain_address_transactions" ("address_id", "slot", "position") ` +
      `select "a"."id", "r"."slot", "r"."position" from ${recentAddresses} ` +
      `join "chain_addresses" as "a" on "a"."address" = "k"."value" where ${below} ` +
      `order by "a"."id", "r"."slot", "r"."position"`,
    `delete from "chain_recent_history" where "position" < ${placeholder(0)}`,
  ];
}

// `{"pre":["1","2"],"post":["1","2"]}`, written directly: the lamports are decimal digits, which
// need no escaping, and the intermediate string arrays were most of this column's garbage.
function balancesJson(pre: readonly bigint[], post: readonly bigint[]): string {
  return `{"pre":${decimalsJson(pre)},"post":${decimalsJson(post)}}`;
}

function decimalsJson(values: readonly bigint[]): string {
  return values.length === 0 ? "[]" : `["${values.join('","')}"]`;
}

// `keys` without repeats; a transaction's few keys are compared in place, with no set built for them.
function distinct(keys: readonly string[]): readonly string[] {
  if (keys.length > 16) return [...new Set(keys)];
  for (let i = 1; i < keys.length; i++) {
    if (keys.lastIndexOf(keys[i] as string, i - 1) >= 0) return [...new Set(keys)];
  }
  return keys;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
