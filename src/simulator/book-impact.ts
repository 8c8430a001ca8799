/**
 * The depth takers have taken from the simulated books. A market's resting book is a pure function of
 * its dynamics and the clock; a fill takes contracts from the levels it crossed, and what it took comes
 * back exponentially (half of it every half-life), so a book answers a trade and then refills toward the
 * book the dynamics rest. Given the same fills at the same times, every read gives the same book.
 */
import type { BookLevels, Quote } from "./dynamics.js";
import { ONE_DOLLAR } from "./dynamics.js";
import type { SimulatedMarket } from "./exchange.js";

/** Which side of Kalshi's book a level rests on: bids for YES, or bids for NO. */
export type BookSideName = keyof BookLevels;

interface Taken {
  /** Contracts missing from the level at `at`. */
  contracts: number;
  /** Unix seconds. */
  at: number;
}

/** Taken depth below this many contracts has refilled. */
const REFILLED = 0.5;

export class BookImpact {
  /** ticker → `${side}:${price}` → what is missing there. */
  private readonly taken = new Map<string, Map<string, Taken>>();

  constructor(private readonly halfLifeSeconds: number) {
    if (!(halfLifeSeconds > 0)) throw new Error("the book refill half-life must be positive");
  }

  /** Records that a taker took `contracts` at `price` (basis points) of `side` of `ticker`'s book at `now`. */
  take(ticker: string, side: BookSideName, price: number, contracts: number, now: number): void {
    const levels = this.taken.get(ticker) ?? new Map<string, Taken>();
    const key = `${side}:${price}`;
    levels.set(key, { contracts: this.missing(levels.get(key), now) + contracts, at: now });
    this.taken.set(ticker, levels);
  }

  /** Whether some of `ticker`'s book is still missing at `now`: its book is then not the dynamics' own. */
  touches(ticker: string, now: number): boolean {
    const levels = this.taken.get(ticker);
    if (!levels) return false;
    for (const [key, taken] of levels) {
      if (this.missing(taken, now) < REFILLED) levels.delete(key);
    }
    if (levels.size === 0) this.taken.delete(ticker);
    return levels.size > 0;
  }

  /** `book` of `ticker` at `now` less what is still missing from it; emptied levels are left out. */
  apply(ticker: string, book: BookLevels, now: number): BookLevels {
    if (!this.touches(ticker, now)) return book;
    const levels = this.taken.get(ticker) as Map<string, Taken>;
    const side = (name: BookSideName): [number, number][] =>
      book[name]
        .map(([price, size]): [number, number] => {
          const missing = Math.round(this.missing(levels.get(`${name}:${price}`), now));
          return [price, Math.max(0, size - missing)];
        })
        .filter(([, size]) => size > 0);
    return { yes: side("yes"), no: side("no") };
  }

  /** What remains missing of `taken` at `now`. */
  private missing(taken: Taken | undefined, now: number): number {
    if (!taken) return 0;
    const elapsed = Math.max(0, now - taken.at);
    return taken.contracts * 2 ** (-elapsed / this.halfLifeSeconds);
  }
}

/** `market`'s resting book at `now` as takers left it, or null when a market in its status shows none. */
export function restingBook(market: SimulatedMarket, impact: BookImpact, now: number): BookLevels | null {
  const book = market.dynamics.bookAt(now, market.lifecycle.status);
  return book && impact.apply(market.record.ticker, book, now);
}

/**
 * `market`'s top of book at `now` as takers left it, or undefined while its book is the dynamics' own
 * (the dynamics' quote is then the answer). A side taken bare keeps the dynamics' price.
 */
export function impactedQuote(market: SimulatedMarket, impact: BookImpact, now: number): Quote | undefined {
  if (!impact.touches(market.record.ticker, now)) return undefined;
  const quote = market.dynamics.quoteAt(now, market.lifecycle.status);
  const book = restingBook(market, impact, now);
  if (!quote || !book) return undefined;
  const [bestYes] = book.yes;
  const [bestNo] = book.no;
  return {
    yesBid: bestYes ? bestYes[0] : quote.yesBid,
    yesAsk: bestNo ? ONE_DOLLAR - bestNo[0] : quote.yesAsk,
  };
}
