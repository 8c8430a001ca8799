/**
 * A tokenized market's ledger account on chain. Layout (136 bytes, little-endian):
 *
 *   0   8  magic "OGLEDGR1" (kind and version)
 *   8  32  yes mint (Token-2022)
 *  40  32  no mint (Token-2022)
 *  72  32  settlement mint (USDC unless stated)
 * 104  32  venue authority (mint authority of both outcome mints)
 *
 * The account is owned by the venue authority's address, not by a program, so no transaction can
 * change it; the venue records later market state in its own database.
 */
import type { Address } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "./base58.js";

export const MARKET_LEDGER_SIZE = 136;
const MAGIC = new TextEncoder().encode("OGLEDGR1");

export interface MarketLedger {
  yesMint: Address;
  noMint: Address;
  settlementMint: Address;
  authority: Address;
}

/** Encodes a ledger account's data. */
export function encodeMarketLedger(ledger: MarketLedger): Uint8Array {
  const data = new Uint8Array(MARKET_LEDGER_SIZE);
  data.set(MAGIC, 0);
  data.set(decodeAddressBytes(ledger.yesMint), 8);
  data.set(decodeAddressBytes(ledger.noMint), 40);
  data.set(decodeAddressBytes(ledger.settlementMint), 72);
  data.set(decodeAddressBytes(ledger.authority), 104);
  return data;
}

/** Decodes a ledger account's data; null when it is not one. */
export function decodeMarketLedger(data: Uint8Array): MarketLedger | null {
  if (data.length !== MARKET_LEDGER_SIZE || !MAGIC.every((byte, i) => data[i] === byte)) return null;
  const key = (offset: number) => addressOf(data.subarray(offset, offset + 32));
  return { yesMint: key(8), noMint: key(40), settlementMint: key(72), authority: key(104) };
}

/** One settlement rail of a tokenized market: its ledger and outcome mints, at the catalogue's addresses. */
export interface GenesisRail {
  marketLedger: string;
  yesMint: string;
  noMint: string;
  /** Defaults to USDC. */
  settlementMint?: string;
}

/**
 * A tokenized market's accounts: one rail's at the top, or, when `rails` is given (the catalog's
 * markets, whose top-level accounts are their USDC rail's), every rail's there instead.
 */
export interface GenesisMarket extends GenesisRail {
  rails?: readonly GenesisRail[];
}
