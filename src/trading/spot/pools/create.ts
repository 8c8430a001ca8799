/**
 * Creating a pool: its authority is derived, its two vaults (the authority's associated token
 * accounts) are funded by the venue (its mint authority, or its treasury for wrapped SOL), and so is
 * the SOL the authority pays its quotes' tickets with, then the pool and its mints are stored. A crash before the store leaves funded vaults no pool uses, never a
 * pool without its reserves.
 */
import { randomBytes } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../../../chain/chain.js";
import { faucet } from "../../../chain/faucet.js";
import { LAMPORTS_PER_SOL } from "../../../chain/programs.js";
import type { VenueSigners } from "../../../chain/venue-keys.js";
import type { Tables } from "../../../storage/database.js";
import { MAX_POOL_FEE_BPS } from "../venues/cpmm.js";
import { CPMM_VENUE } from "../venues/cpmm-pool.js";
import type { PoolAuthorities } from "./authority.js";
import { insertPool, type PoolRecord, type TokenRecord } from "./store.js";

export interface PoolSpec {
  mintA: Address;
  mintB: Address;
  /** Initial reserves, in each token's smallest unit. */
  amountA: bigint;
  amountB: bigint;
  feeBps: number;
}

export interface PoolFunding {
  db: Kysely<Tables>;
  chain: Chain;
  signers: VenueSigners;
  authorities: PoolAuthorities;
}

/**
 * The SOL a pool authority keeps to pay its quotes' tickets (`quote-ticket.ts`) until they are swept:
 * each landed trade's ticket holds 0.00089 SOL for about a minute, so 100 SOL covers ~1,900 trades a second.
 */
export const TICKET_FLOAT = 100n * LAMPORTS_PER_SOL;

/** A pool that cannot be created as asked, with the reason. */
export class PoolSpecError extends Error {
  override name = "PoolSpecError";
}

/** Creates a constant-product pool with the given reserves; returns its record. */
export async function createPool(funding: PoolFunding, spec: PoolSpec): Promise<PoolRecord> {
  const funded = await fundPool(funding, spec);
  await insertPool(funding.db, funded.record, funded.tokens);
  return funded.record;
}

/**
 * A pool's accounts funded on chain, not stored yet: its record and its tokens, for `insertPool`.
 * The three grants are independent transactions, sent together.
 */
export async function fundPool(
  funding: PoolFunding,
  spec: PoolSpec,
): Promise<{ record: PoolRecord; tokens: TokenRecord[] }> {
  if (spec.mintA === spec.mintB) throw new PoolSpecError("a pool needs two different mints");
  if (!Number.isInteger(spec.feeBps) || spec.feeBps < 0 || spec.feeBps > MAX_POOL_FEE_BPS) {
    throw new PoolSpecError(
      `the fee must be an integer from 0 to ${MAX_POOL_FEE_BPS} bps, got ${spec.feeBps}`,
    );
  }
  if (spec.amountA <= 0n || spec.amountB <= 0n)
    throw new PoolSpecError("both initial reserves must be positive");
  const tokens: TokenRecord[] = [];
  for (const mint of [spec.mintA, spec.mintB]) {
    const info = await funding.chain.getMint(mint);
    if (!info) throw new PoolSpecError(`${mint} is not a token mint on this chain`);
    tokens.push({ mint, decimals: info.decimals, program: info.programId });
  }
  const keyId = randomBytes(16).toString("hex");
  const authority = funding.authorities.authority(keyId);
  await Promise.all([
    faucet(funding.chain, funding.signers, authority.address, spec.mintA, spec.amountA),
    faucet(funding.chain, funding.signers, authority.address, spec.mintB, spec.amountB),
    funding.chain.requestAirdrop(authority.address, TICKET_FLOAT),
  ]);
  const record: PoolRecord = {
    address: authority.address,
    venue: CPMM_VENUE,
    keyId,
    mintA: spec.mintA,
    mintB: spec.mintB,
    feeBps: spec.feeBps,
  };
  return { record, tokens };
}
