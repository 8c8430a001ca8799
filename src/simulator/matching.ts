/**
 * What a taker order takes from a book in Kalshi's representation, where both sides are bids: a YES
 * bid at y, and a NO bid at n, which is an offer of YES at $1 − n. A YES buyer (a bid) lifts the NO bids,
 * best (highest) first; a YES seller (an ask) hits the YES bids, best first; each level fills at its own
 * price up to the order's limit.
 */
import type { BookSideName } from "./book-impact.js";
import { type BookLevels, ONE_DOLLAR } from "./dynamics.js";
import type { BookSide } from "./ledger.js";

export interface Take {
  /** The book side and price (basis points) of the level taken from. */
  level: BookSideName;
  levelPrice: number;
  /** The YES price it traded at, basis points. */
  yesPrice: number;
  count: number;
}

/** The levels a `bookSide` taker with YES limit `limit` takes for at most `count` contracts, in order. */
export function walkBook(book: BookLevels, bookSide: BookSide, limit: number, count: number): Take[] {
  const level: BookSideName = bookSide === "bid" ? "no" : "yes";
  const takes: Take[] = [];
  let wanted = count;
  for (const [levelPrice, size] of book[level]) {
    if (wanted === 0) break;
    const yesPrice = level === "no" ? ONE_DOLLAR - levelPrice : levelPrice;
    if (bookSide === "bid" ? yesPrice > limit : yesPrice < limit) break;
    const taken = Math.min(size, wanted);
    takes.push({ level, levelPrice, yesPrice, count: taken });
    wanted -= taken;
  }
  return takes;
}
