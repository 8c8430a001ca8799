import { MARKET_CHANNELS, type MarketChannel } from "../market-feed.js";
import { staleFrame } from "./frames.js";
import type { Subscriber } from "./subscriber.js";

/** Whether a channel's upstream is silent now, since when, and when subscribers were last told. */
interface Staleness {
  /** When this instance's clients began following the channel (silence before that is nobody's). */
  followedSince: number | undefined;
  /** The freshness the silence started from, while stale. */
  staleFrom: number | undefined;
  lastTold: number;
}

/**
 * Tells the subscribers of a channel the upstream has given nothing for `staleMs` (and again every
 * `staleMs` while that lasts, with the age), and once when it answers again.
 */
export class SilenceWatch {
  /** When the leader last read each channel from the upstream successfully (ms). */
  private readonly lastHealthy = new Map<MarketChannel, number>();
  private readonly staleness = new Map<MarketChannel, Staleness>(
    MARKET_CHANNELS.map((c) => [c, { followedSince: undefined, staleFrom: undefined, lastTold: 0 }]),
  );

  constructor(private readonly staleMs: number) {}

  /** The leader read `channel` from the upstream at `at` (ms). */
  healthy(channel: MarketChannel, at: number): void {
    if (at > (this.lastHealthy.get(channel) ?? 0)) this.lastHealthy.set(channel, at);
  }

  /** The `stale` frame a new subscriber of `channel` gets while it is silent. */
  staleFrameFor(channel: MarketChannel): object | undefined {
    const staleFrom = this.staleness.get(channel)?.staleFrom;
    return staleFrom === undefined ? undefined : staleFrame(channel, Date.now() - staleFrom);
  }

  check(subscribers: Iterable<Subscriber>): void {
    const now = Date.now();
    for (const channel of MARKET_CHANNELS) {
      const watch = this.staleness.get(channel) as Staleness;
      const followers = [...subscribers].filter((s) => s.follows(channel));
      if (followers.length === 0) {
        watch.followedSince = undefined;
        watch.staleFrom = undefined;
        continue;
      }
      watch.followedSince ??= now;
      const fresh = Math.max(this.lastHealthy.get(channel) ?? 0, watch.followedSince);
      const age = now - fresh;
      if (age >= this.staleMs) {
        if (watch.staleFrom !== undefined && now - watch.lastTold < this.staleMs) continue;
        watch.staleFrom = fresh;
        watch.lastTold = now;
        for (const subscriber of followers) subscriber.sendControl(staleFrame(channel, age));
      } else if (watch.staleFrom !== undefined) {
        const frame = { channel, type: "recovered", silent_ms: fresh - watch.staleFrom, ts: now };
        watch.staleFrom = undefined;
        for (const subscriber of followers) subscriber.sendControl(frame);
      }
    }
  }
}
