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
 *
 * Each channel's log has an epoch: a random id stored with it when it is created, carried by every
 * published message. A log that disappears (Redis restarted empty, its keys evicted or deleted) is
 * created again under a new id, numbered from Redis's clock in microseconds (and above the creating
 * instance's head), so its positions lie above every position of the log it replaces and a `since` from
 * that one is a gap. An instance that hears a new id (or sees one in Redis at its next tick) tells its
 * subscribers with a gap and then hands them the new log from its start, so nothing published into it
 * is lost; when Redis drops an instance's subscription for a while, the entries it missed are read back.
 */
import { randomUUID } from "node:crypto";
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
  type PublishedListener,
  type Replay,
  TRADE_MEMORY_MS,
} from "./market-feed.js";

/**
 * Lua shared by the scripts that write or load a log: `num` writes a sequence number in full (Lua's own
 * conversion keeps 14 digits), `ensure` creates the log's epoch when it is missing. A log whose numbering
 * exists without an epoch (written before epochs were kept) is adopted as it is; otherwise a new one
 * starts above Redis's clock in microseconds and `floor`, and what remains of an older log is dropped.
 * Scripts that call `ensure` begin with `redis.replicate_commands`, as TIME requires before Redis 5.
 */
const ENSURE = `
if redis.replicate_commands then redis.replicate_commands() end
local function num(n) return string.format('%.0f', n) end
local function ensure(epochKey, seqKey, logKey, lastKey, candidate, floor)
  local id = redis.call('HGET', epochKey, 'id')
  local head = redis.call('GET', seqKey)
  if id and head then return id end
  if head then
    redis.call('HSET', epochKey, 'id', candidate, 'base', '0')
    return candidate
  end
  local time = redis.call('TIME')
  local base = tonumber(time[1]) * 1000000 + tonumber(time[2])
  if tonumber(floor) > base then base = tonumber(floor) end
  redis.call('DEL', logKey, lastKey)
  redis.call('SET', seqKey, num(base))
  redis.call('HSET', epochKey, 'id', candidate, 'base', num(base))
  return candidate
end
`;

/**
 * KEYS: seq, log, last, pub/sub channel, epoch. ARGV: channel, now, max entries, trade key prefix,
 * trade memory (ms), candidate epoch id, floor, then (ticker, message, trade id or "") per item.
 * Entries are JSON [seq, ts, ticker, message] (and the trade id for a trade); a message is
 * {"c": channel, "x": epoch id, "e": entries}.
 */
const PUBLISH = `${ENSURE}
local epoch = ensure(KEYS[5], KEYS[1], KEYS[2], KEYS[3], ARGV[6], ARGV[7])
local out = {}
for i = 8, #ARGV, 3 do
  local ticker, message, id = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local fresh = true
  if id ~= '' then
    fresh = redis.call('SET', ARGV[4] .. id, '1', 'PX', ARGV[5], 'NX') ~= false
  else
    local previous = redis.call('HGET', KEYS[3], ticker)
    if previous and cjson.decode(previous)[4] == message then fresh = false end
  end
  if fresh then
    local seq = num(redis.call('INCR', KEYS[1]))
    local entry = '[' .. seq .. ',' .. ARGV[2] .. ',' .. cjson.encode(ticker) .. ',' .. cjson.encode(message)
    if id ~= '' then entry = entry .. ',' .. cjson.encode(id) end
    entry = entry .. ']'
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', entry)
    if id == '' then redis.call('HSET', KEYS[3], ticker, entry) end
    out[#out + 1] = entry
  end
end
local entries = '[' .. table.concat(out, ',') .. ']'
if #out > 0 then
  redis.call('PUBLISH', KEYS[4], '{"c":"' .. ARGV[1] .. '","x":"' .. epoch .. '","e":' .. entries .. '}')
end
return entries`;

/**
 * KEYS: cursor, seq, log, pub/sub channel, epoch, last. ARGV: seconds, now, max entries, candidate
 * epoch id, floor. Starts the tape with a restart mark.
 */
const START_TRADES = `${ENSURE}
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
local epoch = ensure(KEYS[5], KEYS[2], KEYS[3], KEYS[6], ARGV[4], ARGV[5])
local seq = num(redis.call('INCR', KEYS[2]))
local entry = '[' .. seq .. ',' .. ARGV[2] .. ',"",""]'
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', entry)
redis.call('PUBLISH', KEYS[4], '{"c":"trades","x":"' .. epoch .. '","e":[' .. entry .. ']}')
return 1`;

/**
 * KEYS: epoch, seq, log, last. ARGV: candidate epoch id, floor, the epoch id the caller knew ("": it
 * wants no entries), max entries. Answers the log's epoch id, base, head and current values (flat
 * field/value list), and, when its epoch is not the one the caller knew, its entries from its start.
 */
const LOAD = `${ENSURE}
local id = ensure(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2])
local base = redis.call('HGET', KEYS[1], 'base')
local entries = {}
if ARGV[3] ~= '' and ARGV[3] ~= id then
  local items = redis.call('XRANGE', KEYS[3], num(tonumber(base) + 1) .. '-0', '+', 'COUNT', ARGV[4])
  for _, item in ipairs(items) do entries[#entries + 1] = item[2][2] end
end
return {id, base, redis.call('GET', KEYS[2]), redis.call('HGETALL', KEYS[4]), entries}`;

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

/** A published entry: [seq, ts, ticker, message] and, for a trade, its id. */
type RawEntry = [number, number, string, string, string?];

type Envelope =
  | { c: MarketChannel; x?: string; e: RawEntry[] }
  | { c: MarketChannel; forget: string[] }
  | { c: MarketChannel; healthy: number };

/** An entry as heard, with its trade id when it is a trade. */
interface Heard extends FeedEntry {
  id?: string;
}

/** What an instance knows of a channel's log. */
interface LogState {
  /** The log's epoch id (undefined before it is loaded). */
  epoch: string | undefined;
  /** The last sequence number handed to the hub. */
  head: number;
  /** The log's head in Redis at the last check: still above `head` at the next one, entries went unheard. */
  seen: number;
}

/** Longest replay answered at once; a client further behind gets a gap. */
const MAX_REPLAY = 100_000;

/**
 * How long an instance remembers the ids of trades it heard, so that as leader it publishes none of
 * them again when Redis has lost its own memory of them (a log reset re-reads the latest seconds).
 */
const HEARD_TRADES_MS = 60_000;

/** One instance's side of the shared market feed. */
export class RedisMarketFeed implements MarketFeed {
  private listener: FeedListener | undefined;
  private onPublish: PublishedListener | undefined;
  private following: Following = emptyFollowing();
  private readonly logs = new Map<MarketChannel, LogState>(
    MARKET_CHANNELS.map((c) => [c, { epoch: undefined, head: 0, seen: 0 }]),
  );
  /** Trade ids heard, in the order heard, with when. */
  private readonly heardTrades = new Map<string, number>();
  private readonly leadership: StreamLeadership;
  private readonly options: Required<Omit<RedisMarketFeedOptions, "logger">> & RedisMarketFeedOptions;
  /** Messages are handled one after another, so that a hole is filled before later entries go out. */
  private receiving: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastTrim = 0;
  private started = false;
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
      this.enqueue(() => this.receive(message), "market feed: a message could not be handled");
    });
    // Messages published while the subscription was down were not heard: read them back (or say they are gone).
    this.subscriber.on("ready", () => {
      if (!this.started) return;
      for (const channel of MARKET_CHANNELS)
        this.enqueue(() => this.resync(channel), "market feed: catching up after a reconnection failed");
    });
    await this.subscriber.subscribe(this.key("events"));
    try {
      for (const channel of MARKET_CHANNELS) await this.reload(channel);
      const health = await this.redis.hgetall(this.key("health"));
      for (const [channel, at] of Object.entries(health))
        if (isChannel(channel)) listener.healthy(channel, Number(at));
    } finally {
      this.started = true;
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
    for (const item of items)
      if (item.id === undefined || !this.heardTrades.has(item.id))
        args.push(item.ticker, item.message, item.id ?? "");
    if (args.length === 0) return;
    const published = await this.redis.eval(
      PUBLISH,
      5,
      this.key(`seq:${channel}`),
      this.key(`log:${channel}`),
      this.key(`last:${channel}`),
      this.key("events"),
      this.key(`epoch:${channel}`),
      channel,
      String(Date.now()),
      String(this.options.maxEntries),
      this.key("trade:"),
      String(TRADE_MEMORY_MS),
      randomUUID(),
      String(this.head(channel) + 1),
      ...args,
    );
    if (!this.onPublish) return;
    const entries = (JSON.parse(String(published)) as RawEntry[]).map(([seq, ts, ticker, message]) => ({
      seq,
      ts,
      ticker,
      message,
    }));
    if (entries.length > 0) this.onPublish(channel, entries);
  }

  onPublished(listener: PublishedListener): void {
    this.onPublish = listener;
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
      6,
      this.key("trades-cursor"),
      this.key("seq:trades"),
      this.key("log:trades"),
      this.key("events"),
      this.key("epoch:trades"),
      this.key("last:trades"),
      String(seconds),
      String(Date.now()),
      String(this.options.maxEntries),
      randomUUID(),
      String(this.head("trades") + 1),
    );
  }

  async replay(channel: MarketChannel, since: number): Promise<Replay> {
    const answers = await this.redis
      .multi()
      .hget(this.key(`epoch:${channel}`), "base")
      .get(this.key(`seq:${channel}`))
      .xrange(this.key(`log:${channel}`), `${since + 1}-0`, "+", "COUNT", MAX_REPLAY)
      .exec();
    const base = Number(answers?.[0]?.[1] ?? 0);
    const head = Number(answers?.[1]?.[1] ?? 0);
    const items = (answers?.[2]?.[1] ?? []) as [string, string[]][];
    // A position below the log's base belongs to a log that was reset: what came after it is gone.
    if (since > head || since < base) return undefined;
    const entries = items.map(([, fields]) => parseEntry(fields[1] as string));
    if (entries.length === 0) return since === head ? [] : undefined;
    const first = entries[0] as FeedEntry;
    const last = entries[entries.length - 1] as FeedEntry;
    if (first.seq !== since + 1 || (last.seq < head && entries.length === MAX_REPLAY)) return undefined;
    return entries.some(isRestartMark) ? undefined : entries;
  }

  head(channel: MarketChannel): number {
    return this.log(channel).head;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.leadership.release();
    this.listener = undefined;
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  private log(channel: MarketChannel): LogState {
    return this.logs.get(channel) as LogState;
  }

  /** Runs `task` after every message and task before it. */
  private enqueue(task: () => Promise<void>, failure: string): void {
    this.receiving = this.receiving.then(task).catch((error: unknown) => this.logError(error, failure));
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error: unknown) => this.logError(error, "market feed: a tick failed"))
        .finally(() => this.schedule());
    }, this.options.tickMs).unref();
  }

  /**
   * Announces what this instance follows, checks its logs against Redis, claims or renews the lead,
   * and (leading) trims the logs.
   */
  private async tick(): Promise<void> {
    this.forgetHeardTrades();
    let failure: unknown;
    await this.announce().catch((error: unknown) => {
      failure = error;
    });
    await this.check().catch((error: unknown) => {
      failure ??= error;
    });
    // Claimed whatever failed before: without Redis the claim fails, and this instance stops leading at once.
    const leading = await this.leadership.claim();
    if (failure !== undefined) throw failure;
    if (!leading) return;
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

  /**
   * Notices, without waiting for the next message, a log that was reset (another epoch in Redis) and
   * entries that stayed unheard for a whole tick (pub/sub messages Redis dropped), and catches up.
   */
  private async check(): Promise<void> {
    const multi = this.redis.multi();
    for (const channel of MARKET_CHANNELS)
      multi.hget(this.key(`epoch:${channel}`), "id").get(this.key(`seq:${channel}`));
    const answers = (await multi.exec()) ?? [];
    MARKET_CHANNELS.forEach((channel, i) => {
      const [idError, id] = answers[2 * i] ?? [];
      const [headError, head] = answers[2 * i + 1] ?? [];
      if (idError || headError) return;
      const log = this.log(channel);
      const behind = log.seen > log.head;
      log.seen = id === log.epoch ? Number(head ?? 0) : 0;
      // A log without an epoch has not been written since it vanished: there is nothing to hear yet.
      if ((typeof id === "string" && id !== log.epoch) || (id === log.epoch && behind))
        this.enqueue(() => this.resync(channel), "market feed: catching up failed");
    });
  }

  /** Catches up with a channel's log as Redis has it now: a new epoch, or entries not heard. */
  private async resync(channel: MarketChannel): Promise<void> {
    if (!this.listener) return;
    const answers = await this.redis
      .multi()
      .hget(this.key(`epoch:${channel}`), "id")
      .get(this.key(`seq:${channel}`))
      .exec();
    const id = answers?.[0]?.[1] as string | null | undefined;
    const head = Number(answers?.[1]?.[1] ?? 0);
    const log = this.log(channel);
    if (typeof id !== "string") return;
    if (id !== log.epoch) await this.reload(channel);
    else if (head > log.head) await this.fill(channel, []);
  }

  /**
   * Loads a channel's log and hands it to the hub. The first time, or within the same epoch (entries
   * this instance missed are gone): its head and current values, after a gap. When the epoch changed:
   * a gap at the new log's start, then every entry of the new log (a gap at its head and the current
   * values instead when the new log no longer holds its start).
   */
  private async reload(channel: MarketChannel): Promise<void> {
    const log = this.log(channel);
    const known = log.epoch ?? "";
    const [id, baseText, headText, flat, texts] = (await this.redis.eval(
      LOAD,
      4,
      this.key(`epoch:${channel}`),
      this.key(`seq:${channel}`),
      this.key(`log:${channel}`),
      this.key(`last:${channel}`),
      randomUUID(),
      String(log.head + 1),
      known,
      String(MAX_REPLAY),
    )) as [string, string, string | null, string[], string[]];
    const base = Number(baseText);
    const head = Number(headText ?? base);
    log.epoch = id;
    log.seen = head;
    const entries = texts.map(parseEntry);
    if (known !== "" && known !== id && entries.length === head - base && entries[0]?.seq === base + 1) {
      // The new log from its start: after the gap, nothing published into it is missed.
      let at = base;
      while (entries[0] && isRestartMark(entries[0])) at = (entries.shift() as FeedEntry).seq;
      log.head = at;
      this.listener?.reset(channel, at, []);
      this.hand(channel, entries);
      return;
    }
    const values: FeedEntry[] = [];
    if (channel !== "trades")
      for (let i = 1; i < flat.length; i += 2) {
        const value = parseEntry(flat[i] as string);
        if (value.seq <= head) values.push(value);
      }
    log.head = head;
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
    const log = this.log(channel);
    if (envelope.x !== undefined && envelope.x !== log.epoch) {
      // The log was reset: its subscribers hear of it, then get the new one from its start.
      await this.reload(channel);
      // A log already replaced again: its entries lie within the gap just sent.
      if (envelope.x !== log.epoch) return;
    }
    const entries = envelope.e
      .map(([seq, ts, ticker, message, id]) => ({ seq, ts, ticker, message, id }))
      .filter((entry) => entry.seq > log.head);
    if (entries.length > 0) await this.fill(channel, entries);
  }

  /**
   * Hands the hub `entries` (all beyond its head; none: whatever the log holds beyond it), after the
   * ones before them it has not had, read back from the log; when those are gone, after a reset.
   */
  private async fill(channel: MarketChannel, entries: Heard[]): Promise<void> {
    const log = this.log(channel);
    const first = entries[0];
    if (first && first.seq === log.head + 1) {
      this.hand(channel, entries);
      return;
    }
    // A pub/sub message went missing (Redis dropped this connection for a moment): read it back.
    const missed = await this.replay(channel, log.head);
    if (missed === undefined) {
      await this.reload(channel);
      this.hand(
        channel,
        entries.filter((entry) => entry.seq > log.head),
      );
    } else this.hand(channel, [...missed.filter((entry) => !first || entry.seq < first.seq), ...entries]);
  }

  /**
   * Gives the hub entries that follow its head, and remembers the trades among them. A trade this
   * instance already handed on is left out: a new log's start can hold it again when the leader
   * that re-read the tape never heard it go out before Redis lost the old log.
   */
  private hand(channel: MarketChannel, entries: readonly Heard[]): void {
    const last = entries[entries.length - 1];
    if (!last) return;
    const log = this.log(channel);
    log.head = last.seq;
    const now = Date.now();
    const fresh = entries.filter((entry) => entry.id === undefined || !this.heardTrades.has(entry.id));
    for (const entry of fresh) if (entry.id !== undefined) this.heardTrades.set(entry.id, now);
    if (fresh.length > 0) this.listener?.entries(channel, fresh);
  }

  /** Drops trade ids heard longer ago than they are remembered (the map is in the order heard). */
  private forgetHeardTrades(): void {
    const cutoff = Date.now() - HEARD_TRADES_MS;
    for (const [id, at] of this.heardTrades) {
      if (at >= cutoff) break;
      this.heardTrades.delete(id);
    }
  }

  private key(name: string): string {
    return `${this.options.prefix}market-stream:${name}`;
  }

  private logError(error: unknown, message: string): void {
    if (!this.closed) this.options.logger?.error({ err: error }, message);
  }
}

function parseEntry(text: string): Heard {
  const [seq, ts, ticker, message, id] = JSON.parse(text) as RawEntry;
  return id === undefined ? { seq, ts, ticker, message } : { seq, ts, ticker, message, id };
}

function isChannel(value: string): value is MarketChannel {
  return (MARKET_CHANNELS as readonly string[]).includes(value);
}
