/**
 * The one helper for periodic work: a task runs, and the next run starts `intervalMs` after it ends
 * (or after it started, for a cadence), so a slow run (a slow database, a hanging upstream) never
 * overlaps the next one or piles runs up.
 */

export interface EveryOptions {
  /**
   * Called with whatever a run throws or rejects with; the schedule goes on. Not called for a run that
   * fails after stop(): what it used was being closed (a shutdown), which is no failure to report.
   */
  onError(error: unknown): void;
  /** Run once at once instead of after the first interval. */
  immediately?: boolean;
  /**
   * Count the interval from each run's start (a cadence: a poll every second however long a poll
   * takes); a run that takes longer than the interval is followed at once, still never overlapped.
   */
  fromStart?: boolean;
}

/** A running schedule. */
export interface Repeating {
  /** Stops scheduling; a run in progress finishes, none starts after it. */
  stop(): void;
  /** Resolves once the run after this call has ended (for tests and orderly waits, not for timing). */
  nextRun(): Promise<void>;
}

/** Runs `task` every `intervalMs`, counted from the end of the previous run (or its start: `fromStart`). */
export function every(
  intervalMs: number,
  task: () => unknown | Promise<unknown>,
  options: EveryOptions,
): Repeating {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let waiting: (() => void)[] = [];
  const schedule = (delayMs: number) => {
    // A schedule never holds up the process's exit.
    timer = setTimeout(run, delayMs).unref();
  };
  const run = async () => {
    const woken = waiting;
    waiting = [];
    const started = Date.now();
    try {
      await task();
    } catch (error) {
      if (!stopped) options.onError(error);
    }
    for (const wake of woken) wake();
    if (stopped) return;
    schedule(options.fromStart ? Math.max(0, intervalMs - (Date.now() - started)) : intervalMs);
  };
  schedule(options.immediately ? 0 : intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const wake of waiting) wake();
      waiting = [];
    },
    nextRun() {
      if (stopped) return Promise.resolve();
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}
