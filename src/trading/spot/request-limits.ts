/**
 * The limits an order request may set on its transaction, and the priority levels it may name: kept
 * apart from `order-terms.ts` so that `routes/order-params.ts`, which declares the request, needs no
 * more of the order desk than these.
 */
import type { OrderRefusal } from "../errors.js";

/** Solana's limits on one transaction: accounts it may lock, and bytes on the wire. */
export const TRANSACTION_MAX_ACCOUNTS = 64;
export const TRANSACTION_MAX_SIZE = 1232;

/** The priority levels of `GET /priority-fees`. */
export type PriorityLevel = "medium" | "high" | "veryHigh";

/** A priority fee asked for as a level of the chain's recent fees, times a multiplier. */
export interface PriorityLevelRequest {
  level: PriorityLevel;
  multiplier: number;
  /** The level's price per compute unit, read when the order is priced. */
  microLamports?: bigint;
}

/** A limit on the transaction, and the refusal when no route's transaction fits under it. */
export interface TransactionLimit {
  limit: number;
  refusal: Extract<
    OrderRefusal,
    | "max_accounts_too_small"
    | "reserve_accounts_too_large"
    | "max_transaction_size_too_small"
    | "reserve_transaction_size_too_large"
  >;
}
