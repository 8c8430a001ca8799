/**
 * The demo SPL tokens the sandbox chain creates at genesis. Their addresses are derived from the
 * venue seed (domain-separated SHA-256, like the market addresses), so every instance sharing a
 * database agrees on them without a lookup table.
 */
import { createHash } from "node:crypto";
import type { Address } from "@solana/kit";
import { addressOf } from "./base58.js";

export interface DemoToken {
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
}

const DEMO_TOKEN_SPECS: readonly Omit<DemoToken, "address">[] = [
  { symbol: "dBTC", name: "Demo Bitcoin", decimals: 8 },
  { symbol: "dETH", name: "Demo Ether", decimals: 8 },
  { symbol: "dUSDT", name: "Demo Tether USD", decimals: 6 },
  { symbol: "dJUP", name: "Demo Jupiter", decimals: 6 },
  { symbol: "dBONK", name: "Demo Bonk", decimals: 5 },
  { symbol: "dJTO", name: "Demo Jito", decimals: 9 },
  { symbol: "dPYTH", name: "Demo Pyth", decimals: 6 },
  { symbol: "dRAY", name: "Demo Raydium", decimals: 6 },
  { symbol: "dORCA", name: "Demo Orca", decimals: 6 },
  { symbol: "dmSOL", name: "Demo Marinade SOL", decimals: 9 },
];

/** The demo tokens of the venue with this seed. */
export function demoTokens(venueSeed: string): DemoToken[] {
  return DEMO_TOKEN_SPECS.map((spec) => ({
    ...spec,
    address: addressOf(
      createHash("sha256").update(`oddsgate/demo-token\0${venueSeed}\0${spec.symbol}`).digest(),
    ),
  }));
}
