/**
 * The simulated exchange's market motion. Every number is a pure function of the market's ticker and
 * a time, so any past range can be asked for again and comes back the same, whatever was asked
 * before: prices follow smooth seeded noise anchored to the catalogue's quotes at its moment, trades
 * happen in seeded minutes at the quotes of that minute, and books rest around the quotes.
 */

import type { MarketRecord, MarketStatus } from "../contract/markets.js";
import { hash128 } from "../demo/random.js";

const MINUTE = 60;
/** $1 in basis points: prices are kept in basis points (0.4200 = 4200). */
export const ONE_DOLLAR = 10_000;
const CENT = 100;
/** Periods (seconds) and amplitudes (in log-odds) of the noise layers that move a market's belief. */
const NOISE_LAYERS: readonly (readonly [number, number])[] = [
  [5 * MINUTE, 0.04],
  [60 * MINUTE, 0.1],
  [6 * 60 * MINUTE, 0.18],
  [36 * 60 * MINUTE, 0.3],
];
/** Price levels shown on each side of a book. */
const BOOK_LEVELS = 8;
/** Salts that keep the seeded draws of different purposes independent. */
const SALT = { trade: 1, tradeTime: 2, tradeCount: 3, tradeSide: 4, tradeId: 5, book: 6 } as const;

const QUOTED_STATUSES: ReadonlySet<MarketStatus> = new Set(["active", "inactive", "closed"]);
const BOOK_STATUSES: ReadonlySet<MarketStatus> = new Set(["active", "inactive"]);

/** murmur3's 32-bit finalizer over a seed and two integers: the source of every seeded draw here. */
function mix(seed: number, a: number, b: number): number {
  let h = seed ^ Math.imul(a | 0, 0x9e37_79b1) ^ Math.imul((b | 0) + 0x7f4a_7c15, 0x85eb_ca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85eb_ca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2_ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seeded uniform draw in [0, 1). */
function unit(seed: number, a: number, b: number): number {
  return mix(seed, a, b) / 4_294_967_296;
}

const logit = (p: number) => Math.log(p / (1 - p));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/** A bid/ask pair in basis points. */
export interface Quote {
  yesBid: number;
  yesAsk: number;
}

export interface SimulatedTrade {
  tradeId: string;
  ticker: string;
  /** Unix seconds. */
  time: number;
  count: number;
  takerSide: "yes" | "no";
  /** Basis points. */
  yesPrice: number;
}

export interface BookLevels {
  /** [price in basis points, contracts], best first. */
  yes: [number, number][];
  no: [number, number][];
}

/** Reads a dollar price string ("0.4200") as basis points. */
function basisPoints(price: string | null): number | null {
  return price === null ? null : Math.round(Number(price) * ONE_DOLLAR);
}

/** One market's seeded motion around the catalogue's quotes at `moment`. */
export class MarketDynamics {
  readonly ticker: string;
  private readonly seed: number;
  private readonly anchorBid: number;
  private readonly spread: number;
  private readonly anchorMid: number;
  private readonly anchorNoise: number;
  /** Chance that a given minute has a trade. */
  private readonly tradeRate: number;
  /** Typical resting size of a book level, in contracts. */
  private readonly depth: number;

  constructor(
    private readonly record: MarketRecord,
    moment: number,
  ) {
    this.ticker = record.ticker;
    this.seed = hash128(`oddsgate-simulator/${record.ticker}`)[0];
    const bid = basisPoints(record.yesBid);
    const ask = basisPoints(record.yesAsk);
    // Markets the catalogue shows no quote for (not yet open, or settled) start from an even book.
    this.anchorBid = bid ?? 4_900;
    this.spread = bid !== null && ask !== null && ask > bid ? ask - bid : 2 * CENT;
    this.anchorMid = clamp((this.anchorBid + this.spread / 2) / ONE_DOLLAR, 0.005, 0.995);
    this.anchorNoise = this.noise(this.tradingTime(moment));
    const perDay = Number(record.volume24hFp ?? "0") || record.volume / 30;
    this.tradeRate = clamp(perDay / (24 * 60 * 50), 0.02, 0.9);
    this.depth = clamp(Math.round(perDay / 40), 20, 5_000);
  }

  /** The market's belief in YES at `t` (a probability), frozen outside its trading hours. */
  probabilityAt(t: number): number {
    const shift = this.noise(this.tradingTime(t)) - this.anchorNoise;
    return clamp(sigmoid(logit(this.anchorMid) + shift), 0.005, 0.995);
  }

  /** Top of book at `t`, or null when a market in `status` shows none. Equals the catalogue's at its moment. */
  quoteAt(t: number, status: MarketStatus): Quote | null {
    if (!QUOTED_STATUSES.has(status)) return null;
    const move = Math.round(((this.probabilityAt(t) - this.anchorMid) * ONE_DOLLAR) / CENT) * CENT;
    const yesBid = clamp(this.anchorBid + move, CENT, ONE_DOLLAR - CENT - this.spread);
    return { yesBid, yesAsk: yesBid + this.spread };
  }

  /** The resting book at `t`: both sides bid below the quote, deeper away from it. */
  bookAt(t: number, status: MarketStatus): BookLevels | null {
    const quote = BOOK_STATUSES.has(status) ? this.quoteAt(t, status) : null;
    if (!quote) return null;
    const minute = Math.floor(t / MINUTE);
    const side = (best: number, salt: number): [number, number][] => {
      const levels: [number, number][] = [];
      let price = best;
      for (let level = 0; level < BOOK_LEVELS && price > 0; level++) {
        const size = Math.round(
          this.depth * (0.3 + 1.7 * unit(this.seed, SALT.book * salt, minute * 16 + level)),
        );
        levels.push([price, Math.max(1, size * (1 + level))]);
        // Tails trade in tenths of a cent, as the exchange allows near 0 and 1.
        price -= price <= 10 * CENT ? CENT / 10 : CENT;
      }
      return levels;
    };
    return { yes: side(quote.yesBid, 1), no: side(ONE_DOLLAR - quote.yesAsk, 2) };
  }

  /** The trade of minute `minute` (Unix minutes), if one happened then. */
  tradeInMinute(minute: number): SimulatedTrade | null {
    const start = minute * MINUTE;
    if (start < this.record.openTime || start >= this.record.closeTime) return null;
    if (this.record.status === "initialized") return null;
    if (unit(this.seed, SALT.trade, minute) >= this.tradeRate) return null;
    const time = start + Math.floor(unit(this.seed, SALT.tradeTime, minute) * MINUTE);
    const quote = this.quoteAt(time, "active") as Quote;
    const takerSide = unit(this.seed, SALT.tradeSide, minute) < 0.5 ? "yes" : "no";
    const count = 1 + Math.floor(unit(this.seed, SALT.tradeCount, minute) ** 3 * 200);
    return {
      tradeId: this.tradeId(minute),
      ticker: this.ticker,
      time,
      count,
      takerSide,
      // A YES taker lifts the ask; a NO taker sells YES into the bid.
      yesPrice: takerSide === "yes" ? quote.yesAsk : quote.yesBid,
    };
  }

  /** The moment a price is read at: trading stops at the close and has not begun before the open. */
  private tradingTime(t: number): number {
    return clamp(t, this.record.openTime, this.record.closeTime);
  }

  private noise(t: number): number {
    let total = 0;
    for (const [period, amplitude] of NOISE_LAYERS) {
      const x = t / period;
      const cell = Math.floor(x);
      const f = x - cell;
      const smooth = f * f * (3 - 2 * f);
      const from = unit(this.seed, period, cell) * 2 - 1;
      const to = unit(this.seed, period, cell + 1) * 2 - 1;
      total += amplitude * (from + (to - from) * smooth);
    }
    return total;
  }

  /** A UUID-shaped id, the same for the same minute of the same market. */
  private tradeId(minute: number): string {
    const hex = [0, 1, 2, 3]
      .map((part) =>
        mix(this.seed, SALT.tradeId * 8 + part, minute)
          .toString(16)
          .padStart(8, "0"),
      )
      .join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

/**
 * The moment a catalogue describes, read from its markets: after every opened market's open, before
 * every active market's close and every unopened market's open. The demo catalogue is generated at noon
 * UTC, so a noon inside that window is preferred.
 */
export function catalogueMoment(markets: readonly MarketRecord[], fallback: number): number {
  let from = 0;
  let until = Number.POSITIVE_INFINITY;
  for (const market of markets) {
    if (market.status === "initialized") until = Math.min(until, market.openTime);
    else from = Math.max(from, market.openTime);
    if (market.status === "active" || market.status === "inactive") {
      until = Math.min(until, market.closeTime);
    }
  }
  if (!(from < until) || !Number.isFinite(until)) return fallback;
  const DAY = 86_400;
  const noon = Math.ceil((from - DAY / 2) / DAY) * DAY + DAY / 2;
  return noon < until ? noon : from;
}
