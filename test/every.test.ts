/** every(): the next run starts an interval after the previous ends; failures are reported, not fatal. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { every } from "../src/every.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("every", () => {
  it("never overlaps runs: the interval counts from the end of the previous run", async () => {
    vi.useFakeTimers();
    const starts: number[] = [];
    let finish: (() => void) | undefined;
    const schedule = every(
      100,
      () => {
        starts.push(Date.now());
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
      { onError: () => {} },
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toHaveLength(1);
    // The run takes 250 ms: nothing starts meanwhile.
    await vi.advanceTimersByTimeAsync(250);
    expect(starts).toHaveLength(1);
    finish?.();
    await vi.advanceTimersByTimeAsync(99);
    expect(starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toHaveLength(2);
    expect((starts[1] as number) - (starts[0] as number)).toBe(350);
    schedule.stop();
  });

  it("keeps a cadence with fromStart: the interval counts from each start, still never overlapping", async () => {
    vi.useFakeTimers();
    const starts: number[] = [];
    const durations = [30, 250, 10];
    let finish: (() => void) | undefined;
    const schedule = every(
      100,
      () => {
        starts.push(Date.now());
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
      { onError: () => {}, fromStart: true },
    );
    await vi.advanceTimersByTimeAsync(100);
    for (const duration of durations) {
      await vi.advanceTimersByTimeAsync(duration);
      finish?.();
      // A run longer than the interval is followed at once; a short one a full interval after it began.
      await vi.advanceTimersByTimeAsync(Math.max(0, 100 - duration));
    }
    expect(starts.map((at) => at - (starts[0] as number))).toEqual([0, 100, 350, 450]);
    schedule.stop();
  });

  it("reports a failing run and keeps the schedule; runs at once when asked", async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let runs = 0;
    const schedule = every(
      50,
      () => {
        runs += 1;
        throw new Error(`run ${runs}`);
      },
      { immediately: true, onError: (error) => errors.push(error) },
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(3);
    expect(errors.map((error) => (error as Error).message)).toEqual(["run 1", "run 2", "run 3"]);
    schedule.stop();
  });

  it("stops scheduling on stop, and nextRun resolves after the run that follows the call", async () => {
    vi.useFakeTimers();
    let runs = 0;
    const schedule = every(
      10,
      () => {
        runs += 1;
      },
      { onError: () => {} },
    );
    const next = schedule.nextRun();
    let resolved = false;
    void next.then(() => {
      resolved = true;
    });
    await vi.advanceTimersByTimeAsync(9);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(resolved).toBe(true);
    expect(runs).toBe(1);
    schedule.stop();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
    // After stop, waiting for a run that will never come returns at once.
    await expect(schedule.nextRun()).resolves.toBeUndefined();
  });

  it("reports a failed run, but not one that fails after stop (its resources were being closed)", async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    const runs: ((error: Error) => void)[] = [];
    const schedule = every(
      1_000,
      () =>
        new Promise<void>((_, reject) => {
          runs.push(reject);
        }),
      { immediately: true, onError: (error) => errors.push(error) },
    );
    await vi.advanceTimersByTimeAsync(0);
    runs[0]?.(new Error("upstream unreachable"));
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toHaveLength(2);
    // The run in progress when the schedule stops (a sync while the server shuts down) fails quietly.
    schedule.stop();
    runs[1]?.(new Error("the upstream client was closed"));
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
  });
});
