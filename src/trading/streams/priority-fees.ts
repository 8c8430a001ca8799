/**
 * Priority fee estimates (`GET /priority-fees`, `/priority-fees/stream`): levels derived from what
 * recent transactions on the chain paid per compute unit, read from the chain every slot.
 *
 * The rule, where the chain reports what each transaction paid (the sandbox): every compute unit that
 * landed in the recent slots (the last 150, about a minute) is one sample at the price its transaction
 * paid, so a level costs what it moves. Two bounds keep it from being bought cheaply:
 * - each fee payer's units together weigh at most MAX_PAYER_SHARE of the window (a heavier payer's are
 *   scaled down), so one payer cannot move `veryHigh` whatever it spends, and a few only so far;
 * - a window lighter than MIN_WINDOW_UNITS counts the units it lacks as paying nothing, so on a quiet
 *   chain a handful of small transactions at a huge price weigh next to nothing.
 * `medium` is their 50th percentile, `high` the 75th and `veryHigh` the 95th (the lowest price that
 * the units paying it or less reach that share of the window's weight), each raised to its floor
 * (PRIORITY_FEE_FLOORS). Moving `veryHigh` to a price P thus takes more than 5% of the window's weight
 * paying P, from at least two payers: over a quiet window more than 2,400,000 units, so more than
 * 2.4 × P lamports (2.4 SOL at 10^9 µlamports a unit), and more the busier the chain is.
 *
 * Where the chain reports only each slot's lowest price (a Solana node), each slot's lowest is one
 * sample, unweighted, with the same percentiles: a slot's lowest moves only if all of it paid more.
 */
import type { Chain, LandedPrice, SlotPrioritizationFees } from "../../chain/chain.js";
import { every, type Repeating } from "../../every.js";
import { SLOT_MS } from "../spot/trading-book.js";

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

/**
 * The most of a window's weight one fee payer's compute units carry: under the 5% above `veryHigh`,
 * so no one payer moves it; 7 payers are needed to move `high`, 13 `medium`.
 */
export const MAX_PAYER_SHARE = 0.04;

/**
 * The least weight a window has, in compute units: one Solana block's worth (48 million). Units a
 * lighter window lacks count as paying nothing: on a chain that fills less than a block a minute no
 * one needs to outbid anyone, and a level moves only when enough compute pays.
 */
export const MIN_WINDOW_UNITS = 48_000_000;

/**
 * The levels of what recent transactions paid (per fee payer and price, with the compute units that
 * paid it), under the weighted rule of the module comment.
 */
export function weightedPriorityFeeLevels(transactions: readonly LandedPrice[]): PriorityFeeLevels {
  const payers = new Map<string, number>();
  for (const paid of transactions) {
    const units = Number(paid.computeUnits);
    if (units > 0) payers.set(paid.feePayer, (payers.get(paid.feePayer) ?? 0) + units);
  }
  const window = windowWeight([...payers.values()]);
  const cap = window * MAX_PAYER_SHARE;
  let carried = 0;
  for (const units of payers.values()) carried += Math.min(units, cap);
  const samples: { price: bigint; weight: number }[] = [];
  for (const paid of transactions) {
    const units = Number(paid.computeUnits);
    if (units <= 0) continue;
    const payerUnits = payers.get(paid.feePayer) as number;
    const weight = payerUnits > cap ? (units * cap) / payerUnits : units;
    samples.push({ price: clampU64(paid.computeUnitPrice), weight });
  }
  samples.sort((a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0));
  // The weight the window lacks pays nothing: it comes first.
  const unpaid = Math.max(0, window - carried);
  const level = (percentile: number, floor: number): number => {
    // A rounding error must not tip a tie upward: a level moves only on weight clearly past its share.
    const needed = ((percentile * window) / 100) * (1 - 1e-12);
    let reached = unpaid;
    let price = 0n;
    for (const sample of samples) {
      if (reached >= needed) break;
      reached += sample.weight;
      price = sample.price;
    }
    return toLevel(price, floor);
  };
  return levelsBy(level);
}

/**
 * The weight of a window whose fee payers consumed `payerUnits`: the largest W at which their units,
 * each payer's cut to MAX_PAYER_SHARE of W, add up to W (so no payer carries more than its share of
 * it), and at least MIN_WINDOW_UNITS. Fewer than 1 / MAX_PAYER_SHARE payers never fill a window alone.
 */
export function windowWeight(payerUnits: readonly number[]): number {
  const units = [...payerUnits].sort((a, b) => a - b);
  const n = units.length;
  const prefix = [0];
  for (const u of units) prefix.push((prefix.at(-1) as number) + u);
  // With the k lightest payers whole and the rest cut, W = prefix[k] + (n - k) × share × W.
  for (let k = n; k >= 0; k--) {
    const rest = 1 - (n - k) * MAX_PAYER_SHARE;
    if (rest <= 0) break;
    const weight = (prefix[k] as number) / rest;
    const lowest = k > 0 ? (units[k - 1] as number) / MAX_PAYER_SHARE : 0;
    const highest = k < n ? (units[k] as number) / MAX_PAYER_SHARE : Number.POSITIVE_INFINITY;
    if (weight >= lowest * (1 - 1e-12) && weight <= highest * (1 + 1e-12))
      return Math.max(MIN_WINDOW_UNITS, weight);
  }
  return MIN_WINDOW_UNITS;
}

/** The levels of `prices`, each one sample (a node's slot lowests), under the rule of the module comment. */
export function priorityFeeLevels(prices: readonly bigint[]): PriorityFeeLevels {
  if (prices.length === 0) return { ...PRIORITY_FEE_FLOORS };
  // Typed-array sort is numeric and native: a full window (tens of thousands of prices) sorts in a few ms.
  const sorted = BigUint64Array.from(prices, clampU64).sort();
  const level = (percentile: number, floor: number): number => {
    const rank = Math.ceil((percentile * sorted.length) / 100);
    return toLevel(sorted[Math.max(rank, 1) - 1] ?? 0n, floor);
  };
  return levelsBy(level);
}

/** The levels, each `level(percentile, floor)`. */
function levelsBy(level: (percentile: number, floor: number) => number): PriorityFeeLevels {
  return {
    mediumMicroLamports: level(PRIORITY_FEE_PERCENTILES.medium, PRIORITY_FEE_FLOORS.mediumMicroLamports),
    highMicroLamports: level(PRIORITY_FEE_PERCENTILES.high, PRIORITY_FEE_FLOORS.highMicroLamports),
    veryHighMicroLamports: level(
      PRIORITY_FEE_PERCENTILES.veryHigh,
      PRIORITY_FEE_FLOORS.veryHighMicroLamports,
    ),
  };
}

function toLevel(price: bigint, floor: number): number {
  return Math.max(floor, Number(price > MAX_LEVEL ? MAX_LEVEL : price));
}

/** The levels of a window of slots: weighted where it says what each transaction paid. */
export function levelsOfWindow(slots: readonly SlotPrioritizationFees[]): PriorityFeeLevels {
  if (slots.some((slot) => slot.transactions !== undefined))
    return weightedPriorityFeeLevels(slots.flatMap((slot) => slot.transactions ?? []));
  return priorityFeeLevels(slots.map((slot) => slot.prioritizationFee));
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
    const levels = levelsOfWindow(slots);
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
 * Identifies a window of slots without sorting it: slots only gain what transactions paid (the newest
 * one, up to a bound, where a displaced record gives way to a heavier one) or leave the window, and
 * either changes the slot range, the slot count, the record count, the units or the lowest prices.
 */
function windowKeyOf(slots: readonly SlotPrioritizationFees[]): string {
  let records = 0;
  let units = 0n;
  let lowest = 0n;
  for (const slot of slots) {
    lowest += slot.prioritizationFee;
    for (const paid of slot.transactions ?? []) {
      records++;
      units += paid.computeUnits;
    }
  }
  return `${slots[0]?.slot ?? ""}:${slots.at(-1)?.slot ?? ""}:${slots.length}:${records}:${units}:${lowest}`;
}

function sameLevels(a: PriorityFeeLevels, b: PriorityFeeLevels): boolean {
  return (
    a.mediumMicroLamports === b.mediumMicroLamports &&
    a.highMicroLamports === b.highMicroLamports &&
    a.veryHighMicroLamports === b.veryHighMicroLamports
  );
}
