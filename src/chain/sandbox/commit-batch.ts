/**
 * What one commit of the sandbox chain writes, and its encoding as rows of column values: shared by
 * the store (chain-store.ts), which writes it on the shared connection, and the SQLite writer
 * (sqlite-writer.ts), which writes it from its worker thread.
 */
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
] as const;

/** The columns of `chain_address_signatures`, in the order `encodeBatch` lays out its values. */
export const ADDRESS_SIGNATURE_COLUMNS = ["address", "slot", "position", "signature"] as const;

/** A batch encoded for binding: flat arrays of column values, in each table's column order. */
export interface EncodedBatch {
  accounts: unknown[];
  deletions: string[];
  transactions: unknown[];
  addressSignatures: unknown[];
}

/** A batch as rows of column values, ready to bind. */
export function encodeBatch(batch: CommitBatch): EncodedBatch {
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
  for (const tx of batch.transactions) {
    transactions.push(
      tx.signature,
      Number(tx.slot),
      tx.blockTime,
      tx.err === null ? null : JSON.stringify(tx.err),
      tx.fee.toString(),
      tx.computeUnits.toString(),
      JSON.stringify(tx.logs),
      JSON.stringify({ pre: tx.preBalances.map(String), post: tx.postBalances.map(String) }),
      base64(tx.wire),
      tx.messageHash,
      tx.meta ? encodeMetaExtras(tx.meta) : null,
    );
  }
  return { accounts, deletions, transactions, addressSignatures: addressRows(batch) };
}

// One row per distinct account key of each transaction (the history getSignaturesForAddress reads),
// numbered in the order they executed.
function addressRows(batch: CommitBatch): unknown[] {
  const rows: unknown[] = [];
  const first = batch.firstPosition ?? 0;
  batch.transactions.forEach((tx, i) => {
    const slot = Number(tx.slot);
    for (const address of new Set(tx.accountKeys)) rows.push(address, slot, first + i, tx.signature);
  });
  return rows;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
