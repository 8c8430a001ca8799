/**
 * Where `/api/v1/ws` messages come from and go to: one log per channel (`prices`, `trades`,
 * `orderbook`) whose entries carry a sequence number that is the same on every instance of the
 * deployment, and the time the leader published them. The leader (the instance that polls the
 * upstream) publishes changes into the logs; every instance hears every entry and frames it for its own
 * clients; a client that reconnects anywhere resumes from the sequence number it saw last.
 *
 * Two implementations: `MemoryMarketFeed` (one instance, always the leader) and `RedisMarketFeed`
 * (`redis-market-feed.ts`: several instances, one leader elected in Redis, the logs in Redis streams).
 */

export const MARKET_CHANNELS = ["prices", "trades", "orderbook"] as const;
export type MarketChannel = (typeof MARKET_CHANNELS)[number];

/** One published message: its position in its channel's log, when it was published (ms), its market. */
export interface FeedEntry {
  seq: number;
  ts: number;
  ticker: string;
  /**
   * The message's JSON without `seq` and `ts`; empty for a restart mark: the trade tape was not read
   * before it (nobody followed trades), so a resume from before it is a gap.
   */
  message: string;
}

/** Whether an entry marks a restart of the trade tape rather than carrying a message. */
export function isRestartMark(entry: FeedEntry): boolean {
  return entry.message === "";
}

/** What to publish: a market's new price or book (published only when it differs from the last), or a trade (once per id). */
export interface Publication {
  ticker: string;
  message: string;
  /** A trade's id: the trade is published at most once, whichever leader reads it. */
  id?: string;
}

/** What clients follow on each channel: every market, and the tickers named. */
export type Following = Record<MarketChannel, { all: boolean; tickers: string[] }>;

/** How the feed tells an instance's hub what happened; entries of a channel arrive in order, without holes. */
export interface FeedListener {
  entries(channel: MarketChannel, entries: readonly FeedEntry[]): void;
  /**
   * Entries up to `head` were lost to this instance, or belong to a log that was reset (later entries
   * continue from `head`); `values` are the current prices or books (none for trades).
   */
  reset(channel: MarketChannel, head: number, values: readonly FeedEntry[]): void;
  /** These markets are followed nowhere any more: their values are forgotten. */
  forget(channel: MarketChannel, tickers: readonly string[]): void;
  /** The leader read the upstream for `channel` successfully at `at` (ms). */
  healthy(channel: MarketChannel, at: number): void;
}

/** Hears what this instance itself published into the log, numbered: each entry once, by its publisher (the archive). */
export type PublishedListener = (channel: MarketChannel, entries: readonly FeedEntry[]) => void;

/** Resume answers: the entries after a position, or `undefined` when some are no longer kept. */
export type Replay = readonly FeedEntry[] | undefined;

export interface MarketFeed {
  /** Whether this instance polls the upstream now. */
  readonly isLeader: boolean;
  /** Begins hearing entries (and, when shared, loads the current values and announces what is followed). */
  start(listener: FeedListener): Promise<void>;
  /** What this instance's clients follow now; the leader polls the union over every instance. */
  follow(following: Following): void;
  /** What every instance's clients follow (read by the leader before it polls). */
  followed(): Promise<Following>;
  /** Publishes changes of a channel; entries reach every instance's listener in order. */
  publish(channel: MarketChannel, items: readonly Publication[]): Promise<void>;
  /** Sets who hears the entries this instance publishes, as numbered. */
  onPublished(listener: PublishedListener): void;
  /** Forgets values of markets nobody follows any more, on every instance. */
  forget(channel: MarketChannel, tickers: readonly string[]): Promise<void>;
  /** Says the upstream answered for `channel` at `at`. */
  healthy(channel: MarketChannel, at: number): Promise<void>;
  /** The trade tape's cursor (Unix s): from where the leader reads; undefined while nobody follows trades. */
  tradesCursor(): Promise<number | undefined>;
  /** Moves the cursor (undefined: nobody follows trades). */
  setTradesCursor(seconds: number | undefined): Promise<void>;
  /**
   * Starts the cursor at `seconds` unless it is running already (a first trades subscriber), and then
   * appends a restart mark to the trades log: what happened before it was not read.
   */
  startTrades(seconds: number): Promise<void>;
  /** The entries of `channel` after `since`, or undefined when some of them are no longer kept (or `since` is unknown). */
  replay(channel: MarketChannel, since: number): Promise<Replay>;
  /** The last sequence number of `channel` this instance has heard of (0 before any). */
  head(channel: MarketChannel): number;
  close(): Promise<void>;
}

/** How long entries are kept for resuming, at least (the floor is 60 s). */
export const DEFAULT_RETENTION_MS = 120_000;
/** Entries kept per channel at most, whatever their age: past it a resume gets a gap. */
export const DEFAULT_MAX_ENTRIES = 200_000;
/** How long a published trade id is remembered, so no leader publishes it twice. */
export const TRADE_MEMORY_MS = 300_000;

export interface MemoryFeedOptions {
  retentionMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** The feed of a single instance: the logs in memory, always the leader. */
export class MemoryMarketFeed implements MarketFeed {
  readonly isLeader = true;
  private listener: FeedListener | undefined;
  private onPublish: PublishedListener | undefined;
  private following: Following = emptyFollowing();
  private readonly logs = new Map<MarketChannel, FeedEntry[]>(MARKET_CHANNELS.map((c) => [c, []]));
  private readonly heads = new Map<MarketChannel, number>(MARKET_CHANNELS.map((c) => [c, 0]));
  private readonly last = new Map<string, string>();
  private readonly seenTrades = new Map<string, number>();
  private cursor: number | undefined;
  private readonly options: Required<MemoryFeedOptions>;

  constructor(options: MemoryFeedOptions = {}) {
    this.options = {
      retentionMs: DEFAULT_RETENTION_MS,
      maxEntries: DEFAULT_MAX_ENTRIES,
      now: Date.now,
      ...options,
    };
  }

  async start(listener: FeedListener): Promise<void> {
    this.listener = listener;
  }

  follow(following: Following): void {
    this.following = following;
  }

  async followed(): Promise<Following> {
    return this.following;
  }

  async publish(channel: MarketChannel, items: readonly Publication[]): Promise<void> {
    const now = this.options.now();
    const log = this.logs.get(channel) as FeedEntry[];
    const added: FeedEntry[] = [];
    for (const item of items) {
      if (item.id !== undefined) {
        if (this.seenTrades.has(item.id)) continue;
        this.seenTrades.set(item.id, now);
      } else {
        const key = `${channel}|${item.ticker}`;
        if (this.last.get(key) === item.message) continue;
        this.last.set(key, item.message);
      }
      const seq = (this.heads.get(channel) ?? 0) + 1;
      this.heads.set(channel, seq);
      const entry = { seq, ts: now, ticker: item.ticker, message: item.message };
      log.push(entry);
      added.push(entry);
    }
    this.trim(log, now);
    for (const [id, at] of this.seenTrades) if (at < now - TRADE_MEMORY_MS) this.seenTrades.delete(id);
    if (added.length === 0) return;
    this.onPublish?.(channel, added);
    this.listener?.entries(channel, added);
  }

  onPublished(listener: PublishedListener): void {
    this.onPublish = listener;
  }

  async forget(channel: MarketChannel, tickers: readonly string[]): Promise<void> {
    for (const ticker of tickers) this.last.delete(`${channel}|${ticker}`);
    this.listener?.forget(channel, tickers);
  }

  async healthy(channel: MarketChannel, at: number): Promise<void> {
    this.listener?.healthy(channel, at);
  }

  async tradesCursor(): Promise<number | undefined> {
    return this.cursor;
  }

  async setTradesCursor(seconds: number | undefined): Promise<void> {
    this.cursor = seconds;
  }

  async startTrades(seconds: number): Promise<void> {
    if (this.cursor !== undefined) return;
    this.cursor = seconds;
    const seq = this.head("trades") + 1;
    this.heads.set("trades", seq);
    const mark = { seq, ts: this.options.now(), ticker: "", message: "" };
    (this.logs.get("trades") as FeedEntry[]).push(mark);
    this.listener?.entries("trades", [mark]);
  }

  async replay(channel: MarketChannel, since: number): Promise<Replay> {
    const log = this.logs.get(channel) as FeedEntry[];
    const head = this.head(channel);
    if (since > head) return undefined;
    if (since === head) return [];
    const first = log[0];
    // Entries after `since` start at since + 1: the log must still hold that one.
    if (!first || first.seq > since + 1) return undefined;
    const missed = log.slice(since + 1 - first.seq);
    return missed.some(isRestartMark) ? undefined : missed;
  }

  head(channel: MarketChannel): number {
    return this.heads.get(channel) ?? 0;
  }

  async close(): Promise<void> {
    this.listener = undefined;
  }

  private trim(log: FeedEntry[], now: number): void {
    let drop = Math.max(0, log.length - this.options.maxEntries);
    while (drop < log.length && (log[drop] as FeedEntry).ts < now - this.options.retentionMs) drop += 1;
    if (drop > 0) log.splice(0, drop);
  }
}

/** Nobody follows anything. */
export function emptyFollowing(): Following {
  return {
    prices: { all: false, tickers: [] },
    trades: { all: false, tickers: [] },
    orderbook: { all: false, tickers: [] },
  };
}
