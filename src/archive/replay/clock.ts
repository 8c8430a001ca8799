/**
 * The time of a replay: the recorded window [from, to) played `speed` times faster than it happened,
 * from the moment the replay starts. Everything a replay serves (books, trades, forecasts, frames,
 * catalogue changes) is what the archive held at `now()`.
 */
export class ReplayClock {
  private startedAt: number | undefined;

  constructor(
    /** The window, in Unix milliseconds of the recording. */
    readonly from: number,
    readonly to: number,
    readonly speed: number,
    private readonly wallNow: () => number = Date.now,
  ) {
    if (!(to > from)) throw new RangeError("a replay's window must end after it starts");
    if (!(speed > 0) || !Number.isFinite(speed))
      throw new RangeError("a replay's speed must be a positive number");
  }

  /** Starts the replay's time at `from` (once; later calls change nothing). */
  start(): void {
    this.startedAt ??= this.wallNow();
  }

  /** The recording's time being replayed now (ms): `from` until started, `to` at most. */
  now(): number {
    if (this.startedAt === undefined) return this.from;
    return Math.min(this.to, this.from + (this.wallNow() - this.startedAt) * this.speed);
  }

  /** Wall-clock milliseconds until the recording's moment `at` is replayed (0 when it has been). */
  delayUntil(at: number): number {
    if (this.startedAt === undefined) return Number.POSITIVE_INFINITY;
    return Math.max(0, (at - this.from) / this.speed - (this.wallNow() - this.startedAt));
  }

  get ended(): boolean {
    return this.now() >= this.to;
  }
}
