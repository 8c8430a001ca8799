/**
 * A pair stream across instances (with `REDIS_URL`): every instance announces the pairs its clients
 * follow; one instance at a time, the leader (a Redis key with a short expiry), prices all of them
 * once per slot and publishes the result; every instance builds its clients' frames from what was
 * published. If the leader stops, its key expires within three slots and another takes over. Each
 * stream (`/quote-stream`, `/book-stream`) shares through keys of its own, under its `name`.
 *
 * What the leader publishes is positioned (`pair-positions.ts`): `{"seq","values":{pair:[update,
 * changedAt]}}`, so a position means the same on every instance and a client resumes on any of them.
 * The leader also keeps the positions of the retention window in a sorted set, from which an instance
 * that starts learns them, so that a client moving to it from a stopped instance resumes there too, and
 * its latest publication under a key of its own: an instance that takes the lead reads it first, so
 * that it continues the positions even when it has heard nothing yet (it started while the leader was
 * stalled, or after every instance stopped) and an unchanged value keeps the position it holds from.
 */
import type { Redis } from "ioredis";
import { every, type Repeating } from "../../every.js";
import { StreamLeadership } from "../../http/stream-leader.js";
import { connectRedisPair } from "../../storage/redis.js";
import {
  DEFAULT_PAIR_RETENTION_MS,
  PairPositions,
  type PairValue,
  type Publication,
} from "./pair-positions.js";

/** Pair key (`base|quote`) → the serialized update the stream sends for it. */
export type PairQuotes = ReadonlyMap<string, string>;

export interface SharedQuotesOptions {
  url: string;
  prefix: string;
  /** The stream whose values are shared, naming its keys and channel (default `quote-stream`). */
  name?: "quote-stream" | "book-stream";
  slotMs: number;
  /** How long positions are kept for resuming (default 120 s). */
  retentionMs?: number;
  /** Quotes the given pairs (called on the leader only). */
  compute(pairs: readonly string[]): PairQuotes;
  /**
   * Whether this instance may lead now (default: always). One whose chain is fenced must not: it would
   * keep the lead and publish nothing until restarted, freezing every instance's stream.
   */
  canLead?(): boolean;
  logger?: { error(object: object, message: string): void };
}

/** One instance's side of the shared quotes: announces its pairs, leads when it can, receives what the leader publishes. */
export class SharedQuotes {
  private readonly followed = new Set<string>();
  private slots: Repeating | undefined;
  private readonly leadership: StreamLeadership;
  /** The positions issued (when leading) or heard, and the latest publication. */
  readonly positions: PairPositions;
  private readonly retentionMs: number;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly options: SharedQuotesOptions,
  ) {
    this.leadership = new StreamLeadership(redis, `${this.keyPrefix}leader`, options.slotMs * 3);
    this.retentionMs = options.retentionMs ?? DEFAULT_PAIR_RETENTION_MS;
    this.positions = new PairPositions(this.retentionMs);
  }

  /** Connects both Redis connections (commands, and the subscription) and starts the slot loop. */
  static async connect(options: SharedQuotesOptions): Promise<SharedQuotes> {
    const [redis, subscriber] = await connectRedisPair(options.url);
    const shared = new SharedQuotes(redis, subscriber, options);
    await subscriber.subscribe(shared.channel);
    subscriber.on("message", (_channel, message) => shared.receive(message));
    // Positions issued before this instance started, so that a client from another instance resumes here.
    const recent = await redis.zrangebyscore(shared.positionsKey, Date.now() - shared.retentionMs, "+inf");
    shared.positions.remember(recent.map(Number).filter(Number.isSafeInteger));
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

  /** The quotes published last (by whichever instance leads), without their positions. */
  get latest(): PairQuotes {
    const values = this.positions.latest?.values ?? new Map<string, PairValue>();
    return new Map([...values].map(([key, value]) => [key, value.json]));
  }

  /** The publication heard last, with its position and each pair's. */
  get publication(): Publication | undefined {
    return this.positions.latest;
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

  /** The leader's latest publication, as it was sent. */
  private get latestKey(): string {
    return `${this.keyPrefix}latest`;
  }

  /** The positions of the retention window, each its own score. */
  private get positionsKey(): string {
    return `${this.keyPrefix}positions`;
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
    if (options.canLead && !options.canLead()) {
      if (this.leadership.isLeader) await this.leadership.release();
      return;
    }
    const wasLeading = this.leadership.isLeader;
    if (!(await this.leadership.claim())) return;
    if (!wasLeading) await this.catchUp();
    const wanted = await redis.hgetall(this.wantedKey);
    const live: string[] = [];
    const stale: string[] = [];
    for (const [pair, expiry] of Object.entries(wanted)) (Number(expiry) > now ? live : stale).push(pair);
    if (stale.length > 0) await redis.hdel(this.wantedKey, ...stale);
    if (live.length === 0) return;
    const previous = this.positions.latest;
    const publication = this.positions.issue(options.compute(live));
    const values: Record<string, [string, number]> = {};
    for (const [key, value] of publication.values) values[key] = [value.json, value.changedAt];
    const message = JSON.stringify({ seq: publication.seq, values });
    const send = redis.multi().publish(this.channel, message);
    // At an unchanged position only pairs can have gone (a new or changed one moves it): then the sizes differ.
    if (publication.seq !== previous?.seq || publication.values.size !== previous.values.size)
      send.set(this.latestKey, message, "PX", this.retentionMs * 2);
    if (publication.seq !== previous?.seq) {
      send
        .zadd(this.positionsKey, publication.seq, String(publication.seq))
        .zremrangebyscore(this.positionsKey, "-inf", `(${now - this.retentionMs}`)
        .pexpire(this.positionsKey, this.retentionMs * 2);
    }
    await send.exec();
  }

  /** Adopts the latest publication stored by whichever instance led before (when newer than the one heard). */
  private async catchUp(): Promise<void> {
    const stored = await this.redis.get(this.latestKey);
    const publication = stored === null ? undefined : parsePublication(stored);
    if (publication) this.positions.adopt(publication);
  }

  private receive(message: string): void {
    const publication = parsePublication(message);
    // Not ours (or from an instance of an older version): keep the previous publication.
    if (publication) this.positions.adopt(publication);
  }
}

/** A publication as the leader sends it, or undefined for anything else. */
function parsePublication(message: string): Publication | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { seq, values } = parsed as { seq?: unknown; values?: unknown };
  if (!Number.isSafeInteger(seq) || typeof values !== "object" || values === null) return undefined;
  const out = new Map<string, PairValue>();
  for (const [key, value] of Object.entries(values)) {
    if (!Array.isArray(value)) return undefined;
    const [json, changedAt] = value as unknown[];
    if (typeof json !== "string" || !Number.isSafeInteger(changedAt)) return undefined;
    out.set(key, { json, changedAt: changedAt as number });
  }
  return { seq: seq as number, values: out };
}
