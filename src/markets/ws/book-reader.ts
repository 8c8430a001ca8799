import { UpstreamNotFoundError } from "../../upstream/errors.js";
import type { Following, Publication } from "../market-feed.js";
import { bookMessage } from "./frames.js";
import type { UpstreamReading } from "./options.js";

/**
 * Reads order books from the upstream for the leader: the subscribed tickers' in turn, a bounded
 * slice of the active markets per period for `all`, with a bound on the reads in flight.
 */
export class BookReader {
  private bookTurn = 0;
  private activeTurn = 0;
  private active: { version: number; tickers: readonly string[] } | undefined;
  private readsRunning = 0;
  private readonly readsWaiting: (() => void)[] = [];

  constructor(private readonly reading: UpstreamReading) {}

  async poll(followed: Following["orderbook"]): Promise<void> {
    const { options } = this.reading;
    const explicit = followed.tickers;
    const tickers = take(explicit, options.booksPerPeriod, this.bookTurn);
    this.bookTurn = explicit.length === 0 ? 0 : (this.bookTurn + tickers.length) % explicit.length;
    if (followed.all) {
      const active = this.activeTickers();
      const chosen = new Set(tickers);
      const slice = take(active, options.allBooksPerPeriod, this.activeTurn);
      this.activeTurn = active.length === 0 ? 0 : (this.activeTurn + slice.length) % active.length;
      for (const ticker of slice) if (!chosen.has(ticker)) tickers.push(ticker);
    }
    await this.read(tickers);
  }

  /** Reads the books of `tickers` (bounded concurrency) and publishes those that changed. */
  async read(tickers: readonly string[]): Promise<void> {
    if (tickers.length === 0) return;
    const { deps, feed } = this.reading;
    const failures: unknown[] = [];
    const books: Publication[] = [];
    await Promise.all(
      tickers.map((ticker) =>
        this.limitReads(async () => {
          try {
            books.push(bookMessage(ticker, await deps.relay.orderbookLevels(ticker)));
          } catch (error) {
            // A market without a book upstream has no bids: that is its current book.
            if (error instanceof UpstreamNotFoundError && error.subject === "orderbook")
              books.push(bookMessage(ticker, { yes_bids: {}, no_bids: {}, sequence: 0 }));
            else failures.push(error);
          }
        }),
      ),
    );
    if (this.reading.stopped()) return;
    await feed.publish("orderbook", books);
    if (books.length > 0) await feed.healthy("orderbook", Date.now());
    // One line per batch, not per book: a down upstream fails every read.
    if (failures.length > 0) this.reading.logFailure("orderbook", failures[0], { failed: failures.length });
  }

  private async limitReads(task: () => Promise<void>): Promise<void> {
    if (this.readsRunning < this.reading.options.bookConcurrency) this.readsRunning += 1;
    else await new Promise<void>((resolve) => this.readsWaiting.push(resolve));
    try {
      await task();
    } finally {
      // The slot passes straight to a waiter, so the bound holds even between wake-ups.
      const next = this.readsWaiting.shift();
      if (next) next();
      else this.readsRunning -= 1;
    }
  }

  /** Active markets of the catalog, recomputed when it changes. */
  private activeTickers(): readonly string[] {
    const catalog = this.reading.deps.catalog.current;
    if (!catalog) return [];
    if (this.active?.version !== catalog.version) {
      this.active = {
        version: catalog.version,
        tickers: catalog.markets.filter((m) => m.record.status === "active").map((m) => m.record.ticker),
      };
    }
    return this.active.tickers;
  }
}

/** Up to `count` items of `items` starting at `start`, wrapping around. */
function take(items: readonly string[], count: number, start: number): string[] {
  if (items.length <= count) return [...items];
  return Array.from({ length: count }, (_, i) => items[(start + i) % items.length] as string);
}
