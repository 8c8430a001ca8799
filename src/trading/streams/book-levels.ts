/**
 * The ten levels a side of a pair's direct pools, as `/book-stream` sends them (reference §8.4),
 * computed exactly from the constant-product curve of `venues/cpmm.ts` (x · y = k, fee on the input).
 * For a pair (base B, quote Q), all numbers in human units of Q per B:
 *
 * - `mid`: the marginal price without fee, (Q reserve) / (B reserve), of the pair's deepest direct
 *   pool (the most B available; ties: the lower fee), reserves as `/order` sees them (vault balances
 *   less output held for firm quotes). For one pool the best bid, mid · (1 − fee), and the best ask,
 *   mid / (1 − fee), lie on either side of it (mid is their geometric mean).
 * - `tick` = mid · step / 10,000, where step is the smallest of 1, 2, 5, 10, 20, 50, 100, 200, 500 basis
 *   points that puts the first level beyond that pool's fee on both sides (step > fee / (1 − fee)): a
 *   1 bp pool gets 2 bp ticks, 5 bp → 10, 25 or 30 bp → 50, 100 bp → 200. Finer ticks would leave the
 *   first levels inside the fee, where the pool trades nothing.
 * - Level k (1 to 10, nearest to spot first) of `b` is priced p = mid − k·tick, of `a` p = mid + k·tick.
 * - A level's `cumulative_size_human` is the base amount one `/order` trade (direct routes only) can
 *   take from spot out to that level: on `b`, the most B, in whole atomic units, whose sale leaves the
 *   marginal price of the pool `/order` sells it into, fee included, at or above p; on `a`, the most B
 *   whose purchase leaves the marginal cost of the next B, fee included, at or below p. With several
 *   pools `/order` takes, for each size, the one paying the most (costing the least); constant-product
 *   curves cross at most once, so each pool is the choice over one range of sizes, and a level's size
 *   is the largest over those ranges. A level inside the fee carries 0.
 * - `crossed`: one pool's best bid above another's best ask (never with a single pool).
 *
 * What that means for `/order` (exact input, `onlyDirectRoutes=true`, the same pool state), with bid
 * and ask the touches of the pool it takes (γ·y/x and y/(γ·x), γ = 1 − fee) and p the level's price, in
 * atomic units: selling a bid level's size S pays S·√(bid·p) − 1 < outAmount < S·√(bid·p) +
 * (√(bid·p) − p), the curve's integral from spot to S less the pool's rounding (under one unit of Q),
 * plus the marginal price's step to the next whole unit of B. Buying an ask level's size costs
 * S·√(ask·p) less under p − √(ask·p); `/order` given ⌈S·√(ask·p)⌉ of Q pays at least S, and under
 * (1 + p − √(ask·p)) / ask more. So a level's average fill price is the geometric mean of the touch and
 * the level's price, and its marginal price is the level's.
 */
import { uiAmountString } from "../../chain/ui-amount.js";
import { BPS, cpmmAmountOut } from "../spot/venues/cpmm.js";

/** Levels a side. */
export const BOOK_LEVELS = 10;

/** The largest tick step: ten of them leave the tenth bid at half of mid. */
const MAX_TICK_STEP_BPS = 500;
/** Tick steps in basis points of mid, smallest first (see `tickStepBps`). */
const TICK_STEPS_BPS = [1, 2, 5, 10, 20, 50, 100, 200, MAX_TICK_STEP_BPS] as const;

/**
 * The tick step of a pool charging `feeBps`: the smallest step whose first level lies beyond the fee on
 * both sides, (1 + step)(1 − fee) > 1. The largest, 500 bp, keeps the tenth bid above zero; a pool
 * charging more than about 4.76% has its first levels inside the fee.
 */
export function tickStepBps(feeBps: number): number {
  for (const step of TICK_STEPS_BPS) if (step * (10_000 - feeBps) > feeBps * 10_000) return step;
  return MAX_TICK_STEP_BPS;
}

/** One direct pool of a pair, in atomic units: the base and quote it has available, and its fee. */
export interface DirectPool {
  base: bigint;
  quote: bigint;
  feeBps: number;
}

/** A price in atomic units of quote per atomic unit of base, as an exact fraction. */
export interface Price {
  numerator: bigint;
  denominator: bigint;
}

/**
 * The most base `pool` takes in (a sale of base) while its marginal price, fee included, stays at or
 * above `price`: the largest S with x·y·B·γ' / (x·B + S·γ')² ≥ price, where B = 10,000, γ' = B − fee.
 */
export function bidSize(pool: DirectPool, price: Price): bigint {
  const kept = BPS - BigInt(pool.feeBps);
  const scaled = pool.base * BPS;
  const reach = isqrt((pool.quote * kept * scaled * price.denominator) / price.numerator);
  return reach > scaled ? (reach - scaled) / kept : 0n;
}

/**
 * The most base `pool` pays out (a purchase of base) while the marginal cost of the next unit, fee
 * included, stays at or below `price`: the largest S with x·y·B / (γ'·(x − S)²) ≤ price.
 */
export function askSize(pool: DirectPool, price: Price): bigint {
  const kept = BPS - BigInt(pool.feeBps);
  const left = ceilSqrt(ceilDiv(pool.quote * pool.base * BPS * price.denominator, kept * price.numerator));
  return pool.base > left ? pool.base - left : 0n;
}

/** What selling `size` base into the pool pays, exactly as the pool computes it. */
function bidOut(pool: DirectPool, size: bigint): bigint {
  return cpmmAmountOut(pool.base, pool.quote, size, pool.feeBps);
}

/** The least quote for which the pool pays out `size` base; undefined when it cannot. */
function askCost(pool: DirectPool, size: bigint): bigint | undefined {
  if (size >= pool.base) return undefined;
  return ceilDiv(size * pool.quote * BPS, (BPS - BigInt(pool.feeBps)) * (pool.base - size));
}

/** ⌊√n⌋ for n ≥ 0, exactly. */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  // Newton's method from the float estimate: one step lands at or above the root, then it descends.
  let root = BigInt(Math.floor(Math.sqrt(Number(n))));
  root = (root + n / root) >> 1n;
  for (;;) {
    const next = (root + n / root) >> 1n;
    if (next >= root) return root;
    root = next;
  }
}

/** ⌈√n⌉ for n ≥ 0, exactly. */
function ceilSqrt(n: bigint): bigint {
  const root = isqrt(n);
  return root * root === n ? root : root + 1n;
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/** One side of the book, seen through the sizes a trade of each pool can take. */
interface BookSide {
  /** The pool's own size to `price` (see `bidSize`, `askSize`). */
  size(pool: DirectPool, price: Price): bigint;
  /**
   * What a trade of `size` gets from each pool, comparable by `better`: the output of a sale, the cost
   * of a purchase (undefined where the pool cannot pay it out).
   */
  terms(pools: readonly DirectPool[], size: bigint): (bigint | undefined)[];
  better(a: bigint, b: bigint): boolean;
  /** The index of the pool with the best touch: the choice for the smallest sizes. */
  touch(pools: readonly DirectPool[]): number;
}

/** The first index whose value is the best by `better` (strictly better replaces: ties keep the first). */
function firstBest<T>(values: readonly (T | undefined)[], better: (a: T, b: T) => boolean): number {
  let best = 0;
  values.forEach((value, index) => {
    const current = values[best];
    if (value !== undefined && (current === undefined || better(value, current))) best = index;
  });
  return best;
}

const BID: BookSide = {
  size: bidSize,
  terms: (pools, size) => pools.map((pool) => bidOut(pool, size)),
  better: (a, b) => a > b,
  // The highest γ·y/x.
  touch: (pools) =>
    firstBest(
      pools,
      (a, b) => (BPS - BigInt(a.feeBps)) * a.quote * b.base > (BPS - BigInt(b.feeBps)) * b.quote * a.base,
    ),
};

const ASK: BookSide = {
  size: askSize,
  terms: (pools, size) => pools.map((pool) => askCost(pool, size)),
  better: (a, b) => a < b,
  // The lowest y / (γ·x).
  touch: (pools) =>
    firstBest(
      pools,
      (a, b) => a.quote * (BPS - BigInt(b.feeBps)) * b.base < b.quote * (BPS - BigInt(a.feeBps)) * a.base,
    ),
};

/** The index of the pool `/order` takes for `size`: the best terms, the first on a tie (as the router). */
function choice(side: BookSide, pools: readonly DirectPool[], size: bigint): number {
  return firstBest(side.terms(pools, size), side.better);
}

/** Whether no other pool offers better terms than `pool` for `size`. */
function unbeaten(side: BookSide, pools: readonly DirectPool[], pool: number, size: bigint): boolean {
  const terms = side.terms(pools, size);
  const own = terms[pool];
  if (own === undefined) return false;
  return terms.every((other) => other === undefined || !side.better(other, own));
}

/** The sizes from `from` to `to` over which `/order` takes the pool at `pool`. */
interface Range {
  pool: number;
  from: bigint;
  to: bigint;
}

/**
 * The ranges of sizes, from 1 up to `limit`, over which `/order` takes each pool. Two constant-product
 * curves cross at most once, so each pool is the choice over one range: from where it takes over, a
 * binary search finds where another beats it.
 */
function choices(side: BookSide, pools: readonly DirectPool[], limit: bigint): Range[] {
  const ranges: Range[] = [];
  let from = 1n;
  // Below a unit of output every pool ties: the smallest sizes go to the best touch.
  let pool = side.touch(pools);
  // A pool takes over at most once each; the bound only guards against rounding at near-ties.
  for (let round = 0; round <= pools.length * 2 && from <= limit; round++) {
    let last = from;
    let beaten = limit + 1n;
    if (unbeaten(side, pools, pool, limit)) last = limit;
    else {
      while (beaten - last > 1n) {
        const middle = (last + beaten) >> 1n;
        if (unbeaten(side, pools, pool, middle)) last = middle;
        else beaten = middle;
      }
    }
    ranges.push({ pool, from, to: last });
    from = last + 1n;
    pool = choice(side, pools, from);
  }
  return ranges;
}

/** The side's ten cumulative sizes (atomic base) at `prices`, nearest first. */
function sideSizes(side: BookSide, pools: readonly DirectPool[], prices: readonly Price[]): bigint[] {
  const own = prices.map((price) => pools.map((pool) => side.size(pool, price)));
  if (pools.length === 1) return own.map((sizes) => sizes[0] as bigint);
  const limit = own.at(-1)?.reduce((most, size) => (size > most ? size : most), 1n) ?? 1n;
  const ranges = choices(side, pools, limit);
  return own.map((sizes) => {
    let largest = 0n;
    for (const { pool, from, to } of ranges) {
      const size = sizes[pool] as bigint;
      if (size < from) continue;
      const reach = size < to ? size : to;
      if (reach > largest) largest = reach;
    }
    return largest;
  });
}

export interface Level {
  price: number;
  cumulative_size_human: number;
}

export interface PairBook {
  mid: number;
  tick: number;
  crossed: boolean;
  b: Level[];
  a: Level[];
}

/**
 * The book of a pair from its direct pools, in the router's order (`pools` non-empty, each with both
 * reserves positive), with the base and quote tokens' decimals.
 */
export function pairBook(pools: readonly DirectPool[], decimals: { base: number; quote: number }): PairBook {
  const deepest =
    pools[firstBest(pools, (a, b) => a.base > b.base || (a.base === b.base && a.feeBps < b.feeBps))];
  if (!deepest) throw new RangeError("a pair book needs a pool");
  const step = tickStepBps(deepest.feeBps);
  // Level k's price, exactly: mid · (10,000 ∓ k·step) / 10,000 with mid = y / x of the deepest pool.
  const price = (offset: number): Price => ({
    numerator: deepest.quote * BigInt(10_000 + offset),
    denominator: deepest.base * BPS,
  });
  const offsets = Array.from({ length: BOOK_LEVELS }, (_, k) => (k + 1) * step);
  const bids = sideSizes(
    BID,
    pools,
    offsets.map((offset) => price(-offset)),
  );
  const asks = sideSizes(
    ASK,
    pools,
    offsets.map((offset) => price(offset)),
  );
  const mid = Number(deepest.quote) / 10 ** decimals.quote / (Number(deepest.base) / 10 ** decimals.base);
  const human = (atomic: bigint) => Number(uiAmountString(atomic, decimals.base));
  const level = (sign: number, sizes: bigint[]) =>
    offsets.map((offset, k) => ({
      price: (mid * (10_000 + sign * offset)) / 10_000,
      cumulative_size_human: human(sizes[k] as bigint),
    }));
  const bestBid = pools[BID.touch(pools)] as DirectPool;
  const bestAsk = pools[ASK.touch(pools)] as DirectPool;
  // γ_b·y_b/x_b > y_a/(γ_a·x_a), in integers.
  const crossed =
    (BPS - BigInt(bestBid.feeBps)) * bestBid.quote * (BPS - BigInt(bestAsk.feeBps)) * bestAsk.base >
    BPS * BPS * bestAsk.quote * bestBid.base;
  return { mid, tick: (mid * step) / 10_000, crossed, b: level(-1, bids), a: level(1, asks) };
}
