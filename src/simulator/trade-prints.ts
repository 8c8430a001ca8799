/**
 * Trades the simulator's accounts made, printed on the tape beside the seeded trades of the markets'
 * dynamics: what GetTrades and the candles read in the same minute, so a fill shows on the tape at once.
 */
import type { SimulatedTrade } from "./dynamics.js";

const MINUTE = 60;
/** Prints kept per market: the oldest are forgotten past this. */
const PRINTS_PER_MARKET = 10_000;

export class TradePrints {
  /** ticker → prints, oldest first. */
  private readonly byTicker = new Map<string, SimulatedTrade[]>();
  private readonly byId = new Map<string, SimulatedTrade>();

  print(trade: SimulatedTrade): void {
    const prints = this.byTicker.get(trade.ticker) ?? [];
    // Prints come in clock order; one from a clock set back is kept in order all the same.
    let at = prints.length;
    while (at > 0 && (prints[at - 1] as SimulatedTrade).time > trade.time) at--;
    prints.splice(at, 0, trade);
    if (prints.length > PRINTS_PER_MARKET) {
      const [forgotten] = prints.splice(0, 1);
      if (forgotten) this.byId.delete(forgotten.tradeId);
    }
    this.byTicker.set(trade.ticker, prints);
    this.byId.set(trade.tradeId, trade);
  }

  /** `ticker`'s prints within Unix minute `minute`. */
  inMinute(ticker: string, minute: number): SimulatedTrade[] {
    const prints = this.byTicker.get(ticker);
    if (!prints) return [];
    const start = minute * MINUTE;
    let low = 0;
    let high = prints.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((prints[middle] as SimulatedTrade).time < start) low = middle + 1;
      else high = middle;
    }
    const found: SimulatedTrade[] = [];
    for (let i = low; i < prints.length && (prints[i] as SimulatedTrade).time < start + MINUTE; i++) {
      found.push(prints[i] as SimulatedTrade);
    }
    return found;
  }

  /** A print by its trade id, while it is kept. */
  find(tradeId: string): SimulatedTrade | undefined {
    return this.byId.get(tradeId);
  }
}
