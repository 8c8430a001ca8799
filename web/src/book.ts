/** The order book as a yes-price ladder: yes bids as they are, yes asks from the no bids (1 − price). */
import type { OrderBook } from "./api";

export interface Level {
  /** Yes price in dollars, 4 decimals. */
  price: string;
  size: number;
  /** Contracts at this price and every better one. */
  cumulative: number;
}

/** Bids best (highest) first and asks best (lowest) first, with cumulative sizes. */
export function ladder(book: OrderBook): { bids: Level[]; asks: Level[] } {
  const accumulate = (levels: [string, number][]) => {
    let total = 0;
    return levels.map(([price, size]) => {
      total += size;
      return { price, size, cumulative: total };
    });
  };
  const bids = Object.entries(book.yes_bids)
    .map(([price, size]): [string, number] => [price, size])
    .sort((a, b) => Number(b[0]) - Number(a[0]));
  const asks = Object.entries(book.no_bids)
    .map(([price, size]): [string, number] => [(1 - Number(price)).toFixed(4), size])
    .sort((a, b) => Number(a[0]) - Number(b[0]));
  return { bids: accumulate(bids), asks: accumulate(asks) };
}

/**
 * The USDC (millionths) that buys `contracts` up the given asks, best first, or null when the book
 * does not hold that many.
 */
export function costOf(asks: readonly Level[], contracts: number): bigint | null {
  let left = contracts;
  let cost = 0n;
  for (const level of asks) {
    const take = Math.min(left, level.size);
    cost += BigInt(Math.round(Number(level.price) * 1_000_000)) * BigInt(take);
    left -= take;
    if (left === 0) return cost;
  }
  return null;
}
