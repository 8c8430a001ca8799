/**
 * The market-data stream (`/api/v1/ws`, contract §5): clients subscribe per channel (`prices`,
 * `trades`, `orderbook`) to tickers or to every market, and receive snake_case messages as the upstream
 * exchange changes. The hub polls the upstream only for what someone follows: the order books of
 * subscribed tickers (and, for `all`, a bounded slice of the active markets per period), prices from
 * the upstream's markets list (by ticker in one call, or one page of the open markets per period), and
 * the trade tape in one call per period from a `min_ts` cursor. A failing upstream call is logged and
 * retried next period; streams stay open. A consumer that falls behind gets the latest value per price
 * and book (and every trade) when it catches up, and is closed if it stays behind.
 */
import type { WebSocket } from "ws";
import { z } from "zod";
import { every, type Repeating } from "../every.js";
import { badRequest, StreamHub } from "../http/stream-peers.js";
import type { Upstream } from "../upstream/client.js";
import { UpstreamNotFoundError } from "../upstream/errors.js";
import { type MarketRelay, type ReferenceBook, toReferenceTrades } from "../upstream/relay.js";
import type { CatalogHolder } from "./catalog-holder.js";

export interface MarketStreamOptions {
  /** How often the upstream is polled (default 1 s). */
  pollMs?: number;
  /** How often the server pings (default 15 s). */
  pingMs?: number;
  /** Silence after which a peer is closed (default 30 s). */
  silenceMs?: number;
  /** Tickers one connection may follow, summed over its channels. */
  maxSubscriptions?: number;
  maxMessagesPerSecond?: number;
  /** Order-book reads in flight at once. */
  bookConcurrency?: number;
  /** Books of subscribed tickers read per period; more subscribed tickers are read in turn. */
  booksPerPeriod?: number;
  /** Books of other active markets read per period for `all` subscribers, cycling through the catalog. */
  allBooksPerPeriod?: number;
  /** Markets per page of the upstream's markets list. */
  marketsPageSize?: number;
  /** Trades per page of the upstream's tape; a full page is followed by at most `maxTradePages - 1` more. */
  tradesPageSize?: number;
  maxTradePages?: number;
  /** Seconds of the tape read again each period, so trades the upstream records late are not missed. */
  tradeOverlapSeconds?: number;
  /** Bytes queued on a socket beyond which it is behind; messages are held back and coalesced. */
  maxBufferedBytes?: number;
  /** Periods a consumer may stay behind before it is closed. */
  maxPeriodsBehind?: number;
  /** Held-back messages beyond which a consumer is closed at once. */
  maxPendingMessages?: number;
}

const DEFAULTS: Required<MarketStreamOptions> = {
  pollMs: 1_000,
  pingMs: 15_000,
  silenceMs: 30_000,
  maxSubscriptions: 1_000,
  maxMessagesPerSecond: 50,
  bookConcurrency: 8,
  booksPerPeriod: 100,
  allBooksPerPeriod: 20,
  marketsPageSize: 1_000,
  tradesPageSize: 1_000,
  maxTradePages: 5,
  tradeOverlapSeconds: 10,
  maxBufferedBytes: 1 << 20,
  maxPeriodsBehind: 10,
  maxPendingMessages: 50_000,
};

/** Tickers per markets-list call, so the query string stays well within URL limits. */
const TICKERS_PER_CALL = 100;

export interface MarketStreamDependencies {
  catalog: CatalogHolder;
  /** Order books, parsed and validated as the REST relay serves them. */
  relay: MarketRelay;
  /** The same upstream client, for the markets list and the trade tape. */
  upstream: Upstream;
  logger?: { error(object: object, message: string): void };
}

const CHANNELS = ["prices", "trades", "orderbook"] as const;
type Channel = (typeof CHANNELS)[number];

const ClientMessage = z
  .object({
    type: z.enum(["subscribe", "unsubscribe"]),
    channel: z.enum(CHANNELS),
    all: z.literal(true).optional(),
    tickers: z.array(z.string().min(1).max(200)).min(1).max(1_000).optional(),
  })
  .refine((m) => (m.all === true) !== (m.tickers !== undefined), "give either all:true or tickers, not both");

interface ChannelState {
  all: boolean;
  tickers: Set<string>;
}

class Subscriber {
  readonly channels: Record<Channel, ChannelState> = {
    prices: { all: false, tickers: new Set() },
    trades: { all: false, tickers: new Set() },
    orderbook: { all: false, tickers: new Set() },
  };
  /** Messages held back while the socket is behind: the latest per price and book, every trade. */
  readonly pending = new Map<string, string>();
  periodsBehind = 0;

  constructor(readonly socket: WebSocket) {}

  /** Whether this connection follows `ticker` on `channel`. */
  wants(channel: Channel, ticker: string): boolean {
    const state = this.channels[channel];
    return state.all || state.tickers.has(ticker);
  }

  /** Tickers followed, summed over the channels. */
  get subscriptions(): number {
    return CHANNELS.reduce((sum, channel) => sum + this.channels[channel].tickers.size, 0);
  }
}

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

/** Every market-data stream connection of this instance, and the polling that feeds them. */
export class MarketStreamHub extends StreamHub<Subscriber> {
  private readonly options: Required<MarketStreamOptions>;
  /** The last message sent per ticker, serialized, so only changes go out and subscribers get a snapshot. */
  private readonly books = new Map<string, string>();
  private readonly prices = new Map<string, string>();
  /** Trades already sent (id → created second), for the overlap the tape is read again. */
  private readonly seenTrades = new Map<string, number>();
  private tradesSince: number | undefined;
  private bookTurn = 0;
  private activeTurn = 0;
  private marketsCursor = "";
  private active: { version: number; tickers: readonly string[] } | undefined;
  private bookReadsRunning = 0;
  private readonly bookReadsWaiting: (() => void)[] = [];
  private polling: Repeating | undefined;
  private stopped = false;

  constructor(
    private readonly deps: MarketStreamDependencies,
    options: MarketStreamOptions = {},
  ) {
    const rules = { ...DEFAULTS, ...options };
    super(rules);
    this.options = rules;
  }

  /** Starts polling and pinging. */
  start(): void {
    this.stopped = false;
    this.polling = every(this.options.pollMs, () => this.poll(), {
      onError: (error) => this.logFailure("poll", error),
    });
    this.subscribers.start();
  }

  /** Stops polling and closes every connection. */
  stop(): void {
    this.stopped = true;
    this.polling?.stop();
    this.subscribers.stop();
  }

  /** Resolves once the poll after this call has ended (for tests; at once when not polling). */
  nextPoll(): Promise<void> {
    return this.polling?.nextRun() ?? Promise.resolve();
  }

  protected peerFor(socket: WebSocket): Subscriber {
    return new Subscriber(socket);
  }

  protected handle(subscriber: Subscriber, parsed: unknown): void {
    const message = ClientMessage.safeParse(parsed);
    if (!message.success) {
      const issue = message.error.issues[0];
      const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
      badRequest(
        subscriber.socket,
        `expected {"type":"subscribe"|"unsubscribe","channel":"prices"|"trades"|"orderbook","all":true} or {...,"tickers":[...]}: ${where}${issue?.message ?? "invalid"}`,
      );
      return;
    }
    const { type, channel, all, tickers } = message.data;
    const state = subscriber.channels[channel];
    if (type === "unsubscribe") {
      // Unsubscribing from all ends the channel; from tickers, just those.
      if (all) {
        state.all = false;
        state.tickers.clear();
      } else for (const ticker of tickers ?? []) state.tickers.delete(ticker);
      this.dropHeldBack(subscriber);
      return;
    }
    if (all) {
      state.all = true;
      this.subscribed(subscriber, channel, undefined);
      return;
    }
    const wanted = [...new Set(tickers)];
    const catalog = this.deps.catalog.current;
    if (!catalog) {
      badRequest(subscriber.socket, "the market catalog is still loading; retry shortly");
      return;
    }
    const unknown = wanted.filter((ticker) => !catalog.market(ticker));
    if (unknown.length > 0) {
      badRequest(subscriber.socket, `unknown tickers: ${unknown.join(", ")}`);
      return;
    }
    const added = wanted.filter((ticker) => !state.tickers.has(ticker));
    if (subscriber.subscriptions + added.length > this.options.maxSubscriptions) {
      badRequest(subscriber.socket, `at most ${this.options.maxSubscriptions} subscriptions per connection`);
      return;
    }
    for (const ticker of added) state.tickers.add(ticker);
    this.subscribed(subscriber, channel, added);
  }

  /** Sends what is known now of a new subscription and fetches at once what is not. */
  private subscribed(subscriber: Subscriber, channel: Channel, tickers: readonly string[] | undefined): void {
    if (channel === "trades") {
      // The tape is read from now on: a subscription gets the trades that happen after it.
      this.tradesSince ??= Math.floor(Date.now() / 1000);
      return;
    }
    const cache = channel === "prices" ? this.prices : this.books;
    if (tickers === undefined) {
      // All: every value known now; the rest arrive as polling reaches them.
      for (const [ticker, message] of cache) this.deliver(subscriber, `${channel}|${ticker}`, message);
      return;
    }
    const missing: string[] = [];
    for (const ticker of tickers) {
      const message = cache.get(ticker);
      if (message === undefined) missing.push(ticker);
      else this.deliver(subscriber, `${channel}|${ticker}`, message);
    }
    if (missing.length === 0) return;
    // The first read of a ticker is a change, so it reaches this subscriber with everyone else's.
    const read = channel === "prices" ? this.readPrices(missing) : this.readBooks(missing);
    read.catch((error: unknown) => this.logFailure(channel, error));
  }

  /** One period: catch up slow consumers, then read what subscribers follow. */
  private async poll(): Promise<void> {
    this.flushHeldBack();
    await Promise.all([
      this.pollBooks().catch((error: unknown) => this.logFailure("orderbook", error)),
      this.pollPrices().catch((error: unknown) => this.logFailure("prices", error)),
      this.pollTrades().catch((error: unknown) => this.logFailure("trades", error)),
    ]);
    this.forgetUnfollowed();
  }

  private async pollBooks(): Promise<void> {
    const { explicit, all } = this.followed("orderbook");
    const tickers = take(explicit, this.options.booksPerPeriod, this.bookTurn);
    this.bookTurn = explicit.length === 0 ? 0 : (this.bookTurn + tickers.length) % explicit.length;
    if (all) {
      const active = this.activeTickers();
      const chosen = new Set(tickers);
      const slice = take(active, this.options.allBooksPerPeriod, this.activeTurn);
      this.activeTurn = active.length === 0 ? 0 : (this.activeTurn + slice.length) % active.length;
      for (const ticker of slice) if (!chosen.has(ticker)) tickers.push(ticker);
    }
    await this.readBooks(tickers);
  }

  /** Reads the books of `tickers` (bounded concurrency) and publishes each that changed. */
  private async readBooks(tickers: readonly string[]): Promise<void> {
    const failures: unknown[] = [];
    await Promise.all(
      tickers.map((ticker) =>
        this.limitBookReads(async () => {
          try {
            this.publishBook(ticker, await this.deps.relay.orderbookLevels(ticker));
          } catch (error) {
            // A market without a book upstream has no bids: that is its current book.
            if (error instanceof UpstreamNotFoundError && error.subject === "orderbook")
              this.publishBook(ticker, { yes_bids: {}, no_bids: {}, sequence: 0 });
            else failures.push(error);
          }
        }),
      ),
    );
    // One line per batch, not per book: a down upstream fails every read.
    if (failures.length > 0) this.logFailure("orderbook", failures[0], { failed: failures.length });
  }

  private async limitBookReads(task: () => Promise<void>): Promise<void> {
    if (this.bookReadsRunning < this.options.bookConcurrency) this.bookReadsRunning += 1;
    else await new Promise<void>((resolve) => this.bookReadsWaiting.push(resolve));
    try {
      await task();
    } finally {
      // The slot passes straight to a waiter, so the bound holds even between wake-ups.
      const next = this.bookReadsWaiting.shift();
      if (next) next();
      else this.bookReadsRunning -= 1;
    }
  }

  private publishBook(ticker: string, book: ReferenceBook): void {
    if (this.stopped) return;
    const message = JSON.stringify({
      channel: "orderbook",
      type: "orderbook",
      market_ticker: ticker,
      yes_bids: book.yes_bids,
      no_bids: book.no_bids,
    });
    if (this.books.get(ticker) === message) return;
    this.books.set(ticker, message);
    for (const subscriber of this.subscribers) {
      if (subscriber.wants("orderbook", ticker)) this.deliver(subscriber, `orderbook|${ticker}`, message);
    }
  }

  private async pollPrices(): Promise<void> {
    const { explicit, all } = this.followed("prices");
    const reads: Promise<void>[] = [];
    if (all) {
      // One page of the open markets per period; the walk starts over after the last page.
      const query = new URLSearchParams({ status: "open", limit: String(this.options.marketsPageSize) });
      if (this.marketsCursor) query.set("cursor", this.marketsCursor);
      reads.push(
        this.readMarkets(query).then((cursor) => {
          this.marketsCursor = cursor;
        }),
      );
    }
    if (explicit.length > 0) reads.push(this.readPrices(explicit));
    await Promise.all(reads);
  }

  /** Reads the quotes of `tickers` from the markets list, a hundred tickers per call. */
  private async readPrices(tickers: readonly string[]): Promise<void> {
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
    const answer = await this.deps.upstream.get("markets", query);
    if (answer.status !== 200) throw new Error(`the upstream markets list answered ${answer.status}`);
    const body = JSON.parse(answer.body.toString("utf8")) as { markets?: unknown; cursor?: unknown };
    if (!Array.isArray(body.markets)) throw new Error("the upstream markets list has no markets array");
    const seen = new Set<string>();
    for (const market of body.markets as KalshiMarketQuote[]) {
      if (typeof market?.ticker !== "string") continue;
      seen.add(market.ticker);
      this.publishPrice(market.ticker, {
        yes_bid: dollars(market.yes_bid_dollars, market.yes_bid),
        yes_ask: dollars(market.yes_ask_dollars, market.yes_ask),
        no_bid: dollars(market.no_bid_dollars, market.no_bid),
        no_ask: dollars(market.no_ask_dollars, market.no_ask),
      });
    }
    for (const ticker of asked) {
      if (!seen.has(ticker))
        this.publishPrice(ticker, { yes_bid: null, yes_ask: null, no_bid: null, no_ask: null });
    }
    return typeof body.cursor === "string" ? body.cursor : "";
  }

  private publishPrice(
    ticker: string,
    quote: Record<"yes_bid" | "yes_ask" | "no_bid" | "no_ask", string | null>,
  ): void {
    if (this.stopped) return;
    const message = JSON.stringify({ channel: "prices", type: "ticker", market_ticker: ticker, ...quote });
    if (this.prices.get(ticker) === message) return;
    this.prices.set(ticker, message);
    for (const subscriber of this.subscribers) {
      if (subscriber.wants("prices", ticker)) this.deliver(subscriber, `prices|${ticker}`, message);
    }
  }

  /** Reads the tape since the cursor (one call, more only when a page is full) and sends each new trade once. */
  private async pollTrades(): Promise<void> {
    if (this.tradesSince === undefined) return;
    const since = this.tradesSince;
    const fresh = new Map<string, { message: string; ticker: string; seconds: number; ms: number }>();
    let cursor = "";
    for (let pages = 0; pages < this.options.maxTradePages; pages++) {
      const query = new URLSearchParams({
        limit: String(this.options.tradesPageSize),
        min_ts: String(since),
      });
      if (cursor) query.set("cursor", cursor);
      const answer = await this.deps.upstream.get("markets/trades", query);
      if (answer.status !== 200) throw new Error(`the upstream trade tape answered ${answer.status}`);
      const body = JSON.parse(answer.body.toString("utf8")) as { trades?: unknown };
      // The reference shape checks and normalizes each trade; the raw time keeps its milliseconds.
      const page = toReferenceTrades(body);
      const raw = body.trades as { created_time?: unknown }[];
      page.trades.forEach((trade, index) => {
        const t = trade as ReferenceTrade;
        if (this.seenTrades.has(t.tradeId) || fresh.has(t.tradeId)) return;
        const createdMs = milliseconds(raw[index]?.created_time, t.createdTime);
        fresh.set(t.tradeId, {
          ticker: t.ticker,
          seconds: t.createdTime,
          ms: createdMs,
          message: JSON.stringify({
            channel: "trades",
            type: "trade",
            market_ticker: t.ticker,
            trade_id: t.tradeId,
            price: t.price,
            count: t.count,
            yes_price: t.yesPrice,
            no_price: t.noPrice,
            yes_price_dollars: t.yesPriceDollars,
            no_price_dollars: t.noPriceDollars,
            taker_side: t.takerSide,
            created_time: createdMs,
          }),
        });
      });
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    if (this.stopped || this.tradesSince === undefined) return;
    // The tape comes newest first; subscribers get it in the order it happened.
    const ordered = [...fresh].sort(([, a], [, b]) => a.ms - b.ms);
    for (const [id, trade] of ordered) {
      this.seenTrades.set(id, trade.seconds);
      for (const subscriber of this.subscribers) {
        if (subscriber.wants("trades", trade.ticker))
          this.deliver(subscriber, `trades|${trade.ticker}|${id}`, trade.message);
      }
    }
    this.tradesSince = Math.max(since, Math.floor(Date.now() / 1000) - this.options.tradeOverlapSeconds);
    for (const [id, seconds] of this.seenTrades) if (seconds < this.tradesSince) this.seenTrades.delete(id);
  }

  /** Sends a message now, or holds it back (replacing an older one of the same key) while the socket is behind. */
  private deliver(subscriber: Subscriber, key: string, message: string): void {
    const socket = subscriber.socket;
    if (socket.readyState !== socket.OPEN) return;
    if (subscriber.pending.size === 0 && socket.bufferedAmount <= this.options.maxBufferedBytes) {
      socket.send(message);
      return;
    }
    subscriber.pending.delete(key);
    subscriber.pending.set(key, message);
    if (subscriber.pending.size > this.options.maxPendingMessages) this.closeSlow(subscriber);
  }

  /** Sends held-back messages of consumers that caught up; closes those behind too long. */
  private flushHeldBack(): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.pending.size === 0) {
        subscriber.periodsBehind = 0;
        continue;
      }
      if (subscriber.socket.bufferedAmount > this.options.maxBufferedBytes) {
        subscriber.periodsBehind += 1;
        if (subscriber.periodsBehind > this.options.maxPeriodsBehind) this.closeSlow(subscriber);
        continue;
      }
      subscriber.periodsBehind = 0;
      for (const message of subscriber.pending.values()) subscriber.socket.send(message);
      subscriber.pending.clear();
    }
  }

  /** Drops held-back messages of channels and tickers a connection no longer follows. */
  private dropHeldBack(subscriber: Subscriber): void {
    for (const key of subscriber.pending.keys()) {
      // Keys are `channel|ticker` (prices, books) or `trades|ticker|id`.
      const [channel, ticker] = key.split("|") as [Channel, string];
      if (!subscriber.wants(channel, ticker)) subscriber.pending.delete(key);
    }
  }

  private closeSlow(subscriber: Subscriber): void {
    subscriber.pending.clear();
    this.subscribers.drop(subscriber, 1013, "consumer too slow");
  }

  /** The tickers followed by name on `channel`, and whether anyone follows all of it. */
  private followed(channel: Channel): { explicit: string[]; all: boolean } {
    const tickers = new Set<string>();
    let all = false;
    for (const subscriber of this.subscribers) {
      const state = subscriber.channels[channel];
      all ||= state.all;
      for (const ticker of state.tickers) tickers.add(ticker);
    }
    return { explicit: [...tickers], all };
  }

  /** Forgets values nobody follows (so a later subscriber never gets a stale snapshot) and an unread tape. */
  private forgetUnfollowed(): void {
    for (const [channel, cache] of [
      ["prices", this.prices],
      ["orderbook", this.books],
    ] as const) {
      const { explicit, all } = this.followed(channel);
      if (all) continue;
      const keep = new Set(explicit);
      for (const ticker of cache.keys()) if (!keep.has(ticker)) cache.delete(ticker);
    }
    const trades = this.followed("trades");
    if (!trades.all && trades.explicit.length === 0) {
      this.tradesSince = undefined;
      this.seenTrades.clear();
    }
  }

  /** Active markets of the catalog, recomputed when it changes. */
  private activeTickers(): readonly string[] {
    const catalog = this.deps.catalog.current;
    if (!catalog) return [];
    if (this.active?.version !== catalog.version) {
      this.active = {
        version: catalog.version,
        tickers: catalog.markets.filter((m) => m.record.status === "active").map((m) => m.record.ticker),
      };
    }
    return this.active.tickers;
  }

  private logFailure(what: string, error: unknown, extra: object = {}): void {
    if (this.stopped) return;
    this.deps.logger?.error(
      { err: error, ...extra },
      `market stream: reading ${what} from the upstream failed; retrying next period`,
    );
  }
}

interface ReferenceTrade {
  tradeId: string;
  ticker: string;
  price: number;
  count: number;
  yesPrice: number;
  noPrice: number;
  yesPriceDollars: string;
  noPriceDollars: string;
  takerSide: string;
  createdTime: number;
}

/** Up to `count` items of `items` starting at `start`, wrapping around. */
function take(items: readonly string[], count: number, start: number): string[] {
  if (items.length <= count) return [...items];
  return Array.from({ length: count }, (_, i) => items[(start + i) % items.length] as string);
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

/** A trade's time in milliseconds: Kalshi's ISO string keeps them; a number is seconds below 10^11. */
function milliseconds(raw: unknown, seconds: number): number {
  if (typeof raw === "number") return raw < 1e11 ? raw * 1000 : Math.floor(raw);
  const parsed = Date.parse(String(raw));
  return Number.isFinite(parsed) ? parsed : seconds * 1000;
}
