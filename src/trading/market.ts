/**
 * What the router sees of a venue's market: two mints and a price for a given input. Venues
 * (`venues/cpmm.ts` pools, the prediction venue) implement it; the router never knows which it has.
 */
import type { Address } from "@solana/kit";

export type ExecutionMode = "sync" | "async";

export interface LegQuote {
  outAmount: bigint;
  /** The output at the market's marginal price, fee included, impact excluded (for price impact). */
  spotOutAmount: number;
  /** The most input the leg takes (a prediction buy quotes the whole budget). */
  inAmount: bigint;
  /** What a fill actually spends when less than `inAmount`: whole contracts cost less than the budget. */
  spent?: bigint;
}

export interface TradingMarket {
  /** Venue name as listed by `GET /venues`. */
  readonly venue: string;
  /** The market's address (a pool's authority, a prediction market's ledger). */
  readonly key: Address;
  readonly mints: readonly [Address, Address];
  readonly executionMode: ExecutionMode;
  /** Prices `amountIn` of `inputMint` (one of `mints`); null when the market cannot fill any of it. */
  quote(inputMint: Address, amountIn: bigint): LegQuote | null;
  /**
   * The output `quote` would give, in floating point: cheap enough to rank hundreds of markets per
   * request, after which only the best are priced exactly. `approximateAmountIn` is `Number(amountIn)`,
   * converted once by the caller rather than once per market.
   */
  estimate(inputMint: Address, amountIn: bigint, approximateAmountIn: number): number;
}
