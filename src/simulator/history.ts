/**
 * The simulator's two tiers, as Kalshi partitions its data: live endpoints keep a window of recent
 * markets, trades and candles, and what is older is served only under `/historical`. One cutoff, the
 * exchange's clock less the window, bounds markets (by settlement time) and trades (by creation time).
 */
import type { SimulatedMarket } from "./exchange.js";

/** Kalshi's target for its live window: about three months. */
export const DEFAULT_HISTORY_WINDOW_SECONDS = 90 * 86_400;
const MINUTE = 60;

export class HistoryWindow {
  constructor(
    private readonly windowSeconds: number = DEFAULT_HISTORY_WINDOW_SECONDS,
    /** How long trades and candles are kept at all (undefined: forever, as Kalshi keeps them). */
    private readonly retentionSeconds?: number,
  ) {}

  /** The oldest moment whose trades and candles the exchange still serves, in either tier. */
  keptFrom(now: number): number {
    return this.retentionSeconds === undefined ? 0 : now - this.retentionSeconds;
  }

  /** The first moment a candle of `periodSeconds` may start at and still be served whole. */
  firstCandleStart(start: number, periodSeconds: number, now: number): number {
    const kept = this.keptFrom(now);
    return kept === 0
      ? start
      : Math.max(start, Math.ceil(kept / periodSeconds) * periodSeconds + periodSeconds);
  }

  /** The cutoff at `now`, on a whole minute: records before it are historical. */
  cutoff(now: number): number {
    return Math.floor((now - this.windowSeconds) / MINUTE) * MINUTE;
  }

  /** Whether `market` settled before the cutoff, so that only `/historical` serves it and its candles. */
  isHistorical(market: SimulatedMarket, now: number): boolean {
    const settled = market.lifecycle.settledTs;
    return settled !== null && settled < this.cutoff(now);
  }
}
