/**
 * The simulator's clock: the real time (or a test's) plus how far testers have moved it on with
 * `oddsgate sim clock`. It only moves forward: a market's history, once served, stays what it was.
 */

/** The longest single move: ten years, far past any catalogue's last expiration. */
export const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;

export class SimulatorClock {
  private offsetSeconds = 0;

  constructor(private readonly base: () => number) {}

  /** The exchange's time, Unix seconds. */
  readonly now = (): number => this.base() + this.offsetSeconds;

  /** How far testers have moved the clock on, in seconds. */
  get offset(): number {
    return this.offsetSeconds;
  }

  /** Moves the clock on by `seconds` (a whole number from 1 to MAX_ADVANCE_SECONDS). */
  advance(seconds: number): void {
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
      throw new RangeError(`the clock moves on by 1 to ${MAX_ADVANCE_SECONDS} whole seconds, not ${seconds}`);
    }
    this.offsetSeconds += seconds;
  }
}
