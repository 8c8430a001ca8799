/**
 * Market account addresses. Each market's ledger and outcome mints live at addresses derived from the
 * venue seed and the market ticker, so every instance sharing a database shows the same addresses
 * and the sandbox chain can create the accounts there later without a lookup table.
 */
import { createHash, randomBytes } from "node:crypto";
import bs58 from "bs58";
import type { Kysely } from "kysely";
import { settleMetaValue } from "../storage/counters.js";
import type { Tables } from "../storage/database.js";

export interface MarketAddresses {
  marketLedger: string;
  yesMint: string;
  noMint: string;
}

/**
 * Derives the addresses like a program-derived address: a domain-separated SHA-256, so they can
 * never collide with a wallet's key and cost microseconds (key generation would cost ~0.5 ms each).
 */
export function deriveMarketAddresses(venueSeed: string, ticker: string): MarketAddresses {
  const derive = (role: string) =>
    bs58.encode(createHash("sha256").update(`oddsgate/market/${role}\0${venueSeed}\0${ticker}`).digest());
  return { marketLedger: derive("ledger"), yesMint: derive("yes"), noMint: derive("no") };
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
