/**
 * Token-bucket rate limits (contract §4). A bucket holds up to a minute's allowance and refills
 * continuously, so a caller may burst up to its limit and then proceeds at the sustained rate.
 * Buckets live in memory, or in Redis when instances must share them.
 */
import type { Redis } from "ioredis";
import { connectRedis } from "../storage/redis.js";

export interface BucketState {
  /** Whether this request may proceed (a token was taken). */
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until one token is available again (0 when allowed): the 429's Retry-After. */
  retryAfterSeconds: number;
  /**
   * The `t` (reset) of the `RateLimit` header: with tokens left, the seconds until the bucket is full
   * again; with none (`remaining` 0), the seconds until the next one, the moment Retry-After names,
   * as the ratelimit-headers draft asks of a response carrying both.
   */
  resetSeconds: number;
}

/**
 * Where buckets are kept. `take` removes one token from the bucket if it has one; a store in this
 * process answers at once, a remote one with a promise.
 */
export interface RateStore {
  take(bucket: string, limitPerMinute: number): BucketState | Promise<BucketState>;
  close(): Promise<void>;
}

const MINUTE_MS = 60_000;

/** Derives what a caller is told from a bucket's token count after the take. */
function describe(tokens: number, allowed: boolean, limitPerMinute: number): BucketState {
  const perMs = limitPerMinute / MINUTE_MS;
  const remaining = Math.max(0, Math.floor(tokens));
  const untilNextToken = Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
  return {
    allowed,
    remaining,
    retryAfterSeconds: allowed ? 0 : untilNextToken,
    resetSeconds: remaining === 0 ? untilNextToken : Math.ceil((limitPerMinute - tokens) / perMs / 1000),
  };
}

/** Buckets in this process: right for a single instance, and the default. */
export class MemoryRateStore implements RateStore {
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    // A bucket untouched for a minute is full again, which is what a missing bucket means too.
    this.sweeper = setInterval(() => {
      const cutoff = this.now() - MINUTE_MS;
      for (const [key, bucket] of this.buckets) if (bucket.updated < cutoff) this.buckets.delete(key);
    }, MINUTE_MS);
    this.sweeper.unref();
  }

  take(bucket: string, limitPerMinute: number): BucketState {
    const now = this.now();
    const state = this.buckets.get(bucket) ?? { tokens: limitPerMinute, updated: now };
    state.tokens = Math.min(
      limitPerMinute,
      state.tokens + ((now - state.updated) * limitPerMinute) / MINUTE_MS,
    );
    state.updated = now;
    const allowed = state.tokens >= 1;
    if (allowed) state.tokens -= 1;
    this.buckets.set(bucket, state);
    return describe(state.tokens, allowed, limitPerMinute);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

/**
 * The same bucket as one atomic Lua script, timed by the Redis server's clock so that instances with
 * skewed clocks still agree. Returns {1 or 0, tokens left as a string} (Lua numbers lose fractions otherwise).
 */
const TAKE_SCRIPT = `
local capacity = tonumber(ARGV[1])
local per_ms = capacity / 60000
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1]) or capacity
local updated = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - updated) * per_ms)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return {allowed, tostring(tokens)}
`;

declare module "ioredis" {
  interface RedisCommander {
    /** TAKE_SCRIPT, registered with defineCommand (sent once, then run by its hash). */
    oddsgateTakeToken(key: string, capacity: number): Promise<[number, string]>;
  }
}

/** Buckets in Redis, shared by every instance pointed at it. */
export class RedisRateStore implements RateStore {
  private constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Connects (failing with a message naming REDIS_URL when it cannot) and loads the script. */
  static async connect(url: string, prefix: string): Promise<RedisRateStore> {
    const redis = await connectRedis(url, { enableOfflineQueue: false });
    redis.defineCommand("oddsgateTakeToken", { numberOfKeys: 1, lua: TAKE_SCRIPT });
    return new RedisRateStore(redis, prefix);
  }

  async take(bucket: string, limitPerMinute: number): Promise<BucketState> {
    const [allowed, tokens] = await this.redis.oddsgateTakeToken(
      `${this.prefix}ratelimit:${bucket}`,
      limitPerMinute,
    );
    return describe(Number(tokens), allowed === 1, limitPerMinute);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
