/**
 * Priority fee estimates (`GET /priority-fees`, `/priority-fees/stream`): levels derived from what
 * recent transactions on the chain paid per compute unit, read from the chain every slot.
 *
 * The rule: every price the chain reports for the recent slots (the last 150, about a minute) is one
 * sample: each transaction's price on the sandbox, each slot's lowest on a Solana node, which reports
 * no more. `medium` is their 50th percentile, `high` the 75th and `veryHigh` the 95th (nearest rank:
 * the smallest sample at or above that share of them), each raised to its floor (PRIORITY_FEE_FLOORS).
 */
import type { Chain, SlotPrioritizationFees } from "../chain/chain.js";
import { every, type Repeating } from "../every.js";
import { SLOT_MS } from "./book.js";

/** Micro-lamports per compute unit for each priority level (the reference's `PriorityFeesResponse`). */
export interface PriorityFeeLevels {
  mediumMicroLamports: number;
  highMicroLamports: number;
  veryHighMicroLamports: number;
}

/** The percentile of the recent prices each level is. */
export const PRIORITY_FEE_PERCENTILES = { medium: 50, high: 75, veryHigh: 95 } as const;

/**
 * The least each level reports, in micro-lamports per compute unit. An idle chain's transactions pay
 * nothing, and a level of 0 would buy no priority at all the moment the chain gets busy: any positive
 * price goes ahead of every transaction that pays none. These are small: at 200,000 compute units they
 * add 200, 1,000 and 2,000 lamports to the 5,000-lamport signature fee. Distinct floors keep `high`
 * above `medium` and `veryHigh` above `high` even when every sample is the same.
 */
export const PRIORITY_FEE_FLOORS: Readonly<PriorityFeeLevels> = Object.freeze({
  mediumMicroLamports: 1_000,
  highMicroLamports: 5_000,
  veryHighMicroLamports: 10_000,
});

// A level is a JSON integer: a hostile price near u64's maximum must not come out as an inexact float.
const MAX_LEVEL = BigInt(Number.MAX_SAFE_INTEGER);

export interface PriorityFeeOptions {
  /** How often the levels are recomputed (default one slot, 400 ms). */
  refreshMs?: number;
  /** Hears a failed read of the chain; the levels then stay as last computed. */
  onError?: (error: unknown) => void;
}

/** The levels of `prices` under the rule of the module comment. */
export function priorityFeeLevels(prices: readonly bigint[]): PriorityFeeLevels {
  if (prices.length === 0) return { ...PRIORITY_FEE_FLOORS };
  // Typed-array sort is numeric and native: a full window (tens of thousands of prices) sorts in a few ms.
  const sorted = BigUint64Array.from(prices, clampU64).sort();
  const level = (percentile: number, floor: number): number => {
    const rank = Math.ceil((percentile * sorted.length) / 100);
    const price = sorted[Math.max(rank, 1) - 1] ?? 0n;
    const capped = price > MAX_LEVEL ? MAX_LEVEL : price;
    return Math.max(floor, Number(capped));
  };
  return {
    mediumMicroLamports: level(PRIORITY_FEE_PERCENTILES.medium, PRIORITY_FEE_FLOORS.mediumMicroLamports),
    highMicroLamports: level(PRIORITY_FEE_PERCENTILES.high, PRIORITY_FEE_FLOORS.highMicroLamports),
    veryHighMicroLamports: level(
      PRIORITY_FEE_PERCENTILES.veryHigh,
      PRIORITY_FEE_FLOORS.veryHighMicroLamports,
    ),
  };
}

function clampU64(price: bigint): bigint {
  return price < 0n ? 0n : price >= 2n ** 64n ? 2n ** 64n - 1n : price;
}

/** Keeps the current levels, recomputed from the chain every slot. */
export class PriorityFeeEstimator {
  private current: PriorityFeeLevels = { ...PRIORITY_FEE_FLOORS };
  private read = false;
  /** What the last computed window looked like, to skip the sort when nothing landed or expired. */
  private windowKey = "";
  private readonly listeners = new Set<(levels: PriorityFeeLevels) => void>();
  private schedule: Repeating | undefined;
  /** Refreshes run one after another, so an older read never overwrites a newer one. */
  private refreshing: Promise<unknown> = Promise.resolve();
  private readonly refreshMs: number;

  constructor(
    readonly deps: { chain: Pick<Chain, "getRecentPrioritizationFees"> },
    private readonly options: PriorityFeeOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? SLOT_MS;
  }

  /** The levels as last computed (the floors until the chain has been read). */
  levels(): PriorityFeeLevels {
    return { ...this.current };
  }

  /** Whether the levels have been read from the chain at least once. */
  get ready(): boolean {
    return this.read;
  }

  /** Calls `listener` with the new levels whenever they change; returns a function that stops it. */
  onChange(listener: (levels: PriorityFeeLevels) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Reads the chain now and every `refreshMs` after. */
  start(): void {
    if (this.schedule) return;
    this.schedule = every(this.refreshMs, () => this.refresh(), {
      onError: (error) => this.options.onError?.(error),
      immediately: true,
    });
  }

  /** Stops the refreshes; one in progress finishes. */
  stop(): void {
    this.schedule?.stop();
    this.schedule = undefined;
  }

  /** Resolves once the next scheduled refresh has ended (at once when stopped). */
  async nextRefresh(): Promise<void> {
    await this.schedule?.nextRun();
  }

  /** Reads the chain and recomputes the levels now; resolves with them (tests await it rather than sleep). */
  refresh(): Promise<PriorityFeeLevels> {
    const run = this.refreshing.then(() => this.refreshNow());
    this.refreshing = run.catch(() => {});
    return run;
  }

  private async refreshNow(): Promise<PriorityFeeLevels> {
    const slots = await this.deps.chain.getRecentPrioritizationFees();
    const key = windowKeyOf(slots);
    const first = !this.read;
    this.read = true;
    if (key === this.windowKey && !first) return this.levels();
    this.windowKey = key;
    const levels = priorityFeeLevels(slots.flatMap((slot) => slot.computeUnitPrices));
    if (first || !sameLevels(levels, this.current)) {
      this.current = levels;
      for (const listener of this.listeners) {
        // One failing listener must not keep the others (or the next refresh) from the levels.
        try {
          listener({ ...levels });
        } catch (error) {
          this.options.onError?.(error);
        }
      }
    }
    return this.levels();
  }
}

/**
 * Identifies a window of slots without reading its prices: slots only gain prices (the newest one, up
 * to a bound) or leave the window, and either changes the slot range, the slot count or the price count.
 */
function windowKeyOf(slots: readonly SlotPrioritizationFees[]): string {
  let prices = 0;
  for (const slot of slots) prices += slot.computeUnitPrices.length;
  return `${slots[0]?.slot ?? ""}:${slots.at(-1)?.slot ?? ""}:${slots.length}:${prices}`;
}

function sameLevels(a: PriorityFeeLevels, b: PriorityFeeLevels): boolean {
  return (
    a.mediumMicroLamports === b.mediumMicroLamports &&
    a.highMicroLamports === b.highMicroLamports &&
    a.veryHighMicroLamports === b.veryHighMicroLamports
  );
}
