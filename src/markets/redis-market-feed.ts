/**
 * The `/api/v1/ws` feed across instances (with `REDIS_URL`). Every instance announces what its clients
 * follow (a hash of `channel|ticker` → expiry); one instance at a time leads (`StreamLeadership`, the
 * election `/quote-stream` and `/book-stream` use) and polls the upstream for the union. What it
 * publishes goes through one Lua script per batch that keeps the deployment's rules in one place:
 * a price or book goes out only when it differs from the last one published, a trade only once per id
 * (so a new leader re-reading the tape repeats nothing), each gets the channel's next sequence number,
 * is appended to the channel's Redis stream (kept `retentionMs`, for resumes on any instance) and is
 * published on one pub/sub channel that every instance hears. An instance that misses a pub/sub
 * message (a hole in the numbers) reads it back from the stream; when it is gone, it says so (`reset`).
 */
import type { Redis } from "ioredis";
import { StreamLeadership } from "../http/stream-leader.js";
import { connectRedisPair } from "../storage/redis.js";
import {
  DEFAULT_MAX_ENTRIES,
  DEFAULT_RETENTION_MS,
  emptyFollowing,
  type FeedEntry,
  type FeedListener,
  type Following,
  isRestartMark,
  MARKET_CHANNELS,
  type MarketChannel,
  type MarketFeed,
  type Publication,
  type Replay,
  TRADE_MEMORY_MS,
} from "./market-feed.js";

/**
 * KEYS: seq, log, last, pub/sub channel. ARGV: channel, now, max entries, trade key prefix, trade
 * memory (ms), then (ticker, message, trade id or "") per item. Entries are JSON [seq, ts, ticker, message].
 */
const PUBLISH = `
local out = {}
for i = 6, #ARGV, 3 do
  local ticker, message, id = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local fresh = true
  if id ~= '' then
    fresh = redis.call('SET', ARGV[4] .. id, '1', 'PX', ARGV[5], 'NX') ~= false
  else
    local previous = redis.call('HGET', KEYS[3], ticker)
    if previous and cjson.decode(previous)[4] == message then fresh = false end
  end
  if fresh then
    local seq = redis.call('INCR', KEYS[1])
    local entry = cjson.encode({seq, tonumber(ARGV[2]), ticker, message})
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', entry)
    if id == '' then redis.call('HSET', KEYS[3], ticker, entry) end
    out[#out + 1] = entry
  end
end
if #out > 0 then
  redis.call('PUBLISH', KEYS[4], '{"c":"' .. ARGV[1] .. '","e":[' .. table.concat(out, ',') .. ']}')
end
return #out`;

/** KEYS: cursor, seq, log, pub/sub channel. ARGV: seconds, now, max entries. Starts the tape with a restart mark. */
const START_TRADES = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
local seq = redis.call('INCR', KEYS[2])
local entry = cjson.encode({seq, tonumber(ARGV[2]), '', ''})
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', entry)
redis.call('PUBLISH', KEYS[4], '{"c":"trades","e":[' .. entry .. ']}')
return seq`;

/** KEYS: log. ARGV: cutoff (ms). Drops entries published before the cutoff. */
const TRIM = `
local cutoff = tonumber(ARGV[1])
for round = 1, 20 do
  local batch = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 500)
  if #batch == 0 then return 0 end
  for _, item in ipairs(batch) do
    if cjson.decode(item[2][2])[2] >= cutoff then
      redis.call('XTRIM', KEYS[1], 'MINID', item[1])
      return 1
    end
  end
  local last = batch[#batch][1]
  redis.call('XTRIM', KEYS[1], 'MINID', string.sub(last, 1, string.find(last, '-', 1, true) - 1) .. '-1')
end
return 0`;

export interface RedisMarketFeedOptions {
  url: string;
  prefix: string;
  /** How often an instance announces what it follows and claims the lead (default 500 ms). */
  tickMs?: number;
  /** How long a lead lasts unrenewed: a crashed leader is replaced within it and a tick (default 1,500 ms). */
  leaseMs?: number;
  retentionMs?: number;
  maxEntries?: number;
  logger?: { error(object: object, message: string): void };
}

type Envelope =
  | { c: MarketChannel; e: [number, number, string, string][] }
  | { c: MarketChannel; forget: string[] }
  | { c: MarketChannel; healthy: number };

/** Longest replay answered at once; a client further behind gets a gap. */
const MAX_REPLAY = 100_000;

/** One instance's side of the shared market feed. */
export class RedisMarketFeed implements MarketFeed {
  private listener: FeedListener | undefined;
  private following: Following = emptyFollowing();
  private readonly heads = new Map<MarketChannel, number>(MARKET_CHANNELS.map((c) => [c, 0]));
  private readonly leadership: StreamLeadership;
  private readonly options: Required<Omit<RedisMarketFeedOptions, "logger">> & RedisMarketFeedOptions;
  /** Messages are handled one after another, so that a hole is filled before later entries go out. */
  private receiving: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastTrim = 0;
  private closed = false;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    options: RedisMarketFeedOptions,
  ) {
    this.options = {
      tickMs: 500,
      leaseMs: 1_500,
      retentionMs: DEFAULT_RETENTION_MS,
      maxEntries: DEFAULT_MAX_ENTRIES,
      ...options,
    };
    this.leadership = new StreamLeadership(redis, this.key("leader"), this.options.leaseMs);
  }

  /** Connects both Redis connections (commands, and the subscription). */
  static async connect(options: RedisMarketFeedOptions): Promise<RedisMarketFeed> {
    const [redis, subscriber] = await connectRedisPair(options.url);
    return new RedisMarketFeed(redis, subscriber, options);
  }

  get isLeader(): boolean {
    return this.leadership.isLeader && !this.closed;
  }

  async start(listener: FeedListener): Promise<void> {
    this.listener = listener;
    // Heard from now on, handled after the current state is loaded (older entries are then skipped).
    let loaded: () => void = () => {};
    this.receiving = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    this.subscriber.on("message", (_channel, message: string) => {
      this.receiving = this.receiving
        .then(() => this.receive(message))
        .catch((error: unknown) => this.logError(error, "market feed: a message could not be handled"));
    });
    await this.subscriber.subscribe(this.key("events"));
    try {
      for (const channel of MARKET_CHANNELS) await this.reload(channel);
      const health = await this.redis.hgetall(this.key("health"));
      for (const [channel, at] of Object.entries(health))
        if (isChannel(channel)) listener.healthy(channel, Number(at));
    } finally {
      loaded();
    }
    await this.tick().catch((error: unknown) => this.logError(error, "market feed: a tick failed"));
    this.schedule();
  }

  follow(following: Following): void {
    const added = MARKET_CHANNELS.some(
      (c) =>
        (following[c].all && !this.following[c].all) ||
        following[c].tickers.some((t) => !this.following[c].tickers.includes(t)),
    );
    this.following = following;
    // Something new is announced at once, so the leader polls it in its next period.
    if (added)
      this.announce().catch((error: unknown) => this.logError(error, "market feed: announcing failed"));
  }

  async followed(): Promise<Following> {
    const wanted = await this.redis.hgetall(this.key("wanted"));
    const now = Date.now();
    const union = emptyFollowing();
    const expired: string[] = [];
    for (const [field, expiry] of Object.entries(wanted)) {
      if (Number(expiry) <= now) {
        expired.push(field);
        continue;
      }
      const bar = field.indexOf("|");
      const channel = field.slice(0, bar);
      const ticker = field.slice(bar + 1);
      if (!isChannel(channel)) continue;
      if (ticker === "*") union[channel].all = true;
      else union[channel].tickers.push(ticker);
    }
    if (expired.length > 0) await this.redis.hdel(this.key("wanted"), ...expired);
    return union;
  }

  async publish(channel: MarketChannel, items: readonly Publication[]): Promise<void> {
    if (items.length === 0 || !this.isLeader) return;
    const args: string[] = [];
    for (const item of items) args.push(item.ticker, item.message, item.id ?? "");
    await this.redis.eval(
      PUBLISH,
      4,
      this.key(`seq:${channel}`),
      this.key(`log:${channel}`),
      this.key(`last:${channel}`),
      this.key("events"),
      channel,
      String(Date.now()),
      String(this.options.maxEntries),
      this.key("trade:"),
      String(TRADE_MEMORY_MS),
      ...args,
    );
  }

  async forget(channel: MarketChannel, tickers: readonly string[]): Promise<void> {
    if (tickers.length === 0) return;
    await this.redis.hdel(this.key(`last:${channel}`), ...tickers);
    await this.redis.publish(this.key("events"), JSON.stringify({ c: channel, forget: tickers }));
  }

  async healthy(channel: MarketChannel, at: number): Promise<void> {
    await this.redis.hset(this.key("health"), channel, String(at));
    await this.redis.publish(this.key("events"), JSON.stringify({ c: channel, healthy: at }));
  }

  async tradesCursor(): Promise<number | undefined> {
    const value = await this.redis.get(this.key("trades-cursor"));
    return value === null ? undefined : Number(value);
  }

  async setTradesCursor(seconds: number | undefined): Promise<void> {
    if (seconds === undefined) await this.redis.del(this.key("trades-cursor"));
    else await this.redis.set(this.key("trades-cursor"), String(seconds));
  }

  async startTrades(seconds: number): Promise<void> {
    await this.redis.eval(
      START_TRADES,
      4,
      this.key("trades-cursor"),
      this.key("seq:trades"),
      this.key("log:trades"),
      this.key("events"),
      String(seconds),
      String(Date.now()),
      String(this.options.maxEntries),
    );
  }

  async replay(channel: MarketChannel, since: number): Promise<Replay> {
    const answers = await this.redis
      .multi()
      .get(this.key(`seq:${channel}`))
      .xrange(this.key(`log:${channel}`), `${since + 1}-0`, "+", "COUNT", MAX_REPLAY)
      .exec();
    const head = Number(answers?.[0]?.[1] ?? 0);
    const items = (answers?.[1]?.[1] ?? []) as [string, string[]][];
    if (since > head) return undefined;
    const entries = items.map(([, fields]) => parseEntry(fields[1] as string));
    if (entries.length === 0) return since === head ? [] : undefined;
    const first = entries[0] as FeedEntry;
    const last = entries[entries.length - 1] as FeedEntry;
    if (first.seq !== since + 1 || (last.seq < head && entries.length === MAX_REPLAY)) return undefined;
    return entries.some(isRestartMark) ? undefined : entries;
  }

  head(channel: MarketChannel): number {
    return this.heads.get(channel) ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.leadership.release();
    this.listener = undefined;
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error: unknown) => this.logError(error, "market feed: a tick failed"))
        .finally(() => this.schedule());
    }, this.options.tickMs).unref();
  }

  /** Announces what this instance follows, claims or renews the lead, and (leading) trims the logs. */
  private async tick(): Promise<void> {
    await this.announce();
    if (!(await this.leadership.claim())) return;
    const now = Date.now();
    if (now - this.lastTrim < 5_000) return;
    this.lastTrim = now;
    for (const channel of MARKET_CHANNELS)
      await this.redis.eval(TRIM, 1, this.key(`log:${channel}`), String(now - this.options.retentionMs));
  }

  private async announce(): Promise<void> {
    const expiry = String(Date.now() + Math.max(4 * this.options.tickMs, 2_000));
    const fields: string[] = [];
    for (const channel of MARKET_CHANNELS) {
      const state = this.following[channel];
      if (state.all) fields.push(`${channel}|*`, expiry);
      for (const ticker of state.tickers) fields.push(`${channel}|${ticker}`, expiry);
    }
    if (fields.length > 0) await this.redis.hset(this.key("wanted"), ...fields);
  }

  /** Loads a channel's head and its current values, and hands them to the hub. */
  private async reload(channel: MarketChannel): Promise<void> {
    const answers = await this.redis
      .multi()
      .get(this.key(`seq:${channel}`))
      .hgetall(this.key(`last:${channel}`))
      .exec();
    const head = Number(answers?.[0]?.[1] ?? 0);
    const values =
      channel === "trades"
        ? []
        : Object.values((answers?.[1]?.[1] ?? {}) as Record<string, string>)
            .map(parseEntry)
            .filter((entry) => entry.seq <= head);
    this.heads.set(channel, head);
    this.listener?.reset(channel, head, values);
  }

  private async receive(raw: string): Promise<void> {
    const listener = this.listener;
    if (!listener) return;
    const envelope = JSON.parse(raw) as Envelope;
    const channel = envelope.c;
    if (!isChannel(channel)) return;
    if ("forget" in envelope) {
      listener.forget(channel, envelope.forget);
      return;
    }
    if ("healthy" in envelope) {
      listener.healthy(channel, envelope.healthy);
      return;
    }
    const head = this.head(channel);
    let entries = envelope.e
      .map(([seq, ts, ticker, message]) => ({ seq, ts, ticker, message }))
      .filter((entry) => entry.seq > head);
    const first = entries[0];
    if (!first) return;
    if (first.seq > head + 1) {
      // A pub/sub message went missing (Redis dropped this connection for a moment): read it back.
      const missed = await this.replay(channel, head);
      if (missed === undefined) {
        await this.reload(channel);
        entries = entries.filter((entry) => entry.seq > this.head(channel));
      } else entries = [...missed.filter((entry) => entry.seq < first.seq), ...entries];
    }
    if (entries.length === 0) return;
    this.heads.set(channel, (entries[entries.length - 1] as FeedEntry).seq);
    listener.entries(channel, entries);
  }

  private key(name: string): string {
    return `${this.options.prefix}market-stream:${name}`;
  }

  private logError(error: unknown, message: string): void {
    if (!this.closed) this.options.logger?.error({ err: error }, message);
  }
}

function parseEntry(text: string): FeedEntry {
  const [seq, ts, ticker, message] = JSON.parse(text) as [number, number, string, string];
  return { seq, ts, ticker, message };
}

function isChannel(value: string): value is MarketChannel {
  return (MARKET_CHANNELS as readonly string[]).includes(value);
}
