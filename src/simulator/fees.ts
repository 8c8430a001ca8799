/**
 * Kalshi's trading fee on a fill: ⌈0.07 × multiplier × C × P × (1 − P)⌉, rounded up to $0.0001 as a
 * direct member's balance is kept (docs.kalshi.com/getting_started/fee_rounding); a fill of 1 at $0.52
 * pays $0.0175. Exact: integers only, in centicents (basis points of a dollar, the unit of prices here).
 */
import type { Series } from "../contract/markets.js";
import { ONE_DOLLAR } from "./dynamics.js";

/** The taker rate of a quadratic fee, in millionths. */
const TAKER_RATE_PPM = 70_000n;
/** The maker rate, in millionths, of the series whose fee type charges makers too. */
const MAKER_RATE_PPM = 17_500n;
const PPM = 1_000_000n;

/** The fee, in centicents, a taker pays for `count` contracts at `price` (basis points) on `series`. */
export function takerFee(series: Series | undefined, price: number, count: number): number {
  // Every series Kalshi lists charges the quadratic fee, scaled by its multiplier (1 unless it says so).
  return quadraticFee(TAKER_RATE_PPM, series, price, count);
}

/** The fee a resting order's fill pays: nothing unless its series charges makers (`quadratic_with_maker_fees`). */
export function makerFee(series: Series | undefined, price: number, count: number): number {
  if (series?.feeType !== "quadratic_with_maker_fees") return 0;
  return quadraticFee(MAKER_RATE_PPM, series, price, count);
}

function quadraticFee(ratePpm: bigint, series: Series | undefined, price: number, count: number): number {
  const multiplierPpm = BigInt(Math.round((series?.feeMultiplier ?? 1) * 1_000_000));
  const p = BigInt(price);
  const numerator = ratePpm * multiplierPpm * BigInt(count) * p * (BigInt(ONE_DOLLAR) - p);
  // rate × C × (p / $1) × (($1 − p) / $1) dollars, in centicents: the product over PPM² × $1.
  const denominator = PPM * PPM * BigInt(ONE_DOLLAR);
  return Number((numerator + denominator - 1n) / denominator);
}
