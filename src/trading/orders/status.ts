/**
 * `GET /order-status`: an order found by its open transaction's signature. An async order's open
 * transaction is signed and sent by the user, so the venue first learns its signature here: it reads
 * the transaction from the chain, finds the order id in its memo, and remembers the signature.
 */
import type { Kysely } from "kysely";
import { decodeSignatureBytes } from "../../chain/base58.js";
import type { Chain } from "../../chain/chain.js";
import { parseWireTransaction } from "../../chain/wire.js";
import { ApiError } from "../../contract/errors.js";
import type { OrderStatusResponse } from "../../contract/trade.js";
import type { Tables } from "../../storage/database.js";
import { openMemoOf } from "./escrow.js";
import { type OrderRecord, orderById, orderBySignature } from "./store.js";

export type { OrderStatusResponse };

export class OrderStatusDesk {
  constructor(private readonly deps: { db: Kysely<Tables>; chain: Chain }) {}

  async status(signature: string): Promise<OrderStatusResponse> {
    // The length is checked before any decoding: base58 costs the square of it.
    try {
      decodeSignatureBytes(signature);
    } catch {
      throw new ApiError("invalid_signature", "signature must be a base58 transaction signature");
    }
    const order = (await orderBySignature(this.deps.db, signature)) ?? (await this.fromChain(signature));
    if (!order) throw new ApiError("not_found", `no order was opened by transaction ${signature}`);
    const sum = (values: string[]) => values.reduce((total, value) => total + BigInt(value), 0n).toString();
    return {
      status: order.status,
      inAmount: sum(order.fills.map((fill) => fill.inAmount)),
      outAmount: sum(order.fills.map((fill) => fill.outAmount)),
      ...(order.fills.length > 0 ? { fills: order.fills } : {}),
      ...(order.reverts.length > 0 ? { reverts: order.reverts } : {}),
    };
  }

  /** The order an open transaction on the chain names in its memo, now also found by this signature. */
  private async fromChain(signature: string): Promise<OrderRecord | undefined> {
    const record = await this.deps.chain.getTransaction(signature as never);
    if (!record) return undefined;
    const memo = openMemoOf(parseWireTransaction(record.wire));
    const order = memo ? await orderById(this.deps.db, memo.orderId) : undefined;
    if (order?.kind !== "async") return undefined;
    await this.deps.db
      .updateTable("orders")
      .set({ open_signature: signature })
      .where("id", "=", order.id)
      .where("open_signature", "is", null)
      .execute();
    return { ...order, openSignature: signature };
  }
}
