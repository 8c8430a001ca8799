/**
 * GET /order — a quote for swapping `amount` of `inputMint` into `outputMint` and, with
 * `userPublicKey`, the venue-signed transaction that executes it (interface operation 4).
 */

import { ErrorBody } from "../../contract/errors.js";
import { OrderResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { clientOf, ORDER_PARAMS } from "./order-params.js";
import { parseOrderRequest } from "./order-request.js";
import { querySchema } from "./query-params.js";

/** Every parameter of the reference's: each honoured, refused with its code, or without effect by its meaning. */
const OrderQuery = querySchema(ORDER_PARAMS);

/** Registers `GET /order`. */
export function getOrder(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.get(
    "/order",
    {
      schema: {
        operationId: "order_handler",
        tags: ["order"],
        summary: "Quote an order and get its transaction",
        querystring: OrderQuery,
        response: { 200: OrderResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const parsed = parseOrderRequest(request.query, book.venues());
      const order = await desk.order(parsed, clientOf(request));
      return sendJson(reply, JSON.stringify(order));
    },
  );
}
