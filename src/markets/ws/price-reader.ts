import { answerJson } from "../../upstream/client.js";
import type { Following, Publication } from "../market-feed.js";
import { priceMessage } from "./frames.js";
import type { UpstreamReading } from "./options.js";

/** Tickers per markets-list call, so the query string stays well within URL limits. */
const TICKERS_PER_CALL = 100;

/** A market's quote from the upstream's markets list, as the `prices` channel sends it. */
interface KalshiMarketQuote {
  ticker?: unknown;
  yes_bid?: unknown;
  yes_ask?: unknown;
  no_bid?: unknown;
  no_ask?: unknown;
  yes_bid_dollars?: unknown;
  yes_ask_dollars?: unknown;
  no_bid_dollars?: unknown;
  no_ask_dollars?: unknown;
}

/**
 * Reads prices from the upstream's markets list for the leader: by ticker in one call per hundred, or
 * (for `all`) one page of the open markets per period.
 */
export class PriceReader {
  private marketsCursor = "";

  constructor(private readonly reading: UpstreamReading) {}

  async poll(followed: Following["prices"]): Promise<void> {
    const reads: Promise<void>[] = [];
    if (followed.all) {
      // One page of the open markets per period; the walk starts over after the last page.
      const query = new URLSearchParams({
        status: "open",
        limit: String(this.reading.options.marketsPageSize),
      });
      if (this.marketsCursor) query.set("cursor", this.marketsCursor);
      reads.push(
        this.readMarkets(query).then((cursor) => {
          this.marketsCursor = cursor;
        }),
      );
    }
    if (followed.tickers.length > 0) reads.push(this.read(followed.tickers));
    await Promise.all(reads);
  }

  /** Reads the quotes of `tickers` from the markets list, a hundred tickers per call. */
  async read(tickers: readonly string[]): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (let start = 0; start < tickers.length; start += TICKERS_PER_CALL) {
      const chunk = tickers.slice(start, start + TICKERS_PER_CALL);
      const query = new URLSearchParams({ tickers: chunk.join(","), limit: String(chunk.length) });
      calls.push(this.readMarkets(query, chunk));
    }
    await Promise.all(calls);
  }

  /**
   * Reads one page of the upstream's markets list and publishes each quote that changed; tickers
   * asked for by name but absent from the answer have no quote. Returns the next page's cursor.
   */
  private async readMarkets(query: URLSearchParams, asked: readonly string[] = []): Promise<string> {
    const { deps, feed } = this.reading;
    const answer = await deps.upstream.get("markets", query);
    if (answer.status !== 200) throw new Error(`the upstream markets list answered ${answer.status}`);
    const body = answerJson(answer) as { markets?: unknown; cursor?: unknown };
    if (!Array.isArray(body.markets)) throw new Error("the upstream markets list has no markets array");
    const seen = new Set<string>();
    const prices: Publication[] = [];
    for (const market of body.markets as KalshiMarketQuote[]) {
      if (typeof market?.ticker !== "string") continue;
      seen.add(market.ticker);
      prices.push(
        priceMessage(market.ticker, {
          yes_bid: dollars(market.yes_bid_dollars, market.yes_bid),
          yes_ask: dollars(market.yes_ask_dollars, market.yes_ask),
          no_bid: dollars(market.no_bid_dollars, market.no_bid),
          no_ask: dollars(market.no_ask_dollars, market.no_ask),
        }),
      );
    }
    for (const ticker of asked) {
      if (!seen.has(ticker))
        prices.push(priceMessage(ticker, { yes_bid: null, yes_ask: null, no_bid: null, no_ask: null }));
    }
    if (this.reading.stopped()) return "";
    await feed.publish("prices", prices);
    await feed.healthy("prices", Date.now());
    return typeof body.cursor === "string" ? body.cursor : "";
  }
}

/** A 4-decimal dollar string from Kalshi's `*_dollars` string or its integer cents; null when neither is usable. */
function dollars(text: unknown, cents: unknown): string | null {
  const value =
    typeof text === "string" && text !== ""
      ? Number(text)
      : typeof cents === "number"
        ? cents / 100
        : Number.NaN;
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value.toFixed(4) : null;
}
