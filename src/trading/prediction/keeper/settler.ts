import { encodeSignature } from "../../../chain/base58.js";
import { advanceOrder, type OrderRecord } from "../order-store.js";
import { planInitSettlement } from "./market-initialization.js";
import type { OrderKeeperOptions } from "./options.js";
import { planPredictionSettlement } from "./prediction-plan.js";
import { readEscrow, type Settlement } from "./settlement.js";
import { planSpotSettlement } from "./spot-plan.js";

/** Settles orders: plans the settlement their kind makes, records it as the order's, then sends it. */
export class Settler {
  constructor(private readonly options: OrderKeeperOptions) {}

  /**
   * Fills the order now if its kind's plan finds a price meeting its threshold, refunds it once
   * expired. `opening` is the slot a pending order's open transaction landed in, recorded with the
   * settlement.
   */
  async settle(order: OrderRecord, opening?: bigint): Promise<OrderRecord | undefined> {
    if (order.kind === "init") {
      const settlement = await planInitSettlement(this.options, order);
      return settlement ? this.recordAndSend(order, settlement, opening) : undefined;
    }
    const escrowed = await readEscrow(this.options, order, opening ?? order.openSlot ?? 0n);
    if (!escrowed) return undefined;
    const settlement =
      order.kind === "async"
        ? await planPredictionSettlement(this.options, escrowed)
        : await planSpotSettlement(this.options.book, escrowed);
    if (!settlement) return undefined;
    return this.recordAndSend(order, settlement, opening);
  }

  /**
   * Records the settlement as the order's (with the slot it opened in, when it opens now), then sends
   * it: recorded first, so that after a crash it is sent again rather than built anew. Its holds are
   * released if another step moved the order first, or the chain refuses it.
   */
  private async recordAndSend(
    order: OrderRecord,
    settlement: Settlement,
    opening: bigint | undefined,
  ): Promise<OrderRecord | undefined> {
    const { wire, holds } = settlement;
    const closing = await advanceOrder(this.options.db, order, {
      status: "pendingClose",
      close: {
        // A settlement has fewer than 128 signers: one length byte, then the fee payer's signature.
        signature: encodeSignature(wire.subarray(1, 65)),
        wire: Buffer.from(wire).toString("base64"),
        validHeight: settlement.lifetime.lastValidBlockHeight,
        plan: settlement.plan,
      },
      ...(opening !== undefined ? { openSlot: opening } : {}),
    });
    if (!closing) {
      for (const hold of holds) hold.release();
      return undefined;
    }
    // The venue's own keys signed it, moments ago.
    await this.options.chain.sendTransaction(wire, { signaturesChecked: true }).catch((error: unknown) => {
      for (const hold of holds) hold.release();
      this.options.logger?.info({ err: error, orderId: order.id }, "a settling transaction was refused");
    });
    return closing;
  }
}
