/**
 * The demo pools a fresh sandbox venue starts with: 30 constant-product pools over USDC, wrapped SOL
 * and the ten demo tokens, each side worth what its token's reference price says, so routes and
 * price impacts look like a real market's.
 */
import type { Address } from "@solana/kit";
import { demoTokens } from "../../../chain/demo-tokens.js";
import { WRAPPED_SOL_MINT } from "../../../chain/programs.js";
import { USDC_MINT } from "../../../contract/markets.js";
import { fundPool, type PoolFunding } from "./create.js";
import { claimDemoPools, insertPool } from "./store.js";

/** Reference prices in USD of the demo pools' tokens, by symbol. */
export const DEMO_PRICES_USD: Readonly<Record<string, number>> = {
  USDC: 1,
  SOL: 180,
  dBTC: 95_000,
  dETH: 3_400,
  dUSDT: 1,
  dJUP: 0.8,
  dBONK: 0.00002,
  dJTO: 2.5,
  dPYTH: 0.3,
  dRAY: 3,
  dORCA: 2.5,
  dmSOL: 220,
};

/** [symbol A, symbol B, USD depth of each side, fee in bps]. */
const DEMO_POOLS: readonly [string, string, number, number][] = [
  ["SOL", "USDC", 4_000_000, 25],
  ["SOL", "USDC", 800_000, 5],
  ["dBTC", "USDC", 3_000_000, 30],
  ["dETH", "USDC", 2_500_000, 30],
  ["dUSDT", "USDC", 5_000_000, 1],
  ["dJUP", "USDC", 600_000, 30],
  ["dBONK", "USDC", 400_000, 100],
  ["dJTO", "USDC", 300_000, 30],
  ["dPYTH", "USDC", 250_000, 30],
  ["dRAY", "USDC", 350_000, 30],
  ["dORCA", "USDC", 200_000, 30],
  ["dmSOL", "USDC", 500_000, 30],
  ["dBTC", "SOL", 1_500_000, 30],
  ["dETH", "SOL", 1_200_000, 30],
  ["dUSDT", "SOL", 900_000, 25],
  ["dJUP", "SOL", 400_000, 30],
  ["dBONK", "SOL", 600_000, 100],
  ["dJTO", "SOL", 250_000, 30],
  ["dPYTH", "SOL", 150_000, 30],
  ["dRAY", "SOL", 300_000, 30],
  ["dORCA", "SOL", 180_000, 30],
  ["dmSOL", "SOL", 2_000_000, 5],
  ["dBTC", "dETH", 800_000, 30],
  ["dETH", "dUSDT", 700_000, 30],
  ["dBTC", "dUSDT", 900_000, 30],
  ["dJUP", "dBONK", 120_000, 100],
  ["dRAY", "dORCA", 90_000, 30],
  ["dPYTH", "dJUP", 80_000, 30],
  ["dJTO", "dmSOL", 150_000, 30],
  ["dUSDT", "dJUP", 100_000, 30],
];

/**
 * Creates the demo pools once per database (the first instance to claim them does it); returns how
 * many it created.
 */
export async function createDemoPools(funding: PoolFunding, venueSeed: string): Promise<number> {
  if (!(await claimDemoPools(funding.db))) return 0;
  const tokens = new Map<string, { address: Address; decimals: number }>([
    ["USDC", { address: USDC_MINT, decimals: 6 }],
    ["SOL", { address: WRAPPED_SOL_MINT, decimals: 9 }],
    ...demoTokens(venueSeed).map((token) => [token.symbol, token] as const),
  ]);
  const specs = DEMO_POOLS.map(([symbolA, symbolB, depthUsd, feeBps]) => {
    const a = tokens.get(symbolA);
    const b = tokens.get(symbolB);
    if (!a || !b) throw new Error(`demo pool ${symbolA}/${symbolB} names an unknown token`);
    return {
      mintA: a.address,
      mintB: b.address,
      amountA: units(depthUsd / (DEMO_PRICES_USD[symbolA] ?? 1), a.decimals),
      amountB: units(depthUsd / (DEMO_PRICES_USD[symbolB] ?? 1), b.decimals),
      feeBps,
    };
  });
  // Funded together (their grants land in the same few commits, where one pool after another waited
  // for each of its own), then stored in the list's order.
  const funded = await Promise.all(specs.map((spec) => fundPool(funding, spec)));
  for (const { record, tokens: pair } of funded) await insertPool(funding.db, record, pair);
  return DEMO_POOLS.length;
}

/** `amount` whole tokens in base units (rounded to a whole token: the depth is only indicative). */
function units(amount: number, decimals: number): bigint {
  return BigInt(Math.round(amount)) * 10n ** BigInt(decimals);
}
