/**
 * Sweeps settled intents' escrows back to their users once their clients have had time to read them
 * (`/submit-intent`'s `orderAddress`): the emptied escrow is closed (its rent to the user) and what is
 * left of the fee budget sent on, in one transaction its authority pays. Due sweeps are stored with
 * the order, so a restart finds them; one that finds nothing left (swept already, or an escrow an
 * earlier version closed at settlement) is only recorded.
 */

import { associatedTokenAddress } from "../../tx/token-accounts.js";
import { sweepTransaction } from "../escrow.js";
import { markSwept, type OrderRecord, ordersToSweep } from "../order-store.js";
import type { OrderKeeperOptions } from "./options.js";

export class Sweeper {
  constructor(private readonly options: OrderKeeperOptions) {}

  /** Sweeps the escrows due now, a pass's worth at most; a failure waits for the next pass. */
  async sweepDue(nowMs = Date.now()): Promise<void> {
    for (const order of await ordersToSweep(this.options.db, nowMs)) {
      await this.sweep(order).catch((error: unknown) =>
        this.options.logger?.error({ err: error, orderId: order.id }, "sweeping an escrow failed"),
      );
    }
  }

  private async sweep(order: OrderRecord): Promise<void> {
    const { book, chain, db, authorities } = this.options;
    const input = book.token(order.inputMint);
    if (!input) return;
    const escrow = authorities.orderAuthority(order.id);
    const escrowAccount = associatedTokenAddress(escrow.address, input.mint, input.program);
    const [held, lamports] = await Promise.all([
      chain.getTokenAccount(escrowAccount),
      chain.getBalance(escrow.address),
    ]);
    if (held || lamports > 0n) {
      const wire = await sweepTransaction({
        escrow,
        user: order.user,
        input,
        escrowOpen: held !== null,
        escrowAmount: held?.amount ?? 0n,
        lamports,
        blockhash: book.clock.latest.blockhash,
      });
      await chain.sendTransaction(wire);
    }
    await markSwept(db, order.id);
  }
}
