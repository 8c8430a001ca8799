/**
 * What recent transactions on the sandbox chain paid per compute unit, kept as a Solana validator's
 * prioritization-fee cache keeps it for `getRecentPrioritizationFees`: per slot, the lowest price a
 * landed transaction paid and, per account written, the lowest price a transaction writing it paid.
 * Here what each transaction paid is kept too, for the venue's priority fee levels: the compute units
 * it consumed at its price, summed per fee payer and price (so one payer's many transactions at one
 * price take one record), a bounded number of records a slot. When a slot's records are full, a new
 * one displaces the lightest only if it weighs more: a flood of cheap small transactions cannot push
 * out the compute that paid. Only the last 150 slots are kept and every slot's records are bounded, so
 * memory stays bounded however busy the chain is. A restart starts it empty, as a validator's does.
 */
import type { Address } from "@solana/kit";
import type { LandedPrice, SlotPrioritizationFees } from "../chain.js";

/** Slots kept, counted back from the current one: a validator's cache holds 150 blocks. */
export const PRIORITIZATION_FEE_SLOTS = 150n;
/**
 * Records (fee payer and price, with their compute units) kept a slot for the fee levels: plenty for
 * percentiles, and a bound on a busy slot.
 */
export const SAMPLES_PER_SLOT = 256;
/**
 * Accounts whose lowest price a slot tracks. One written by no tracked transaction reports the slot's
 * lowest price, as an account at or below it does on a validator (which prunes those).
 */
export const ACCOUNTS_PER_SLOT = 1_024;

/** A landed transaction's price and the accounts it wrote, as the cache records it. */
export interface PricedTransaction {
  computeUnitPrice: bigint;
  writable: readonly Address[];
  /**
   * The compute units it consumed: its weight in the venue's fee levels. Without them it weighs
   * nothing there (Solana's per-slot answers still count it).
   */
  computeUnits?: bigint;
  /** Who paid its fee; without it, the first of `writable` (a fee payer is always account 0, writable). */
  feePayer?: Address;
}

interface SlotEntry {
  readonly slot: bigint;
  lowest: bigint;
  /** What its transactions paid, by fee payer and price (see SAMPLES_PER_SLOT). */
  readonly samples: Map<string, LandedPrice>;
  /** The key of the lightest sample, when known (found again only when the slot is full). */
  lightest: string | undefined;
  /** The lowest price of a transaction writing each account (see ACCOUNTS_PER_SLOT). */
  readonly accounts: Map<Address, bigint>;
}

/** One slot's answer to `getRecentPrioritizationFees`, as a validator computes it. */
export interface SlotPrioritizationFee {
  slot: bigint;
  prioritizationFee: bigint;
}

/** The recent slots' prices (see the module comment). */
export class RecentPrioritizationFees {
  /** Ascending by slot: transactions commit in the order they executed. */
  private readonly entries: SlotEntry[] = [];

  /** Records a transaction that landed (committed) in `slot`. */
  record(slot: bigint, transaction: PricedTransaction): void {
    const entry = this.entryFor(slot);
    const price = transaction.computeUnitPrice;
    if (price < entry.lowest) entry.lowest = price;
    const feePayer = transaction.feePayer ?? transaction.writable[0];
    const units = transaction.computeUnits ?? 0n;
    if (feePayer !== undefined && units > 0n) addSample(entry, feePayer, price, units);
    for (const account of transaction.writable) {
      const known = entry.accounts.get(account);
      if (known === undefined ? entry.accounts.size < ACCOUNTS_PER_SLOT : price < known)
        entry.accounts.set(account, price);
    }
  }

  /** Every kept slot within the window at `currentSlot`, oldest first, with what its transactions paid. */
  recent(currentSlot: bigint): SlotPrioritizationFees[] {
    this.expire(currentSlot);
    return this.entries.map((entry) => ({
      slot: entry.slot,
      prioritizationFee: entry.lowest,
      transactions: Array.from(entry.samples.values(), (sample) => ({ ...sample })),
    }));
  }

  /**
   * Solana's `getRecentPrioritizationFees(accounts)`: per slot, the lowest price paid, raised to the
   * lowest price paid by the transactions writing each named account where that is higher.
   */
  forAccounts(currentSlot: bigint, accounts: readonly Address[]): SlotPrioritizationFee[] {
    this.expire(currentSlot);
    return this.entries.map((entry) => {
      let fee = entry.lowest;
      for (const account of accounts) {
        const paid = entry.accounts.get(account);
        if (paid !== undefined && paid > fee) fee = paid;
      }
      return { slot: entry.slot, prioritizationFee: fee };
    });
  }

  private entryFor(slot: bigint): SlotEntry {
    const last = this.entries.at(-1);
    if (last?.slot === slot) return last;
    if (last === undefined || slot > last.slot) {
      if (last) prune(last);
      this.expire(slot);
      const entry = newEntry(slot);
      this.entries.push(entry);
      return entry;
    }
    // An earlier slot than the newest: only if commits ever finished out of order.
    let index = this.entries.length - 1;
    while (index > 0 && (this.entries[index - 1] as SlotEntry).slot >= slot) index--;
    const found = this.entries[index] as SlotEntry;
    if (found.slot === slot) return found;
    const entry = newEntry(slot);
    this.entries.splice(index, 0, entry);
    return entry;
  }

  /** Drops the slots that have left the window at `currentSlot`. */
  private expire(currentSlot: bigint): void {
    const oldest = currentSlot - PRIORITIZATION_FEE_SLOTS;
    let stale = 0;
    while (stale < this.entries.length && (this.entries[stale] as SlotEntry).slot <= oldest) stale++;
    if (stale > 0) this.entries.splice(0, stale);
  }
}

// A slot is complete once a later one begins: an account at or below its lowest price cannot raise an
// answer, so only the others are kept (as a validator prunes its cache).
function prune(entry: SlotEntry): void {
  for (const [account, paid] of entry.accounts) if (paid <= entry.lowest) entry.accounts.delete(account);
}

function newEntry(slot: bigint): SlotEntry {
  return { slot, lowest: 2n ** 64n, samples: new Map(), lightest: undefined, accounts: new Map() };
}

/** Adds `units` paid at `price` by `feePayer` to the slot's samples, within SAMPLES_PER_SLOT. */
function addSample(entry: SlotEntry, feePayer: Address, price: bigint, units: bigint): void {
  const key = `${feePayer}:${price}`;
  const known = entry.samples.get(key);
  if (known) {
    known.computeUnits += units;
    if (entry.lightest === key) entry.lightest = undefined;
    return;
  }
  if (entry.samples.size >= SAMPLES_PER_SLOT) {
    const lightest = lightestKey(entry);
    // Full: the new one displaces the lightest only if it weighs more.
    if (units <= (entry.samples.get(lightest) as LandedPrice).computeUnits) return;
    entry.samples.delete(lightest);
    entry.lightest = undefined;
  }
  entry.samples.set(key, { feePayer, computeUnitPrice: price, computeUnits: units });
  const lightest = entry.lightest === undefined ? undefined : entry.samples.get(entry.lightest);
  if (lightest && units < lightest.computeUnits) entry.lightest = key;
}

function lightestKey(entry: SlotEntry): string {
  if (entry.lightest !== undefined) return entry.lightest;
  let found = "";
  let least: bigint | undefined;
  for (const [key, sample] of entry.samples) {
    if (least === undefined || sample.computeUnits < least) {
      least = sample.computeUnits;
      found = key;
    }
  }
  entry.lightest = found;
  return found;
}
