/**
 * What the router sees of a venue's market: two mints and a price for a given input. Venues
 * (`venues/cpmm-pool.ts` pools, the prediction venue) implement it; the router never knows which it
 * has. A market is either sync, executed inside the order's own transaction (a pool: the transaction
 * moves its vaults, signed by its authority), or async, settled later against the venue (an escrowed
 * prediction-market order); `executionMode` tells them apart, in the types as at run time.
 */
import type { Address } from "@solana/kit";
import type { Keypair } from "../../chain/ed25519.js";
import type { TokenRecord } from "./pools/store.js";

export type ExecutionMode = "sync" | "async";

export interface LegQuote {
  outAmount: bigint;
  /** The output at the market's marginal price, fee included, impact excluded (for price impact). */
  spotOutAmount: number;
  /** The most input the leg takes (a prediction buy quotes the whole budget). */
  inAmount: bigint;
  /** What a fill actually spends when less than `inAmount`: whole contracts cost less than the budget. */
  spent?: bigint;
}

export interface TradingMarket {
  /** Venue name as listed by `GET /venues`. */
  readonly venue: string;
  /** The market's address (a pool's authority, a prediction market's ledger). */
  readonly key: Address;
  readonly mints: readonly [Address, Address];
  readonly executionMode: ExecutionMode;
  /** Prices `amountIn` of `inputMint` (one of `mints`); null when the market cannot fill any of it. */
  quote(inputMint: Address, amountIn: bigint): LegQuote | null;
  /**
   * The output `quote` would give, in floating point: cheap enough to rank hundreds of markets per
   * request, after which only the best are priced exactly. `approximateAmountIn` is `Number(amountIn)`,
   * converted once by the caller rather than once per market.
   */
  estimate(inputMint: Address, amountIn: bigint, approximateAmountIn: number): number;
}

/** Output a sync market holds for one firm quote or settlement until its transaction lands or expires. */
export interface PoolHold {
  /** Gives the output back to the market at once. */
  release(): void;
  /** Calls `listener` once the output was delivered, the quote expired or the hold was released. */
  onClose(listener: () => void): void;
  /**
   * Takes the hold off the pool's prices until the returned function puts it back: a re-quote of its
   * own family is priced as if it were not there (only one of the family's transactions can land).
   */
  suspend(): () => void;
}

/** A market a transaction trades directly: token transfers in and out of its vaults, signed by its authority. */
export interface SyncMarket extends TradingMarket {
  readonly executionMode: "sync";
  /** Signs the transfers out of the vaults, and pays the tickets of the quote families it is first in. */
  readonly authority: Keypair;
  /** The token accounts holding each side's reserve, in the order of `mints`. */
  readonly vaults: readonly [Address, Address];
  readonly tokens: readonly [TokenRecord, TokenRecord];
  /** Index (0 or 1) of `mint` in `mints`. */
  sideOf(mint: Address): 0 | 1;
  /** What one side's vault holds, as last read from the chain (promised output not taken off). */
  balance(side: 0 | 1): bigint;
  /**
   * Holds `amount` of `outputMint` for a firm quote paying `inAmount` in, until `lastValidBlockHeight`
   * or until its family's `ticket` exists (see `settleTickets`).
   */
  reserve(
    outputMint: Address,
    amount: bigint,
    lastValidBlockHeight: bigint,
    inAmount: bigint,
    ticket?: Address,
  ): PoolHold;
}

/** A market whose orders settle after the fact, from an escrow the order funds. */
export interface AsyncMarket extends TradingMarket {
  readonly executionMode: "async";
}

/** Every market the venue lists. */
export type VenueMarket = SyncMarket | AsyncMarket;

/** `M` known to execute synchronously: of the venue's markets, exactly the `SyncMarket`s. */
export type SyncOf<M extends TradingMarket> = M & { readonly executionMode: "sync" };

/** Whether `market` executes inside the order's own transaction. */
export function isSync<M extends TradingMarket>(market: M): market is SyncOf<M> {
  return market.executionMode === "sync";
}
