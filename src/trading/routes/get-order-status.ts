/** GET /order-status — where an escrowed order (an intent or an async order) stands, with its fills and reverts. */

import type { Kysely } from "kysely";
import { z } from "zod";
import { isSignatureText } from "../../chain/base58.js";
import type { Chain } from "../../chain/chain.js";
import { ApiError, ErrorBody, type ErrorCode } from "../../contract/errors.js";
import { OrderStatusResponse } from "../../contract/trade.js";
import type { ZodApp } from "../../http/types.js";
import type { Tables } from "../../storage/database.js";
import { orderByOpenSignature } from "../prediction/status.js";
import { PUBLISHED } from "./query-params.js";

const OrderStatusQuery = z.object({
  signature: z.string().meta({ description: "Signature of the order's open transaction, base58" }),
  lastValidBlockHeight: z
    .string()
    .optional()
    .meta({ description: "From the order's response; accepted, not needed", published: PUBLISHED.int64 }),
});

/**
 * The reference code each parameter is refused with when it is missing or malformed: the reference has
 * one for this route, `invalid_signature`, and the message names the parameter.
 */
export const ORDER_STATUS_PARAM_CODES = {
  signature: "invalid_signature",
  lastValidBlockHeight: "invalid_signature",
} as const satisfies Record<keyof z.infer<typeof OrderStatusQuery>, ErrorCode>;

/** Answers `/order-status`: the order an open transaction's signature names, as the contract shows it. */
export class OrderStatusDesk {
  constructor(private readonly deps: { db: Kysely<Tables>; chain: Chain }) {}

  /** The status, fills and reverts of the order `signature` (as the request has it) opened. */
  async status(signature: string): Promise<OrderStatusResponse> {
    // Checked before storage or the chain sees it; the length is bounded before any decoding (base58 costs its square).
    if (!isSignatureText(signature))
      throw new ApiError("invalid_signature", "signature must be a base58 transaction signature");
    const order = await orderByOpenSignature(this.deps, signature);
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
}

/** Registers `GET /order-status`. */
export function getOrderStatus(app: ZodApp, status: OrderStatusDesk): void {
  app.get(
    "/order-status",
    {
      schema: {
        operationId: "order_status_handler",
        tags: ["order"],
        summary: "Status of an escrowed order",
        querystring: OrderStatusQuery,
        response: { 200: OrderStatusResponse, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => status.status(request.query.signature),
  );
}
