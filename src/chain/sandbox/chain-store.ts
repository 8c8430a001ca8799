/**
 * The sandbox chain's durable state in the relational store: every account as of the last commit,
 * every landed transaction, and the genesis parameters. A batch of transactions commits in one
 * database transaction, so a crash leaves either all of a batch or none of it.
 */
import type { Kysely } from "kysely";
import type { Tables } from "../../storage/database.js";
import type { TransactionError } from "../errors.js";

/** An account as stored and as loaded into LiteSVM. */
export interface StoredAccount {
  address: string;
  lamports: bigint;
  owner: string;
  executable: boolean;
  data: Uint8Array;
}

export interface StoredTransaction {
  signature: string;
  slot: bigint;
  blockTime: number;
  err: TransactionError | null;
  fee: bigint;
  computeUnits: bigint;
  logs: string[];
  preBalances: bigint[];
  postBalances: bigint[];
  wire: Uint8Array;
}

/** What one commit writes: accounts (null = closed) and the transactions that wrote them. */
export interface CommitBatch {
  accounts: Map<string, StoredAccount | null>;
  transactions: StoredTransaction[];
}

export interface GenesisParameters {
  genesisHash: string;
  /** Wall time (ms) of slot 0. */
  genesisMs: number;
}

const GENESIS_KEY = "chain_genesis";
// Rows per multi-row statement: well under SQLite's and PostgreSQL's bound-parameter limits.
const ROWS_PER_STATEMENT = 400;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

export class ChainStore {
  constructor(private readonly db: Kysely<Tables>) {}

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

  /** Every stored account. */
  async loadAccounts(): Promise<StoredAccount[]> {
    const rows = await this.db.selectFrom("chain_accounts").selectAll().execute();
    return rows.map((row) => ({
      address: row.address,
      lamports: BigInt(row.lamports),
      owner: row.owner,
      executable: Number(row.executable) === 1,
      data: new Uint8Array(Buffer.from(row.data, "base64")),
    }));
  }

  /** Signatures and outcomes of transactions that landed at or after `fromSlot`. */
  async loadRecentStatuses(
    fromSlot: bigint,
  ): Promise<{ signature: string; slot: bigint; err: TransactionError | null }[]> {
    const rows = await this.db
      .selectFrom("chain_transactions")
      .select(["signature", "slot", "err"])
      .where("slot", ">=", Number(fromSlot))
      .execute();
    return rows.map((row) => ({
      signature: row.signature,
      slot: BigInt(row.slot),
      err: row.err === null ? null : (JSON.parse(row.err) as TransactionError),
    }));
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

  /** Writes a batch atomically. */
  async commit(batch: CommitBatch): Promise<void> {
    const upserts: Tables["chain_accounts"][] = [];
    const deletions: string[] = [];
    for (const [address, account] of batch.accounts) {
      if (account === null) deletions.push(address);
      else {
        upserts.push({
          address,
          lamports: account.lamports.toString(),
          owner: account.owner,
          executable: account.executable ? 1 : 0,
          data: Buffer.from(account.data.buffer, account.data.byteOffset, account.data.byteLength).toString(
            "base64",
          ),
        });
      }
    }
    const transactions = batch.transactions.map((tx) => ({
      signature: tx.signature,
      slot: Number(tx.slot),
      block_time: tx.blockTime,
      err: tx.err === null ? null : JSON.stringify(tx.err),
      fee: tx.fee.toString(),
      compute_units: tx.computeUnits.toString(),
      logs: JSON.stringify(tx.logs),
      balances: JSON.stringify({ pre: tx.preBalances.map(String), post: tx.postBalances.map(String) }),
      wire: Buffer.from(tx.wire.buffer, tx.wire.byteOffset, tx.wire.byteLength).toString("base64"),
    }));
    await this.db.transaction().execute(async (trx) => {
      for (const group of chunks(upserts, ROWS_PER_STATEMENT)) {
        await trx
          .insertInto("chain_accounts")
          .values(group)
          .onConflict((oc) =>
            oc.column("address").doUpdateSet((eb) => ({
              lamports: eb.ref("excluded.lamports"),
              owner: eb.ref("excluded.owner"),
              executable: eb.ref("excluded.executable"),
              data: eb.ref("excluded.data"),
            })),
          )
          .execute();
      }
      for (const group of chunks(deletions, ROWS_PER_STATEMENT)) {
        await trx.deleteFrom("chain_accounts").where("address", "in", group).execute();
      }
      for (const group of chunks(transactions, ROWS_PER_STATEMENT)) {
        await trx.insertInto("chain_transactions").values(group).execute();
      }
    });
  }
}
