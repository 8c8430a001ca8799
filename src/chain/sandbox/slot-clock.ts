/**
 * Sandbox time: 400 ms slots counted from the chain's genesis instant, one block per slot, and one
 * blockhash per slot derived from the genesis hash. Deriving (not storing) blockhashes lets a restart
 * recover the whole validity window from two stored values. The chain's instant is the wall clock
 * shifted by a stored `ClockShift` (development time travel, see cheatcodes.ts): forward only, so
 * nothing derived from it ever goes back.
 */
import { createHash } from "node:crypto";
import type { Blockhash } from "@solana/kit";
import { encodeBlockhash } from "../base58.js";

export const SLOT_MS = 400;
/** Solana's MAX_PROCESSING_AGE: a blockhash stays valid for this many blocks after its own. */
export const BLOCKHASH_VALIDITY_BLOCKS = 150;
export const SLOTS_PER_EPOCH = 432_000;

/** Wall time in milliseconds; tests inject a controllable one. */
export interface WallClock {
  now(): number;
}

export const systemClock: WallClock = { now: () => Date.now() };

/** A settable clock for tests. */
export class ManualClock implements WallClock {
  constructor(private current = Date.now()) {}
  now(): number {
    return this.current;
  }
  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.current += ms;
  }
  /** Moves time forward by whole slots. */
  advanceSlots(slots: number): void {
    this.current += slots * SLOT_MS;
  }
}

/**
 * How chain time departs from the wall clock: `offsetMs` ahead of it, or frozen at `pausedAtMs`
 * (chain time) while paused. Stored with the chain's state so a restart keeps it.
 */
export interface ClockShift {
  offsetMs: number;
  pausedAtMs: number | null;
}

export const NO_SHIFT: ClockShift = { offsetMs: 0, pausedAtMs: null };

/** The latest chain instant time travel may reach: the last one a JavaScript Date represents. */
export const MAX_CHAIN_MS = 8_640_000_000_000_000;

export class SlotClock {
  // Recent blockhashes and their slots, kept for a little more than the validity window.
  private readonly slotByBlockhash = new Map<string, bigint>();
  private readonly blockhashBySlot = new Map<bigint, Blockhash>();
  private newestIndexed = -1n;

  constructor(
    readonly genesisMs: number,
    private readonly genesisHash: string,
    private readonly wall: WallClock,
    private shift: ClockShift = NO_SHIFT,
  ) {}

  /** The chain's instant in milliseconds: the wall clock, shifted (see ClockShift). */
  now(): number {
    return this.shift.pausedAtMs ?? this.wall.now() + this.shift.offsetMs;
  }

  /** The current slot; it equals the block height since the sandbox never skips a slot. */
  slot(): bigint {
    return this.slotAt(this.now());
  }

  /** The slot a chain instant falls in. */
  slotAt(instantMs: number): bigint {
    const elapsed = instantMs - this.genesisMs;
    return elapsed <= 0 ? 0n : BigInt(Math.floor(elapsed / SLOT_MS));
  }

  /** The chain instant `slot` starts at. */
  startOf(slot: bigint): number {
    return this.genesisMs + Number(slot) * SLOT_MS;
  }

  get paused(): boolean {
    return this.shift.pausedAtMs !== null;
  }

  /** The shift now in force (to store it). */
  currentShift(): ClockShift {
    return { ...this.shift };
  }

  /**
   * The shift that puts chain time at `instantMs` (keeping a pause paused); an instant already passed
   * leaves it where it is, since chain time never goes back.
   */
  shiftTo(instantMs: number): ClockShift {
    const target = Math.max(instantMs, this.now());
    return this.paused
      ? { offsetMs: this.shift.offsetMs, pausedAtMs: target }
      : { offsetMs: target - this.wall.now(), pausedAtMs: null };
  }

  /** The shift that freezes chain time where it is now. */
  pausedShift(): ClockShift {
    return { offsetMs: this.shift.offsetMs, pausedAtMs: this.now() };
  }

  /** The shift that lets chain time run on from where it is now (from a pause, not from the wall). */
  runningShift(): ClockShift {
    return { offsetMs: this.now() - this.wall.now(), pausedAtMs: null };
  }

  /** Puts `shift` in force; callers store it first (see SandboxChain), so time never goes back. */
  apply(shift: ClockShift): void {
    this.shift = { ...shift };
  }

  /** Unix seconds at the start of `slot`. */
  blockTime(slot: bigint): number {
    return Math.floor(this.startOf(slot) / 1000);
  }

  /** The blockhash of `slot`. */
  blockhashOf(slot: bigint): Blockhash {
    const cached = this.blockhashBySlot.get(slot);
    if (cached) return cached;
    const digest = createHash("sha256").update(`oddsgate/blockhash\0${this.genesisHash}\0${slot}`).digest();
    return encodeBlockhash(digest);
  }

  /** The slot whose blockhash this is, if it is still within the validity window at `currentSlot`. */
  validSlotOf(blockhash: string, currentSlot: bigint): bigint | undefined {
    this.indexUpTo(currentSlot);
    const slot = this.slotByBlockhash.get(blockhash);
    if (slot === undefined || slot > currentSlot) return undefined;
    return currentSlot - slot <= BigInt(BLOCKHASH_VALIDITY_BLOCKS) ? slot : undefined;
  }

  private indexUpTo(currentSlot: bigint): void {
    if (currentSlot <= this.newestIndexed) return;
    const window = BigInt(BLOCKHASH_VALIDITY_BLOCKS);
    const from = currentSlot - this.newestIndexed > window ? currentSlot - window : this.newestIndexed + 1n;
    for (let slot = from < 0n ? 0n : from; slot <= currentSlot; slot++) {
      const hash = this.blockhashOf(slot);
      this.slotByBlockhash.set(hash, slot);
      this.blockhashBySlot.set(slot, hash);
    }
    this.newestIndexed = currentSlot;
    const oldest = currentSlot - 2n * window;
    for (const [slot, hash] of this.blockhashBySlot) {
      if (slot >= oldest) break;
      this.blockhashBySlot.delete(slot);
      this.slotByBlockhash.delete(hash);
    }
  }
}
