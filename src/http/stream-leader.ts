/**
 * Leadership of one shared duty across instances (with `REDIS_URL`): a Redis key holds the id of the
 * instance doing it, with a short expiry that the holder renews. An instance that stops renewing (it
 * stopped, crashed or lost Redis) loses the duty when the key expires; one that stops in order gives
 * it up at once. Every stream that polls or prices once for the whole deployment (`/quote-stream`,
 * `/book-stream`, `/api/v1/ws`) elects its leader with this, under a key of its own.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

/** Take the key when free, renew it when ours; answers 1 when this instance holds it afterwards. */
const CLAIM = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/** Delete the key only when it is still ours (it may have expired and been taken meanwhile). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** One instance's claim on a shared duty. */
export class StreamLeadership {
  /** This instance's id, as the key holds it while leading. */
  readonly id = randomUUID();
  private leading = false;

  constructor(
    private readonly redis: Redis,
    /** The leader key, e.g. `{REDIS_PREFIX}quote-stream:leader`. */
    private readonly key: string,
    /** How long a lead lasts without renewal: the longest a crashed leader holds the duty. */
    private readonly ttlMs: number,
  ) {}

  /** Takes or renews the lead if it is free or ours; returns whether this instance leads now. */
  async claim(): Promise<boolean> {
    try {
      this.leading = (await this.redis.eval(CLAIM, 1, this.key, this.id, String(this.ttlMs))) === 1;
    } catch (error) {
      // Without Redis this instance cannot know that it still leads: it stops acting as leader.
      this.leading = false;
      throw error;
    }
    return this.leading;
  }

  /** Whether the last claim succeeded. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Gives up the lead (when held), so that another instance takes it at its next claim. */
  async release(): Promise<void> {
    const was = this.leading;
    this.leading = false;
    if (was) await this.redis.eval(RELEASE, 1, this.key, this.id).catch(() => {});
  }
}
