/**
 * The market feed of a replay: instead of polling the upstream, it plays the `/api/v1/ws` data frames
 * the archive recorded, each when the replay's clock reaches the moment it was published, with the
 * sequence number and message it had live (the time it carries is the replay's: when it is sent).
 * It never leads, so the hub never polls; everything else a hub asks of a feed (resuming from a
 * sequence number, the current values) it answers from what it has played.
 */
import type { ArchiveReader } from "../archive/archive-reader.js";
import type { ReplayClock } from "../archive/replay/clock.js";
import type { ArchiveRow } from "../archive/tables.js";
import {
  DEFAULT_MAX_ENTRIES,
  emptyFollowing,
  type FeedEntry,
  type FeedListener,
  type Following,
  MARKET_CHANNELS,
  type MarketChannel,
  type MarketFeed,
  type Replay,
} from "./market-feed.js";

/** Recorded time read ahead at once: one query per slice of the window. */
const SLICE_MS = 60_000;
/** How often the replay tells the hub its upstream is healthy (its silence watch would report it stale). */
const HEALTHY_EVERY_MS = 1_000;

export class ReplayFeed implements MarketFeed {
  readonly isLeader = false;
  private listener: FeedListener | undefined;
  private readonly played = new Map<MarketChannel, FeedEntry[]>(MARKET_CHANNELS.map((c) => [c, []]));
  private pending: ArchiveRow<"frames">[] = [];
  /** The recorded time up to which frames have been read from the archive. */
  private readUpTo: number;
  private timer: NodeJS.Timeout | undefined;
  private lastHealthy = 0;
  private closed = false;
  private done: (() => void) | undefined;
  /** Resolves once every frame of the window has been played. */
  readonly finished: Promise<void>;

  constructor(
    private readonly reader: ArchiveReader,
    private readonly clock: ReplayClock,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.readUpTo = clock.from;
    this.finished = new Promise((resolve) => {
      this.done = resolve;
    });
  }

  async start(listener: FeedListener): Promise<void> {
    this.listener = listener;
    this.schedule(0);
  }

  follow(_following: Following): void {}

  async followed(): Promise<Following> {
    return emptyFollowing();
  }

  async publish(): Promise<void> {}

  /** A replay publishes nothing of its own. */
  onPublished(): void {}

  async forget(): Promise<void> {}

  async healthy(): Promise<void> {}

  async tradesCursor(): Promise<number | undefined> {
    return undefined;
  }

  async setTradesCursor(): Promise<void> {}

  async startTrades(): Promise<void> {}

  async replay(channel: MarketChannel, since: number): Promise<Replay> {
    const log = this.played.get(channel) as FeedEntry[];
    const head = this.head(channel);
    if (since > head) return undefined;
    const first = log[0];
    if (!first || first.seq > since + 1) return since === head ? [] : undefined;
    return log.filter((entry) => entry.seq > since);
  }

  head(channel: MarketChannel): number {
    const log = this.played.get(channel) as FeedEntry[];
    return log[log.length - 1]?.seq ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.listener = undefined;
    this.done?.();
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.play().catch((error: unknown) => {
        this.onError(error);
        this.schedule(HEALTHY_EVERY_MS);
      });
    }, delayMs);
  }

  /** Plays every frame whose moment has come, then sleeps until the next one (or a health beat). */
  private async play(): Promise<void> {
    const now = this.clock.now();
    if (this.pending.length === 0 && this.readUpTo < this.clock.to) await this.readAhead(now);
    if (this.closed) return;
    const due: ArchiveRow<"frames">[] = [];
    while (this.pending.length > 0 && (this.pending[0] as ArchiveRow<"frames">).ts <= now) {
      due.push(this.pending.shift() as ArchiveRow<"frames">);
    }
    this.deliver(due);
    const wall = Date.now();
    if (wall - this.lastHealthy >= HEALTHY_EVERY_MS) {
      this.lastHealthy = wall;
      for (const channel of MARKET_CHANNELS) this.listener?.healthy(channel, wall);
    }
    const next = this.pending[0];
    if (!next && this.readUpTo >= this.clock.to) {
      this.done?.();
      this.schedule(HEALTHY_EVERY_MS);
      return;
    }
    const until = next ? this.clock.delayUntil(next.ts) : this.clock.delayUntil(this.readUpTo);
    this.schedule(Math.min(until, HEALTHY_EVERY_MS));
  }

  /** Reads the next slice of recorded frames (at least up to `now`), in the order they were published. */
  private async readAhead(now: number): Promise<void> {
    const to = Math.min(this.clock.to, Math.max(now, this.readUpTo) + SLICE_MS);
    const rows = await this.reader.rows("frames", { from: this.readUpTo, to, orderBy: "ts" });
    this.readUpTo = to;
    this.pending = rows;
  }

  /**
   * Hands due frames to the hub in the order they were published (by time; a channel's by seq), a
   * run of one channel's frames at a time, and keeps them for resumes.
   */
  private deliver(rows: readonly ArchiveRow<"frames">[]): void {
    const ts = Date.now();
    let run: FeedEntry[] = [];
    let runChannel: MarketChannel | undefined;
    const handOver = () => {
      if (!runChannel || run.length === 0) return;
      const log = this.played.get(runChannel) as FeedEntry[];
      log.push(...run);
      if (log.length > DEFAULT_MAX_ENTRIES) log.splice(0, log.length - DEFAULT_MAX_ENTRIES);
      this.listener?.entries(runChannel, run);
      run = [];
    };
    for (const row of rows) {
      const channel = row.channel as MarketChannel;
      if (!this.played.has(channel)) continue;
      if (channel !== runChannel) {
        handOver();
        runChannel = channel;
      }
      run.push({ seq: row.seq, ts, ticker: row.ticker, message: row.message });
    }
    handOver();
  }
}
