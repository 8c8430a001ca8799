import type { Following } from "../market-feed.js";
import { BookReader } from "./book-reader.js";
import type { UpstreamReading } from "./options.js";
import { PriceReader } from "./price-reader.js";
import { TradeReader } from "./trade-reader.js";

/** The leader's side of the stream: reads from the upstream what the deployment follows, into the feed. */
export class UpstreamPoller {
  private readonly books: BookReader;
  private readonly prices: PriceReader;
  private readonly trades: TradeReader;

  constructor(
    private readonly reading: UpstreamReading,
    /** The tickers whose latest price or book this instance keeps. */
    private readonly keptTickers: (channel: "prices" | "orderbook") => Iterable<string>,
  ) {
    this.books = new BookReader(reading);
    this.prices = new PriceReader(reading);
    this.trades = new TradeReader(reading);
  }

  /** One period: reads what is followed, then forgets what nobody follows. */
  async poll(following: Following): Promise<void> {
    const { logFailure } = this.reading;
    await Promise.all([
      this.books.poll(following.orderbook).catch((error: unknown) => logFailure("orderbook", error)),
      this.prices.poll(following.prices).catch((error: unknown) => logFailure("prices", error)),
      this.trades.poll(following.trades).catch((error: unknown) => logFailure("trades", error)),
    ]);
    await this.forgetUnfollowed(following);
  }

  /** Reads the prices or books of tickers just subscribed whose value is not known yet. */
  readNow(channel: "prices" | "orderbook", tickers: readonly string[]): Promise<void> {
    return channel === "prices" ? this.prices.read(tickers) : this.books.read(tickers);
  }

  /** Forgets values nobody follows (so a later subscriber never gets a stale snapshot) and an unread tape. */
  private async forgetUnfollowed(following: Following): Promise<void> {
    const { feed } = this.reading;
    for (const channel of ["prices", "orderbook"] as const) {
      if (following[channel].all) continue;
      const keep = new Set(following[channel].tickers);
      const gone = [...this.keptTickers(channel)].filter((ticker) => !keep.has(ticker));
      await feed.forget(channel, gone);
    }
    if (!following.trades.all && following.trades.tickers.length === 0) await feed.setTradesCursor(undefined);
  }
}
