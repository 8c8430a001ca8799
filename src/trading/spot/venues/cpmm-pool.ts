/**
 * A constant-product pool as a tradable market. Its reserves are its two vault balances on the chain
 * (refreshed every slot) adjusted by the firm quotes whose transactions have neither landed nor
 * expired: a quote is priced as if every outstanding one lands before it, and none that pays this
 * pool, so the venue never promises more than any order of landing would pay. On the output side that
 * is the balance less every promised output (two quotes never promise the same tokens twice); on the
 * input side, the balance plus every promised input (without it, quotes of one direction stacked up
 * before landing would each be priced on the untouched curve and together drain the pool).
 */
import type { Address } from "@solana/kit";
import type { Keypair } from "../../../chain/ed25519.js";
import type { LegQuote, PoolHold, SyncMarket } from "../market.js";
import type { PoolRecord, TokenRecord } from "../pools/store.js";
import { cpmmAmountOut, cpmmSpotOut } from "./cpmm.js";

export const CPMM_VENUE = "cpmm";

interface Reservation {
  side: 0 | 1;
  /** Still undelivered. */
  amount: bigint;
  /** The input the quote pays into the other side when it lands. */
  incoming: bigint;
  /** The promise lapses once the chain passes this block height. */
  lastValidBlockHeight: bigint;
  /** The quote family's ticket: delivered when it exists on the chain (see `settleTickets`). */
  ticket: Address | undefined;
  /** Still counted in `reserved`. */
  open: boolean;
  /** Taken out of `reserved` for a moment, to price its own family's re-quote (`PoolHold.suspend`). */
  suspended: boolean;
  /** Called once when the reservation closes: delivered, expired or released. */
  onClose: (() => void) | undefined;
}

/** A constant-product pool: a sync market whose vaults the order transaction trades directly. */
export class CpmmPool implements SyncMarket {
  readonly venue = CPMM_VENUE;
  readonly executionMode = "sync";
  readonly key: Address;
  readonly mints: readonly [Address, Address];
  /** Vault balances as last read from the chain (see `observeBalance`). */
  private readonly balances: [bigint, bigint] = [0n, 0n];
  private readonly reserved: [bigint, bigint] = [0n, 0n];
  /** Input promised by open reservations, per side. */
  private readonly incoming: [bigint, bigint] = [0n, 0n];
  /** Each side's reserve as an input and as an output, as floats, kept current: the router estimates hundreds of pools per request. */
  private readonly approximateIn: [number, number] = [0, 0];
  private readonly approximateOut: [number, number] = [0, 0];
  private reservations: Reservation[] = [];
  /** Output that left each side since the last `settleTickets`, not yet matched to a reservation. */
  private readonly unexplained: [bigint, bigint] = [0n, 0n];
  /** 1 − fee, as a float, for `estimate`. */
  private readonly keptAfterFee: number;

  constructor(
    readonly record: PoolRecord,
    readonly tokens: readonly [TokenRecord, TokenRecord],
    readonly vaults: readonly [Address, Address],
    readonly authority: Keypair,
  ) {
    this.key = record.address;
    this.mints = [record.mintA, record.mintB];
    this.keptAfterFee = 1 - record.feeBps / 10_000;
  }

  balance(side: 0 | 1): bigint {
    return this.balances[side];
  }

  /** What the pool can still pay out of one side. */
  available(side: 0 | 1): bigint {
    const free = this.balances[side] - this.reserved[side];
    return free > 0n ? free : 0n;
  }

  /** One side's reserve when it takes input: its balance and every input promised to it. */
  private inputReserve(side: 0 | 1): bigint {
    return this.balances[side] + this.incoming[side];
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    const inSide = this.sideOf(inputMint);
    const outSide = inSide === 0 ? 1 : 0;
    const reserveIn = this.inputReserve(inSide);
    const reserveOut = this.available(outSide);
    const outAmount = cpmmAmountOut(reserveIn, reserveOut, amountIn, this.record.feeBps);
    if (outAmount <= 0n) return null;
    return {
      inAmount: amountIn,
      outAmount,
      spotOutAmount: cpmmSpotOut(reserveIn, reserveOut, amountIn, this.record.feeBps),
    };
  }

  estimate(inputMint: Address, _amountIn: bigint, approximateAmountIn: number): number {
    const inSide = this.sideOf(inputMint);
    const reserveIn = this.approximateIn[inSide];
    const reserveOut = this.approximateOut[inSide === 0 ? 1 : 0];
    const inAfterFee = approximateAmountIn * this.keptAfterFee;
    return reserveIn > 0 ? (reserveOut * inAfterFee) / (reserveIn + inAfterFee) : 0;
  }

  /** Index (0 or 1) of `mint` in the pool. */
  sideOf(mint: Address): 0 | 1 {
    return mint === this.mints[0] ? 0 : 1;
  }

  /**
   * Holds `amount` of `outputMint` for a firm quote that pays `inAmount` of the other mint, until the
   * chain passes `lastValidBlockHeight`, or until `ticket` exists when the quote has one; the hold can be
   * released early (when the quote could not be issued after all).
   */
  reserve(
    outputMint: Address,
    amount: bigint,
    lastValidBlockHeight: bigint,
    inAmount: bigint,
    ticket?: Address,
  ): PoolHold {
    const reservation: Reservation = {
      side: this.sideOf(outputMint),
      amount,
      incoming: inAmount,
      lastValidBlockHeight,
      ticket,
      open: true,
      suspended: false,
      onClose: undefined,
    };
    this.reserved[reservation.side] += amount;
    this.incoming[otherSide(reservation.side)] += inAmount;
    this.approximateAgain();
    this.reservations.push(reservation);
    return {
      release: () => {
        if (!reservation.open) return;
        this.close(reservation);
        this.reservations.splice(this.reservations.indexOf(reservation), 1);
        this.approximateAgain();
      },
      onClose: (listener) => {
        if (reservation.open) reservation.onClose = listener;
        else listener();
      },
      suspend: () => {
        if (!reservation.open || reservation.suspended) return () => {};
        reservation.suspended = true;
        this.count(reservation, -1n);
        return () => {
          if (!reservation.suspended) return;
          reservation.suspended = false;
          if (reservation.open) this.count(reservation, 1n);
        };
      },
    };
  }

  /** Adds (`sign` 1) or takes off (−1) a reservation's output and input from the totals the curve prices on. */
  private count(reservation: Reservation, sign: 1n | -1n): void {
    this.reserved[reservation.side] += sign * reservation.amount;
    this.incoming[otherSide(reservation.side)] += sign * reservation.incoming;
    this.approximateAgain();
  }

  /**
   * Records a vault balance read from the chain. Tokens leave a vault only in transactions this venue
   * signed, so a drop means promised output was delivered. While a side has ticketed promises the drop
   * waits for `settleTickets`, which knows which of them landed; otherwise it is matched by amount
   * (`deliver`).
   */
  observeBalance(side: 0 | 1, balance: bigint): void {
    const delivered = this.balances[side] - balance;
    this.balances[side] = balance;
    this.approximateAgain();
    if (delivered <= 0n) return;
    if (this.reservations.some((r) => r.side === side && r.ticket !== undefined)) {
      this.unexplained[side] += delivered;
      return;
    }
    this.deliver(side, delivered);
  }

  /** The tickets to look up before `settleTickets`: those of promises on a side whose balance dropped. */
  ticketsToCheck(): Address[] {
    if (this.unexplained[0] === 0n && this.unexplained[1] === 0n) return [];
    const tickets = new Set<Address>();
    for (const r of this.reservations)
      if (r.ticket !== undefined && this.unexplained[r.side] > 0n) tickets.add(r.ticket);
    return [...tickets];
  }

  /**
   * Releases the promises whose ticket now exists (their family's transaction landed), whole: the
   * family's output is promised once, at its largest, and one of its transactions paid it. What else
   * left the vault is matched to the promises without a ticket. Taking the whole promise off what left
   * can only leave too little to match (a promise kept longer than needed), never too much.
   */
  settleTickets(landed: ReadonlySet<string>): void {
    for (const side of [0, 1] as const) {
      let delivered = this.unexplained[side];
      if (delivered === 0n) continue;
      this.unexplained[side] = 0n;
      for (const r of this.reservations) {
        if (r.side !== side || !r.open || r.ticket === undefined || !landed.has(r.ticket)) continue;
        delivered = delivered > r.amount ? delivered - r.amount : 0n;
        this.close(r);
      }
      this.reservations = this.reservations.filter((r) => r.open);
      if (delivered > 0n) this.deliver(side, delivered, (r) => r.ticket === undefined);
    }
    this.approximateAgain();
  }

  /**
   * Releases `delivered` of one side's promises. A transaction pays a promise whole, so whole promises
   * that fit in the drop go first, oldest first; what is left is taken from the oldest promises.
   * Releasing older promises first can only keep a promise longer than needed, never drop one still
   * outstanding before its expiry.
   */
  private deliver(side: 0 | 1, delivered: bigint, eligible: (r: Reservation) => boolean = () => true): void {
    const release = (reservation: Reservation, amount: bigint) => {
      if (!reservation.suspended) this.reserved[side] -= amount;
      reservation.amount -= amount;
      delivered -= amount;
      if (reservation.amount === 0n) this.close(reservation, false);
    };
    for (const reservation of this.reservations) {
      if (delivered === 0n) break;
      if (reservation.side === side && eligible(reservation) && reservation.amount <= delivered)
        release(reservation, reservation.amount);
    }
    for (const reservation of this.reservations) {
      if (delivered === 0n) break;
      if (reservation.side === side && reservation.open && eligible(reservation))
        release(reservation, reservation.amount < delivered ? reservation.amount : delivered);
    }
    this.reservations = this.reservations.filter((reservation) => reservation.open);
    this.approximateAgain();
  }

  /** Releases the promises whose transactions can no longer land. */
  expireReservations(blockHeight: bigint): void {
    if (this.reservations.length === 0) return;
    const live: Reservation[] = [];
    for (const reservation of this.reservations) {
      if (reservation.lastValidBlockHeight >= blockHeight) live.push(reservation);
      else this.close(reservation);
    }
    this.reservations = live;
    this.approximateAgain();
  }

  private approximateAgain(): void {
    for (const side of [0, 1] as const) {
      this.approximateIn[side] = Number(this.inputReserve(side));
      this.approximateOut[side] = Number(this.available(side));
    }
  }

  /**
   * Ends a reservation: delivered, expired or released. Its output leaves `reserved` unless `counted`
   * is false (a delivery already took it off) or it is suspended (it is not in it).
   */
  private close(reservation: Reservation, counted = true): void {
    reservation.open = false;
    if (!reservation.suspended) {
      if (counted) this.reserved[reservation.side] -= reservation.amount;
      this.incoming[otherSide(reservation.side)] -= reservation.incoming;
    }
    reservation.suspended = false;
    reservation.onClose?.();
    reservation.onClose = undefined;
  }
}

function otherSide(side: 0 | 1): 0 | 1 {
  return side === 0 ? 1 : 0;
}
