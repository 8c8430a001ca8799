/**
 * A pair stream across instances (with `REDIS_URL`): every instance announces the pairs its clients
 * follow; one instance at a time, the leader (a Redis key with a short expiry), prices all of them
 * once per slot and publishes the result; every instance builds its clients' frames from what was
 * published. If the leader stops, its key expires within three slots and another takes over. Each
 * stream (`/quote-stream`, `/book-stream`) shares through keys of its own, under its `name`.
 */
import type { Redis } from "ioredis";
import { every, type Repeating } from "../every.js";
import { StreamLeadership } from "../http/stream-leader.js";
import { connectRedisPair } from "../storage/redis.js";

/** Pair key (`base|quote`) → the serialized update the stream sends for it. */
export type PairQuotes = ReadonlyMap<string, string>;

export interface SharedQuotesOptions {
  url: string;
  prefix: string;
  /** The stream whose values are shared, naming its keys and channel (default `quote-stream`). */
  name?: "quote-stream" | "book-stream";
  slotMs: number;
  /** Quotes the given pairs (called on the leader only). */
  compute(pairs: readonly string[]): PairQuotes;
  logger?: { error(object: object, message: string): void };
}

/** One instance's side of the shared quotes: announces its pairs, leads when it can, receives what the leader publishes. */
export class SharedQuotes {
  private readonly followed = new Set<string>();
  private latestQuotes: PairQuotes = new Map();
  private slots: Repeating | undefined;
  private readonly leadership: StreamLeadership;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly options: SharedQuotesOptions,
  ) {
    this.leadership = new StreamLeadership(redis, `${this.keyPrefix}leader`, options.slotMs * 3);
  }

  /** Connects both Redis connections (commands, and the subscription) and starts the slot loop. */
  static async connect(options: SharedQuotesOptions): Promise<SharedQuotes> {
    const [redis, subscriber] = await connectRedisPair(options.url);
    const shared = new SharedQuotes(redis, subscriber, options);
    await subscriber.subscribe(shared.channel);
    subscriber.on("message", (_channel, message) => shared.receive(message));
    // A slow Redis delays the next slot rather than piling slots up.
    shared.slots = every(options.slotMs, () => shared.slot(), {
      onError: (error) => options.logger?.error({ err: error }, "shared quotes: a slot failed"),
    });
    return shared;
  }

  /** The pairs this instance's clients follow now (replacing the previous set). */
  follow(pairs: Iterable<string>): void {
    this.followed.clear();
    for (const pair of pairs) this.followed.add(pair);
  }

  /** The quotes published last (by whichever instance leads). */
  get latest(): PairQuotes {
    return this.latestQuotes;
  }

  /** Whether this instance is the one quoting for all. */
  get isLeader(): boolean {
    return this.leadership.isLeader;
  }

  /** Stops the slots, gives up the lead and disconnects. */
  async close(): Promise<void> {
    this.slots?.stop();
    await this.leadership.release();
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  /** `{REDIS_PREFIX}{stream}:`, under which every key of this stream's sharing lives. */
  private get keyPrefix(): string {
    return `${this.options.prefix}${this.options.name ?? "quote-stream"}:`;
  }

  private get channel(): string {
    return `${this.keyPrefix}quotes`;
  }

  private get wantedKey(): string {
    return `${this.keyPrefix}wanted`;
  }

  /** One slot: announce, keep or take the lead, and on the leader quote and publish. */
  private async slot(): Promise<void> {
    const { redis, options } = this;
    const now = Date.now();
    const ttl = options.slotMs * 3;
    if (this.followed.size > 0) {
      const expiries: string[] = [];
      for (const pair of this.followed) expiries.push(pair, String(now + ttl));
      await redis.hset(this.wantedKey, ...expiries);
    }
    if (!(await this.leadership.claim())) return;
    const wanted = await redis.hgetall(this.wantedKey);
    const live: string[] = [];
    const stale: string[] = [];
    for (const [pair, expiry] of Object.entries(wanted)) (Number(expiry) > now ? live : stale).push(pair);
    if (stale.length > 0) await redis.hdel(this.wantedKey, ...stale);
    if (live.length === 0) return;
    await redis.publish(this.channel, JSON.stringify(Object.fromEntries(options.compute(live))));
  }

  private receive(message: string): void {
    try {
      this.latestQuotes = new Map(Object.entries(JSON.parse(message) as Record<string, string>));
    } catch {
      // Not ours: keep the previous quotes.
    }
  }
}
