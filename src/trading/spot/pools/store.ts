/**
 * Pools and the token registry in storage. Every change bumps `trading_version` in `meta`, which
 * instances poll to pick up pools created by the CLI or another instance.
 */
import type { Address } from "@solana/kit";
import type { Kysely, Transaction } from "kysely";
import { parseAddress, parseAddressUncached } from "../../../chain/base58.js";
import type { Tables } from "../../../storage/database.js";

export interface TokenRecord {
  mint: Address;
  decimals: number;
  /** The token program owning the mint. */
  program: Address;
}

export interface PoolRecord {
  address: Address;
  venue: string;
  keyId: string;
  mintA: Address;
  mintB: Address;
  feeBps: number;
}

const VERSION_KEY = "trading_version";
/** Set once the demo pools of this database were claimed (by the instance creating them). */
const DEMO_POOLS_KEY = "demo_pools";

/** The pools in service. */
export async function listPools(db: Kysely<Tables>): Promise<PoolRecord[]> {
  const rows = await db
    .selectFrom("pools")
    .selectAll()
    .where("removed_at", "is", null)
    .orderBy("address")
    .execute();
  return rows.map((row) => ({
    address: parseAddress(row.address),
    venue: row.venue,
    keyId: row.key_id,
    mintA: parseAddress(row.mint_a),
    mintB: parseAddress(row.mint_b),
    feeBps: row.fee_bps,
  }));
}

/** Every mint that ever had a pool. */
export async function listTokens(db: Kysely<Tables>): Promise<TokenRecord[]> {
  const rows = await db
    .selectFrom("trading_tokens")
    .selectAll()
    .orderBy("listed_at")
    .orderBy("mint")
    .execute();
  // Checked outside the address cache: a large catalogue lists hundreds of thousands of outcome
  // mints, which would flush the addresses transactions use.
  return rows.map((row) => ({
    mint: parseAddressUncached(row.mint),
    decimals: row.decimals,
    program: parseAddress(row.program),
  }));
}

/** Stores a new pool and lists its mints (idempotently) in one transaction. */
export async function insertPool(
  db: Kysely<Tables>,
  pool: PoolRecord,
  tokens: readonly TokenRecord[],
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await db.transaction().execute(async (trx) => {
    await listTokensIn(trx, tokens, now);
    await trx
      .insertInto("pools")
      .values({
        address: pool.address,
        venue: pool.venue,
        key_id: pool.keyId,
        mint_a: pool.mintA,
        mint_b: pool.mintB,
        fee_bps: pool.feeBps,
        created_at: now,
        removed_at: null,
      })
      .execute();
    await bumpVersion(trx);
  });
}

/** Lists mints that trade without a pool of ours (outcome mints of the prediction venue). */
export async function listTokensWithoutPool(
  db: Kysely<Tables>,
  tokens: readonly TokenRecord[],
): Promise<void> {
  if (tokens.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await listTokensIn(trx, tokens, Math.floor(Date.now() / 1000));
    await bumpVersion(trx);
  });
}

/** Takes a pool out of service; its mints stay listed. Returns whether a pool was removed. */
export async function removePool(db: Kysely<Tables>, address: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable("pools")
      .set({ removed_at: Math.floor(Date.now() / 1000) })
      .where("address", "=", address)
      .where("removed_at", "is", null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await bumpVersion(trx);
    return true;
  });
}

/** The current version of the pools and tokens, for change detection. */
export async function tradingVersion(db: Kysely<Tables>): Promise<number> {
  const row = await db.selectFrom("meta").select("value").where("key", "=", VERSION_KEY).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** Claims the creation of the demo pools for this instance; false when another instance claimed it first. */
export async function claimDemoPools(db: Kysely<Tables>): Promise<boolean> {
  const claimed = await db
    .insertInto("meta")
    .values({ key: DEMO_POOLS_KEY, value: String(Math.floor(Date.now() / 1000)) })
    .onConflict((oc) => oc.column("key").doNothing())
    .executeTakeFirst();
  return Boolean(claimed.numInsertedOrUpdatedRows);
}

/** Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const TOKENS_PER_INSERT = 500;

async function listTokensIn(
  trx: Transaction<Tables>,
  tokens: readonly TokenRecord[],
  now: number,
): Promise<void> {
  for (let start = 0; start < tokens.length; start += TOKENS_PER_INSERT) {
    const rows = tokens.slice(start, start + TOKENS_PER_INSERT).map((token) => ({
      mint: token.mint,
      decimals: token.decimals,
      program: token.program,
      listed_at: now,
    }));
    await trx
      .insertInto("trading_tokens")
      .values(rows)
      .onConflict((oc) => oc.column("mint").doNothing())
      .execute();
  }
}

async function bumpVersion(trx: Transaction<Tables>): Promise<void> {
  const current = await trx
    .selectFrom("meta")
    .select("value")
    .where("key", "=", VERSION_KEY)
    .executeTakeFirst();
  const next = String((current ? Number(current.value) : 0) + 1);
  if (current) await trx.updateTable("meta").set({ value: next }).where("key", "=", VERSION_KEY).execute();
  else await trx.insertInto("meta").values({ key: VERSION_KEY, value: next }).execute();
}
