/**
 * The market-data stream (`/api/v1/ws`, contract §5): clients subscribe per channel (`prices`,
 * `trades`, `orderbook`) to tickers or to every market, and receive snake_case messages as the upstream
 * exchange changes. One instance of the deployment, the feed's leader, polls the upstream for what
 * any instance's clients follow: the order books of subscribed tickers (and, for `all`, a bounded
 * slice of the active markets per period), prices from the upstream's markets list (by ticker in one
 * call, or one page of the open markets per period), and the trade tape in one call per period from a
 * `min_ts` cursor. It publishes changes into the feed (`market-feed.ts`), which numbers them per
 * channel for the whole deployment; every instance frames what it hears for its own clients.
 *
 * Every data frame carries `seq` (its position in the channel's log, the same on every instance) and
 * `ts` (when it was published, ms). A subscription is answered by a snapshot (prices, books) and a
 * `subscribed` frame with the position it covers; a client that sends `since` (the last `seq` it saw)
 * gets what it missed, or a `gap` frame (then a snapshot) when that is no longer kept. When the
 * upstream has not answered for a channel for `staleMs`, its subscribers get `stale` frames with the
 * age, repeated while it lasts, then one `recovered` frame. A failing upstream call is logged and
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
import {
  emptyFollowing,
  type FeedEntry,
  type FeedListener,
  type Following,
  isRestartMark,
  MARKET_CHANNELS,
  type MarketChannel,
  type MarketFeed,
  MemoryMarketFeed,
  type Publication,
} from "./market-feed.js";

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
  /** How long the upstream may give a followed channel nothing before its subscribers hear `stale` (default 5 s); also how often it is repeated. */
  staleMs?: number;
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
  staleMs: 5_000,
};

/** Tickers per markets-list call, so the query string stays well within URL limits. */
const TICKERS_PER_CALL = 100;

export interface MarketStreamDependencies {
  catalog: CatalogHolder;
  /** Order books, parsed and validated as the REST relay serves them. */
  relay: MarketRelay;
  /** The same upstream client, for the markets list and the trade tape. */
  upstream: Upstream;
  /** Where messages are published and heard: this instance alone (the default), or the deployment through Redis. */
  feed?: MarketFeed;
  logger?: { error(object: object, message: string): void };
}

type Channel = MarketChannel;
const CHANNELS = MARKET_CHANNELS;

const ClientMessage = z
  .object({
    type: z.enum(["subscribe", "unsubscribe"]),
    channel: z.enum(CHANNELS),
    all: z.literal(true).optional(),
    tickers: z.array(z.string().min(1).max(200)).min(1).max(1_000).optional(),
    since: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .refine((m) => (m.all === true) !== (m.tickers !== undefined), "give either all:true or tickers, not both");

/** An entry with its frame, serialized once for every connection that gets it. */
interface Framed extends FeedEntry {
  frame: string;
}

interface ChannelState {
  all: boolean;
  tickers: Set<string>;
  /** The last position sent on this channel: later entries only go out. */
  position: number;
  /** Entries heard while subscriptions are being answered, sent after the last answer. */
  held: Framed[] | undefined;
  /** Subscriptions of this channel being answered. */
  answering: number;
  /** Per market answered meanwhile (`*`: every market), the position its snapshot or replay covers. */
  covered: Map<string, number>;
  /** What the channel followed before the pending answers: its entries heard meanwhile all go out. */
  liveBefore: { all: boolean; tickers: Set<string> } | undefined;
}

class Subscriber {
  readonly channels: Record<Channel, ChannelState> = {
    prices: channelState(),
    trades: channelState(),
    orderbook: channelState(),
  };
  /** Messages held back while the socket is behind: the latest per price and book, every trade. */
  readonly pending = new Map<string, string>();
  periodsBehind = 0;
  /** Subscriptions are answered one after another, in the order they came. */
  work: Promise<void> = Promise.resolve();

  constructor(readonly socket: WebSocket) {}

  /** Whether this connection follows `ticker` on `channel`. */
  wants(channel: Channel, ticker: string): boolean {
    const state = this.channels[channel];
    return state.all || state.tickers.has(ticker);
  }

  /** Whether this connection follows anything on `channel`. */
  follows(channel: Channel): boolean {
    const state = this.channels[channel];
    return state.all || state.tickers.size > 0;
  }

  /** Tickers followed, summed over the channels. */
  get subscriptions(): number {
    return CHANNELS.reduce((sum, channel) => sum + this.channels[channel].tickers.size, 0);
  }
}

function channelState(): ChannelState {
  return {
    all: false,
    tickers: new Set(),
    position: 0,
    held: undefined,
    answering: 0,
    covered: new Map(),
    liveBefore: undefined,
  };
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

/** Whether a channel's upstream is silent now, since when, and when subscribers were last told. */
interface Staleness {
  /** When this instance's clients began following the channel (silence before that is nobody's). */
  followedSince: number | undefined;
  /** The freshness the silence started from, while stale. */
  staleFrom: number | undefined;
  lastTold: number;
}

/** Every market-data stream connection of this instance, and (on the leader) the polling that feeds all. */
export class MarketStreamHub extends StreamHub<Subscriber> {
  private readonly options: Required<MarketStreamOptions>;
  private readonly feed: MarketFeed;
  /** The latest price and book per ticker, as published, so subscribers get a snapshot. */
  private readonly values: Record<"prices" | "orderbook", Map<string, Framed>> = {
    prices: new Map(),
    orderbook: new Map(),
  };
  /** When the leader last read each channel from the upstream successfully (ms). */
  private readonly lastHealthy = new Map<Channel, number>();
  private readonly staleness = new Map<Channel, Staleness>(
    CHANNELS.map((c) => [c, { followedSince: undefined, staleFrom: undefined, lastTold: 0 }]),
  );
  private bookTurn = 0;
  private activeTurn = 0;
  private marketsCursor = "";
  private active: { version: number; tickers: readonly string[] } | undefined;
  private bookReadsRunning = 0;
  private readonly bookReadsWaiting: (() => void)[] = [];
  private polling: Repeating | undefined;
  private watching: Repeating | undefined;
  private stopped = false;

  constructor(
    private readonly deps: MarketStreamDependencies,
    options: MarketStreamOptions = {},
  ) {
    const rules = { ...DEFAULTS, ...options };
    super(rules);
    this.options = rules;
    this.feed = deps.feed ?? new MemoryMarketFeed();
  }

  /** Starts hearing the feed, polling (when leading), watching for silence and pinging. */
  async start(): Promise<void> {
    this.stopped = false;
    const listener: FeedListener = {
      entries: (channel, entries) => this.heard(channel, entries),
      reset: (channel, head, values) => this.reset(channel, head, values),
      forget: (channel, tickers) => {
        if (channel === "trades") return;
        for (const ticker of tickers) this.values[channel].delete(ticker);
      },
      healthy: (channel, at) => {
        if (at > (this.lastHealthy.get(channel) ?? 0)) this.lastHealthy.set(channel, at);
      },
    };
    this.subscribers.start();
    // A cadence, so a trade reaches clients within one period of its time however long a poll takes.
    this.polling = every(this.options.pollMs, () => this.poll(), {
      fromStart: true,
      onError: (error) => this.logFailure("poll", error),
    });
    this.watching = every(Math.min(this.options.pollMs, 250), () => this.watchSilence(), {
      onError: (error) => this.logFailure("staleness", error),
    });
    await this.feed.start(listener);
  }

  /** Stops polling and closes every connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.polling?.stop();
    this.watching?.stop();
    this.subscribers.stop();
    await this.feed.close();
  }

  /** Resolves once the poll after this call has ended (for tests; at once when not polling). */
  nextPoll(): Promise<void> {
    return this.polling?.nextRun() ?? Promise.resolve();
  }

  /** Whether this instance polls the upstream for the deployment now. */
  get isLeader(): boolean {
    return this.feed.isLeader;
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
        `expected {"type":"subscribe"|"unsubscribe","channel":"prices"|"trades"|"orderbook","all":true,"since"?:seq} or {...,"tickers":[...]}: ${where}${issue?.message ?? "invalid"}`,
      );
      return;
    }
    const { type, channel, all, tickers, since } = message.data;
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
    let added: string[] | undefined;
    if (state.answering === 0) state.liveBefore = { all: state.all, tickers: new Set(state.tickers) };
    if (all) state.all = true;
    else {
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
      added = wanted.filter((ticker) => !state.tickers.has(ticker));
      if (subscriber.subscriptions + added.length > this.options.maxSubscriptions) {
        badRequest(
          subscriber.socket,
          `at most ${this.options.maxSubscriptions} subscriptions per connection`,
        );
        return;
      }
      for (const ticker of added) state.tickers.add(ticker);
    }
    // Heard from now on, but sent after the answer to this subscription.
    state.held ??= [];
    state.answering += 1;
    this.feed.follow(this.localFollowing());
    const answer = () => this.subscribed(subscriber, channel, added, since);
    subscriber.work = subscriber.work
      .then(answer)
      .catch((error: unknown) => this.logFailure(channel, error))
      .finally(() => this.answered(subscriber, channel));
  }

  /**
   * Once the last pending subscription of a channel is answered, sends what was heard meanwhile: all
   * of it for markets followed before, what lies beyond each answer's position for the markets answered.
   */
  private answered(subscriber: Subscriber, channel: Channel): void {
    const state = subscriber.channels[channel];
    state.answering -= 1;
    if (state.answering > 0) return;
    const held = state.held ?? [];
    const covered = state.covered;
    const before = state.liveBefore;
    state.held = undefined;
    state.covered = new Map();
    state.liveBefore = undefined;
    const answeredUpTo = Math.max(0, ...covered.values());
    for (const entry of held) {
      const live = before !== undefined && (before.all || before.tickers.has(entry.ticker));
      // A restart of the tape before an answer's position came before that subscription.
      const upTo = isRestartMark(entry) ? answeredUpTo : (covered.get(entry.ticker) ?? covered.get("*"));
      if (!live && upTo !== undefined && entry.seq <= upTo) continue;
      this.offer(subscriber, channel, entry);
    }
    state.position = Math.max(state.position, answeredUpTo);
  }

  /**
   * Answers a subscription: what was missed since `since` (or a gap), else the current values
   * (`tickers` undefined: every market), then a `subscribed` frame with the position they cover, then
   * whatever was heard meanwhile. Unknown values are read at once when this instance leads.
   */
  private async subscribed(
    subscriber: Subscriber,
    channel: Channel,
    tickers: readonly string[] | undefined,
    since: number | undefined,
  ): Promise<void> {
    const state = subscriber.channels[channel];
    // The tape is read from now on: a subscription gets the trades that happen after it.
    if (channel === "trades") await this.feed.startTrades(Math.floor(Date.now() / 1000));
    const replay = since === undefined ? undefined : await this.feed.replay(channel, since);
    if (this.stopped) return;
    let position = this.feed.head(channel);
    const missing: string[] = [];
    if (replay !== undefined && since !== undefined) {
      // Prices and books are states: the latest missed one per market says it all.
      // Only this subscription's markets: another subscription of the channel resumes its own.
      const own = tickers === undefined ? undefined : new Set(tickers);
      const before = state.liveBefore;
      const mine = (ticker: string) =>
        own ? own.has(ticker) : !(before && (before.all || before.tickers.has(ticker)));
      const latest = new Map<string, FeedEntry>();
      for (const entry of replay) {
        if (!mine(entry.ticker)) continue;
        latest.set(channel === "trades" ? String(entry.seq) : entry.ticker, entry);
      }
      const ordered = [...latest.values()].sort((a, b) => a.seq - b.seq);
      for (const entry of ordered) {
        const key =
          channel === "trades" ? `trades|${entry.ticker}|${entry.seq}` : `${channel}|${entry.ticker}`;
        this.deliver(subscriber, key, framed(entry).frame);
      }
      position = Math.max(position, since, replay[replay.length - 1]?.seq ?? 0);
    } else {
      // The connection's other markets keep their own position: only this subscription has the gap.
      if (since !== undefined)
        this.sendControl(subscriber, { channel, type: "gap", seq: position, ts: Date.now() });
      if (channel !== "trades") {
        const cache = this.values[channel];
        const wanted = tickers ?? (subscriber.channels[channel].all ? [...cache.keys()] : []);
        for (const ticker of wanted) {
          const value = cache.get(ticker);
          if (value) this.deliver(subscriber, `${channel}|${ticker}`, value.frame);
          else if (tickers) missing.push(ticker);
        }
      }
    }
    for (const market of tickers ?? ["*"])
      state.covered.set(market, Math.max(state.covered.get(market) ?? 0, position));
    this.sendControl(subscriber, { channel, type: "subscribed", seq: position, ts: Date.now() });
    const stale = this.staleness.get(channel);
    if (stale?.staleFrom !== undefined)
      this.sendControl(subscriber, this.staleFrame(channel, Date.now() - stale.staleFrom));
    if (missing.length === 0 || channel === "trades" || !this.feed.isLeader) return;
    // The first read of a ticker is a change, so it reaches this subscriber with everyone else's.
    const read = channel === "prices" ? this.readPrices(missing) : this.readBooks(missing);
    await read.catch((error: unknown) => this.logFailure(channel, error));
  }

  /** What this instance's clients follow, per channel. */
  private localFollowing(): Following {
    const following = emptyFollowing();
    for (const channel of CHANNELS) {
      const tickers = new Set<string>();
      for (const subscriber of this.subscribers) {
        const state = subscriber.channels[channel];
        following[channel].all ||= state.all;
        for (const ticker of state.tickers) tickers.add(ticker);
      }
      following[channel].tickers = [...tickers];
    }
    return following;
  }

  /** Entries published by the leader (any instance's): kept as the latest values, framed for subscribers. */
  private heard(channel: Channel, entries: readonly FeedEntry[]): void {
    if (this.stopped) return;
    for (const entry of entries) {
      const item = framed(entry);
      if (channel !== "trades" && !isRestartMark(entry)) this.values[channel].set(entry.ticker, item);
      for (const subscriber of this.subscribers) {
        const state = subscriber.channels[channel];
        if (state.held) state.held.push(item);
        else this.offer(subscriber, channel, item);
      }
    }
  }

  /**
   * Entries were lost to this instance, or the log was reset (Redis lost it): every subscriber of the
   * channel hears of the gap, then gets the current values (after a reset, as the leader publishes them again).
   */
  private reset(channel: Channel, head: number, values: readonly FeedEntry[]): void {
    if (channel !== "trades") {
      const cache = this.values[channel];
      cache.clear();
      for (const value of values) cache.set(value.ticker, framed(value));
    }
    for (const subscriber of this.subscribers) {
      if (!subscriber.follows(channel)) continue;
      this.sendGap(subscriber, channel, head);
      if (channel === "trades") continue;
      for (const [ticker, value] of this.values[channel])
        if (subscriber.wants(channel, ticker)) this.deliver(subscriber, `${channel}|${ticker}`, value.frame);
    }
  }

  /** Sends an entry the connection follows and has not had yet (a restart mark after its position is a gap). */
  private offer(subscriber: Subscriber, channel: Channel, entry: Framed): void {
    if (entry.seq <= subscriber.channels[channel].position) return;
    if (isRestartMark(entry)) {
      if (subscriber.follows(channel)) this.sendGap(subscriber, channel, entry.seq);
      return;
    }
    if (!subscriber.wants(channel, entry.ticker)) return;
    this.send(subscriber, channel, entry);
  }

  private send(subscriber: Subscriber, channel: Channel, entry: Framed): void {
    subscriber.channels[channel].position = entry.seq;
    const key = channel === "trades" ? `trades|${entry.ticker}|${entry.seq}` : `${channel}|${entry.ticker}`;
    this.deliver(subscriber, key, entry.frame);
  }

  private sendGap(subscriber: Subscriber, channel: Channel, head: number): void {
    const state = subscriber.channels[channel];
    // Never behind what the connection already has (it resumed into a reset log this instance had not
    // heard of yet): a client continuing from an earlier position would be sent those frames again.
    state.position = Math.max(state.position, head);
    this.sendControl(subscriber, { channel, type: "gap", seq: state.position, ts: Date.now() });
  }

  /** Control frames (`subscribed`, `gap`, `stale`, `recovered`) are never coalesced away. */
  private sendControl(subscriber: Subscriber, frame: object): void {
    this.deliver(subscriber, `control|${Math.random()}`, JSON.stringify(frame));
  }

  private staleFrame(channel: Channel, ageMs: number): object {
    return { channel, type: "stale", age_ms: ageMs, ts: Date.now() };
  }

  /**
   * Tells the subscribers of a channel the upstream has given nothing for `staleMs` (and again every
   * `staleMs` while that lasts, with the age), and once when it answers again.
   */
  private watchSilence(): void {
    const now = Date.now();
    for (const channel of CHANNELS) {
      const watch = this.staleness.get(channel) as Staleness;
      const followers = [...this.subscribers].filter((s) => s.follows(channel));
      if (followers.length === 0) {
        watch.followedSince = undefined;
        watch.staleFrom = undefined;
        continue;
      }
      watch.followedSince ??= now;
      const fresh = Math.max(this.lastHealthy.get(channel) ?? 0, watch.followedSince);
      const age = now - fresh;
      if (age >= this.options.staleMs) {
        if (watch.staleFrom !== undefined && now - watch.lastTold < this.options.staleMs) continue;
        watch.staleFrom = fresh;
        watch.lastTold = now;
        for (const subscriber of followers) this.sendControl(subscriber, this.staleFrame(channel, age));
      } else if (watch.staleFrom !== undefined) {
        const frame = { channel, type: "recovered", silent_ms: fresh - watch.staleFrom, ts: now };
        watch.staleFrom = undefined;
        for (const subscriber of followers) this.sendControl(subscriber, frame);
      }
    }
  }

  /** One period: catch up slow consumers, announce what is followed, and (leading) read it for all. */
  private async poll(): Promise<void> {
    this.flushHeldBack();
    this.feed.follow(this.localFollowing());
    if (!this.feed.isLeader) return;
    const following = await this.feed.followed();
    await Promise.all([
      this.pollBooks(following.orderbook).catch((error: unknown) => this.logFailure("orderbook", error)),
      this.pollPrices(following.prices).catch((error: unknown) => this.logFailure("prices", error)),
      this.pollTrades(following.trades).catch((error: unknown) => this.logFailure("trades", error)),
    ]);
    await this.forgetUnfollowed(following);
  }

  private async pollBooks(followed: Following["orderbook"]): Promise<void> {
    const explicit = followed.tickers;
    const tickers = take(explicit, this.options.booksPerPeriod, this.bookTurn);
    this.bookTurn = explicit.length === 0 ? 0 : (this.bookTurn + tickers.length) % explicit.length;
    if (followed.all) {
      const active = this.activeTickers();
      const chosen = new Set(tickers);
      const slice = take(active, this.options.allBooksPerPeriod, this.activeTurn);
      this.activeTurn = active.length === 0 ? 0 : (this.activeTurn + slice.length) % active.length;
      for (const ticker of slice) if (!chosen.has(ticker)) tickers.push(ticker);
    }
    await this.readBooks(tickers);
  }

  /** Reads the books of `tickers` (bounded concurrency) and publishes those that changed. */
  private async readBooks(tickers: readonly string[]): Promise<void> {
    if (tickers.length === 0) return;
    const failures: unknown[] = [];
    const books: Publication[] = [];
    await Promise.all(
      tickers.map((ticker) =>
        this.limitBookReads(async () => {
          try {
            books.push(bookMessage(ticker, await this.deps.relay.orderbookLevels(ticker)));
          } catch (error) {
            // A market without a book upstream has no bids: that is its current book.
            if (error instanceof UpstreamNotFoundError && error.subject === "orderbook")
              books.push(bookMessage(ticker, { yes_bids: {}, no_bids: {}, sequence: 0 }));
            else failures.push(error);
          }
        }),
      ),
    );
    if (this.stopped) return;
    await this.feed.publish("orderbook", books);
    if (books.length > 0) await this.feed.healthy("orderbook", Date.now());
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

  private async pollPrices(followed: Following["prices"]): Promise<void> {
    const reads: Promise<void>[] = [];
    if (followed.all) {
      // One page of the open markets per period; the walk starts over after the last page.
      const query = new URLSearchParams({ status: "open", limit: String(this.options.marketsPageSize) });
      if (this.marketsCursor) query.set("cursor", this.marketsCursor);
      reads.push(
        this.readMarkets(query).then((cursor) => {
          this.marketsCursor = cursor;
        }),
      );
    }
    if (followed.tickers.length > 0) reads.push(this.readPrices(followed.tickers));
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
    if (this.stopped) return "";
    await this.feed.publish("prices", prices);
    await this.feed.healthy("prices", Date.now());
    return typeof body.cursor === "string" ? body.cursor : "";
  }

  /**
   * Reads the tape since the deployment's cursor (one call, more only when a page is full) and
   * publishes its trades in the order they happened; the feed sends each trade id once, whichever
   * leader read it, so the overlap read again each period (and a new leader's first read) repeats nothing.
   */
  private async pollTrades(followed: Following["trades"]): Promise<void> {
    if (!followed.all && followed.tickers.length === 0) return;
    let since = await this.feed.tradesCursor();
    if (since === undefined) {
      // Followed, but the cursor was dropped meanwhile (an unfollow raced a subscribe): read from now, marked.
      await this.feed.startTrades(Math.floor(Date.now() / 1000));
      since = await this.feed.tradesCursor();
      if (since === undefined) return;
    }
    const startedAt = Date.now();
    const fresh = new Map<string, { publication: Publication; ms: number; order: number }>();
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
        if (fresh.has(t.tradeId)) return;
        const createdMs = milliseconds(raw[index]?.created_time, t.createdTime);
        fresh.set(t.tradeId, {
          ms: createdMs,
          order: fresh.size,
          publication: {
            ticker: t.ticker,
            id: t.tradeId,
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
          },
        });
      });
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    if (this.stopped) return;
    // The tape comes newest first; subscribers get it in the order it happened (the tape's, within a millisecond).
    const ordered = [...fresh.values()]
      .sort((a, b) => a.ms - b.ms || b.order - a.order)
      .map((trade) => trade.publication);
    await this.feed.publish("trades", ordered);
    await this.feed.healthy("trades", Date.now());
    const next = Math.floor(startedAt / 1000) - this.options.tradeOverlapSeconds;
    if (next > since) await this.feed.setTradesCursor(next);
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
      // Keys are `channel|ticker` (prices, books), `trades|ticker|seq` or `control|...`.
      const [channel, ticker] = key.split("|") as [Channel | "control", string];
      if (channel !== "control" && !subscriber.wants(channel, ticker)) subscriber.pending.delete(key);
    }
  }

  private closeSlow(subscriber: Subscriber): void {
    subscriber.pending.clear();
    this.subscribers.drop(subscriber, 1013, "consumer too slow");
  }

  /** Forgets values nobody follows (so a later subscriber never gets a stale snapshot) and an unread tape. */
  private async forgetUnfollowed(following: Following): Promise<void> {
    for (const channel of ["prices", "orderbook"] as const) {
      if (following[channel].all) continue;
      const keep = new Set(following[channel].tickers);
      const gone = [...this.values[channel].keys()].filter((ticker) => !keep.has(ticker));
      await this.feed.forget(channel, gone);
    }
    if (!following.trades.all && following.trades.tickers.length === 0)
      await this.feed.setTradesCursor(undefined);
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

/** An entry with its frame: the message with `seq` and `ts` appended. */
function framed(entry: FeedEntry): Framed {
  return { ...entry, frame: `${entry.message.slice(0, -1)},"seq":${entry.seq},"ts":${entry.ts}}` };
}

function bookMessage(ticker: string, book: ReferenceBook): Publication {
  return {
    ticker,
    message: JSON.stringify({
      channel: "orderbook",
      type: "orderbook",
      market_ticker: ticker,
      yes_bids: book.yes_bids,
      no_bids: book.no_bids,
    }),
  };
}

function priceMessage(
  ticker: string,
  quote: Record<"yes_bid" | "yes_ask" | "no_bid" | "no_ask", string | null>,
): Publication {
  return {
    ticker,
    message: JSON.stringify({ channel: "prices", type: "ticker", market_ticker: ticker, ...quote }),
  };
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
