/**
 * Market account addresses. Each market settles on two rails, USDC and CASH (reference §2.3), each
 * with its own ledger and outcome mints. They live at addresses derived from the venue seed and the
 * market ticker, so every instance sharing a database shows the same addresses and the sandbox chain
 * can create the accounts there later without a lookup table.
 */
import { hash, randomBytes } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import { encodeBase58 } from "../chain/base58.js";
import { CASH_MINT, USDC_MINT } from "../contract/markets.js";
import { settleMetaValue } from "../storage/counters.js";
import type { Tables } from "../storage/database.js";

/** One rail's ledger and outcome mints; storage keeps the USDC rail's. */
export interface MarketAddresses {
  marketLedger: string;
  yesMint: string;
  noMint: string;
}

/** One settlement rail of a market: its accounts and the mint its outcome tokens trade against. */
export interface MarketRail extends MarketAddresses {
  settlementMint: string;
}

/**
 * A market's accounts as the catalog holds them: the USDC rail's at the top (as stored, and as readers
 * of one rail expect), and every rail, USDC first, in `rails`.
 */
export interface MarketAccounts extends MarketAddresses {
  readonly rails: readonly MarketRail[];
}

/** Every market's settlement mints, in the order of its rails (and of its wire `accounts` map). */
export const SETTLEMENT_MINTS: readonly Address[] = [USDC_MINT, CASH_MINT];

/**
 * Derives the addresses like a program-derived address: a domain-separated SHA-256, so they can
 * never collide with a wallet's key and cost microseconds (key generation would cost ~0.5 ms each).
 */
export function deriveMarketAddresses(venueSeed: string, ticker: string): MarketAddresses {
  const derive = (role: string) => addressFromDigest(`oddsgate/market/${role}\0${venueSeed}\0${ticker}`);
  return { marketLedger: derive("ledger"), yesMint: derive("yes"), noMint: derive("no") };
}

/**
 * The CASH rail's addresses, derived from the USDC rail's ledger under a domain of their own. The
 * ledger is itself fixed by the seed and the ticker, so these are too; deriving from it lets anything
 * holding the stored USDC addresses (the catalog, an order's terms) find the CASH rail without the
 * seed. Storage keeps them beside the USDC rail's (derived when the row is written), so that a load
 * need not derive them.
 */
export function deriveCashRail(usdc: Pick<MarketAddresses, "marketLedger">): MarketAddresses {
  const derive = (role: string) => addressFromDigest(`oddsgate/market/cash/${role}\0${usdc.marketLedger}`);
  return { marketLedger: derive("ledger"), yesMint: derive("yes"), noMint: derive("no") };
}

/**
 * The base58 text of `domain`'s SHA-256. One-shot hashing and the chain's own encoder: the catalogue
 * derives three of these per market at every load (a third of its load time with createHash and bs58).
 */
function addressFromDigest(domain: string): string {
  return encodeBase58(hash("sha256", domain, "buffer"));
}

/**
 * A market's accounts with every rail, USDC first, from its USDC rail's addresses and its CASH rail's
 * as stored (derived here when not given).
 */
export function marketAccounts(usdc: MarketAddresses, storedCash?: MarketAddresses): MarketAccounts {
  const { marketLedger, yesMint, noMint } = usdc;
  const cash = storedCash ?? deriveCashRail(usdc);
  return {
    marketLedger,
    yesMint,
    noMint,
    // Both rails as literals of one shape: spreading the derived rail gave every market's CASH rail a
    // hidden class of its own (~240 bytes a market in a heap snapshot of 50,000 markets).
    rails: [
      { marketLedger, yesMint, noMint, settlementMint: USDC_MINT },
      {
        marketLedger: cash.marketLedger,
        yesMint: cash.yesMint,
        noMint: cash.noMint,
        settlementMint: CASH_MINT,
      },
    ],
  };
}

const VENUE_SEED_KEY = "venue_seed";

/**
 * Returns the venue seed this database was created with, fixing it on first use: the configured
 * one, else a random one. A configured seed that differs from the stored one is refused, since it
 * would silently move every market's addresses.
 */
export async function resolveVenueSeed(db: Kysely<Tables>, configured: string | undefined): Promise<string> {
  // Another instance may win the race to fix it: the stored value is the one that counts.
  const stored = await settleMetaValue(db, VENUE_SEED_KEY, configured ?? randomBytes(32).toString("hex"));
  if (configured !== undefined && configured !== stored) {
    throw new Error(
      "VENUE_SEED differs from the seed this database was created with; unset it or use the original",
    );
  }
  return stored;
}
