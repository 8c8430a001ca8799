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
import { every, type Repeating } from "../every.js";
import { StreamHub } from "../http/stream-peers.js";
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
} from "./market-feed.js";
import { type Framed, framed, messageKey } from "./ws/frames.js";
import {
  DEFAULTS,
  type MarketStreamDependencies,
  type MarketStreamOptions,
  type UpstreamReading,
} from "./ws/options.js";
import { newTickers, readClientRequest } from "./ws/requests.js";
import { SilenceWatch } from "./ws/silence-watch.js";
import { Subscriber } from "./ws/subscriber.js";
import { UpstreamPoller } from "./ws/upstream-poller.js";

export type { MarketStreamDependencies, MarketStreamOptions } from "./ws/options.js";

type Channel = MarketChannel;

/** Every market-data stream connection of this instance, and (on the leader) the polling that feeds all. */
export class MarketStreamHub extends StreamHub<Subscriber> {
  private readonly options: Required<MarketStreamOptions>;
  private readonly feed: MarketFeed;
  /** The latest price and book per ticker, as published, so subscribers get a snapshot. */
  private readonly values: Record<"prices" | "orderbook", Map<string, Framed>> = {
    prices: new Map(),
    orderbook: new Map(),
  };
  private readonly silence: SilenceWatch;
  private readonly poller: UpstreamPoller;
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
    if (deps.recordFrames) this.feed.onPublished(deps.recordFrames);
    this.silence = new SilenceWatch(rules.staleMs);
    const reading: UpstreamReading = {
      deps,
      feed: this.feed,
      options: rules,
      stopped: () => this.stopped,
      logFailure: (what, error, extra) => this.logFailure(what, error, extra),
    };
    this.poller = new UpstreamPoller(reading, (channel) => this.values[channel].keys());
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
      healthy: (channel, at) => this.silence.healthy(channel, at),
    };
    this.subscribers.start();
    // A cadence, so a trade reaches clients within one period of its time however long a poll takes.
    this.polling = every(this.options.pollMs, () => this.poll(), {
      fromStart: true,
      onError: (error) => this.logFailure("poll", error),
    });
    this.watching = every(Math.min(this.options.pollMs, 250), () => this.silence.check(this.subscribers), {
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
    return new Subscriber(socket, this.options, (subscriber) =>
      this.subscribers.drop(subscriber, 1013, "consumer too slow"),
    );
  }

  protected handle(subscriber: Subscriber, parsed: unknown): void {
    const message = readClientRequest(subscriber.socket, parsed);
    if (!message) return;
    const { type, channel, all, tickers, since } = message;
    if (type === "unsubscribe") {
      subscriber.unsubscribe(channel, all === true, tickers ?? []);
      return;
    }
    const state = subscriber.channels[channel];
    let added: string[] | undefined;
    subscriber.noteLiveBefore(channel);
    if (all) state.all = true;
    else {
      const wanted = [...new Set(tickers)];
      added = newTickers(
        subscriber,
        channel,
        wanted,
        this.deps.catalog.current,
        this.options.maxSubscriptions,
      );
      if (!added) return;
      for (const ticker of added) state.tickers.add(ticker);
    }
    subscriber.holdForAnswer(channel);
    this.feed.follow(this.localFollowing());
    const answer = () => this.subscribed(subscriber, channel, added, since);
    subscriber.work = subscriber.work
      .then(answer)
      .catch((error: unknown) => this.logFailure(channel, error))
      .finally(() => subscriber.answered(channel));
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
        subscriber.outbox.deliver(messageKey(channel, entry), framed(entry).frame);
      }
      position = Math.max(position, since, replay[replay.length - 1]?.seq ?? 0);
    } else {
      // The connection's other markets keep their own position: only this subscription has the gap.
      if (since !== undefined)
        subscriber.sendControl({ channel, type: "gap", seq: position, ts: Date.now() });
      if (channel !== "trades") {
        const cache = this.values[channel];
        const wanted = tickers ?? (subscriber.channels[channel].all ? [...cache.keys()] : []);
        for (const ticker of wanted) {
          const value = cache.get(ticker);
          if (value) subscriber.outbox.deliver(messageKey(channel, value), value.frame);
          else if (tickers) missing.push(ticker);
        }
      }
    }
    for (const market of tickers ?? ["*"])
      state.covered.set(market, Math.max(state.covered.get(market) ?? 0, position));
    subscriber.sendControl({ channel, type: "subscribed", seq: position, ts: Date.now() });
    const stale = this.silence.staleFrameFor(channel);
    if (stale) subscriber.sendControl(stale);
    if (missing.length === 0 || channel === "trades" || !this.feed.isLeader) return;
    // The first read of a ticker is a change, so it reaches this subscriber with everyone else's.
    await this.poller.readNow(channel, missing).catch((error: unknown) => this.logFailure(channel, error));
  }

  /** What this instance's clients follow, per channel. */
  private localFollowing(): Following {
    const following = emptyFollowing();
    for (const channel of MARKET_CHANNELS) {
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
        subscriber.hear(channel, item);
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
      subscriber.sendGap(channel, head);
      if (channel === "trades") continue;
      for (const [ticker, value] of this.values[channel])
        if (subscriber.wants(channel, ticker))
          subscriber.outbox.deliver(messageKey(channel, value), value.frame);
    }
  }

  /** One period: catch up slow consumers, announce what is followed, and (leading) read it for all. */
  private async poll(): Promise<void> {
    for (const subscriber of this.subscribers) subscriber.outbox.flush();
    this.feed.follow(this.localFollowing());
    if (!this.feed.isLeader) return;
    await this.poller.poll(await this.feed.followed());
  }

  private logFailure(what: string, error: unknown, extra: object = {}): void {
    if (this.stopped) return;
    this.deps.logger?.error(
      { err: error, ...extra },
      `market stream: reading ${what} from the upstream failed; retrying next period`,
    );
  }
}
