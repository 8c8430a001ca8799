/**
 * POST /swap — the reference's deprecated imperative swap (dflow-trade-api.md §6.2): a `GET /quote`
 * response and the user's key become the venue-signed transaction that executes it, as `/order`
 * issues it (the same firm-quote bounds, signing guard and reservations).
 */
import { ErrorBody } from "../../contract/errors.js";
import { SwapResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { clientOf } from "./order-params.js";
import { SwapRequest, swapOrderRequest } from "./swap-request.js";

/** Registers `POST /swap`. */
export function postSwap(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.post(
    "/swap",
    {
      schema: {
        operationId: "swap_handler",
        tags: ["swap"],
        summary: "Get the transaction of a quote (deprecated: use GET /order)",
        body: SwapRequest,
        response: { 200: SwapResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const order = await desk.swap(
        swapOrderRequest(request.body, book.venues()),
        clientOf(request),
        "transaction",
      );
      const response: SwapResponse = {
        swapTransaction: order.transaction,
        lastValidBlockHeight: order.lastValidBlockHeight,
        prioritizationFeeLamports: order.prioritizationFeeLamports,
        computeUnitLimit: order.computeUnitLimit,
        prioritizationType: order.prioritizationType,
      };
      return sendJson(reply, JSON.stringify(response));
    },
  );
}
