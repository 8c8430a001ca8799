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
  /** Still counted in `reserved`. */
  open: boolean;
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
   * chain passes `lastValidBlockHeight`; the hold can be released early (when the quote could not be
   * issued after all).
   */
  reserve(outputMint: Address, amount: bigint, lastValidBlockHeight: bigint, inAmount: bigint): PoolHold {
    const reservation: Reservation = {
      side: this.sideOf(outputMint),
      amount,
      incoming: inAmount,
      lastValidBlockHeight,
      open: true,
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
        this.reserved[reservation.side] -= reservation.amount;
        this.approximateAgain();
      },
      onClose: (listener) => {
        if (reservation.open) reservation.onClose = listener;
        else listener();
      },
    };
  }

  /**
   * Records a vault balance read from the chain. Tokens leave a vault only in transactions this venue
   * signed, so a drop means promised output was delivered: that much is released. A transaction pays
   * a promise whole, so whole promises that fit in the drop go first, oldest first; what is left is
   * taken from the oldest promises. Releasing older promises first can only keep a promise longer than
   * needed, never drop one still outstanding before its expiry.
   */
  observeBalance(side: 0 | 1, balance: bigint): void {
    let delivered = this.balances[side] - balance;
    this.balances[side] = balance;
    this.approximateAgain();
    if (delivered <= 0n) return;
    const release = (reservation: Reservation, amount: bigint) => {
      reservation.amount -= amount;
      this.reserved[side] -= amount;
      delivered -= amount;
      if (reservation.amount === 0n) this.close(reservation);
    };
    for (const reservation of this.reservations) {
      if (delivered === 0n) break;
      if (reservation.side === side && reservation.amount <= delivered)
        release(reservation, reservation.amount);
    }
    for (const reservation of this.reservations) {
      if (delivered === 0n) break;
      if (reservation.side === side && reservation.open)
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
      else {
        this.close(reservation);
        this.reserved[reservation.side] -= reservation.amount;
      }
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

  /** Ends a reservation: delivered (its input has arrived with it), expired or released. */
  private close(reservation: Reservation): void {
    reservation.open = false;
    this.incoming[otherSide(reservation.side)] -= reservation.incoming;
    reservation.onClose?.();
    reservation.onClose = undefined;
  }
}

function otherSide(side: 0 | 1): 0 | 1 {
  return side === 0 ? 1 : 0;
}
