/** What settling an order starts from (its escrow as the chain holds it) and what it makes. */
import type { LatestBlockhash } from "../../../chain/chain.js";
import type { Keypair } from "../../../chain/ed25519.js";
import type { PoolHold } from "../../spot/market.js";
import type { TokenRecord } from "../../spot/pools/store.js";
import type { ChainClock } from "../../spot/trading-book.js";
import { associatedTokenAddress } from "../../tx/token-accounts.js";
import { type ClosePlan, type OrderRecord, orderById } from "../order-store.js";
import type { OrderKeeperOptions } from "./options.js";

/** An open order's escrow as the chain holds it now: what planning its settlement starts from. */
export interface Escrowed {
  order: OrderRecord;
  input: TokenRecord;
  output: TokenRecord;
  /** The chain's clock as the settlement began. */
  clock: ChainClock;
  /** Past its expiry: refunded, no longer filled. */
  expired: boolean;
  /** The escrow's authority: the settling transaction's fee payer. */
  escrow: Keypair;
  /** The escrow's token balance and its authority's lamports. */
  held: bigint;
  lamports: bigint;
}

/** A settling transaction, built and checked, not yet recorded. */
export interface Settlement {
  wire: Uint8Array;
  /** The blockhash it was built on: it can land until the chain passes its last valid height. */
  lifetime: LatestBlockhash;
  /** The fill and the revert it makes, recorded as the order's once it lands. */
  plan: ClosePlan;
  /** Pool output held for its fill until it lands or can no longer land. */
  holds: readonly PoolHold[];
}

/** The order's escrow as the chain holds it, or undefined when there is none to settle. */
export async function readEscrow(
  options: OrderKeeperOptions,
  order: OrderRecord,
  openSlot: bigint,
): Promise<Escrowed | undefined> {
  const { book, chain, db, authorities } = options;
  const input = book.token(order.inputMint);
  const output = book.token(order.outputMint);
  if (!input || !output) return undefined;
  const clock = book.clock;
  const escrow = authorities.orderAuthority(order.id);
  const escrowAccount = associatedTokenAddress(escrow.address, input.mint, input.program);
  const [held, lamports] = await Promise.all([
    chain.getTokenAccount(escrowAccount),
    chain.getBalance(escrow.address),
  ]);
  if (!held) {
    // Usually `order` is a stale copy (a tick's list, read before this order was settled and its
    // escrow closed); only an order still stored as it was means something is wrong.
    const stored = await orderById(db, order.id);
    if (stored?.status === order.status) {
      options.logger?.error({ orderId: order.id }, "an open order's escrow is missing");
    }
    return undefined;
  }
  const expired = clock.slot > openSlot + BigInt(order.expirySlots);
  return { order, input, output, clock, expired, escrow, held: held.amount, lamports };
}

/** What a settlement does: its fill, if any, and the revert of whatever the escrow holds beyond it. */
export function closePlan(
  { input, output, held }: Escrowed,
  fill: { inAmount: bigint; outAmount: bigint } | undefined,
): ClosePlan {
  const leftover = held - (fill?.inAmount ?? 0n);
  return {
    fill: fill
      ? {
          inputMint: input.mint,
          inAmount: fill.inAmount.toString(),
          outputMint: output.mint,
          outAmount: fill.outAmount.toString(),
        }
      : null,
    revert: leftover > 0n ? { mint: input.mint, amount: leftover.toString() } : null,
  };
}
