/**
 * GET /order — a quote for swapping `amount` of `inputMint` into `outputMint` and, with
 * `userPublicKey`, the venue-signed transaction that executes it (interface operation 4).
 */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { OrderResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { TradingBook } from "../book.js";
import type { OrderDesk } from "../order.js";
import { parseOrderRequest } from "./order-params.js";

const text = (description: string) => z.string().optional().meta({ description });

const OrderQuery = z.object({
  inputMint: z.string().meta({ description: "Mint of the token given" }),
  outputMint: z.string().meta({ description: "Mint of the token received" }),
  amount: z
    .string()
    .meta({ description: "Input amount in the input token's smallest unit", example: "1000000" }),
  slippageBps: text('Allowed slippage in basis points (0–10000) or "auto" (the default, 50)'),
  userPublicKey: text("The user's wallet; the response then carries the transaction to sign"),
  predictionMarketSlippageBps: text(
    'Prediction-market orders: slippage in basis points or "auto"; at least slippageBps',
  ),
  priceImpactTolerancePct: text("Largest price impact accepted, in whole percent (default 25)"),
  dexes: text("Comma-separated venues a route may use (see GET /venues)"),
  excludeDexes: text("Comma-separated venues a route must not use"),
  onlyDirectRoutes: text("true for single-leg routes only"),
  maxRouteLength: text("Most legs a route may have (1 or more; routes have at most 2)"),
  platformFeeBps: text("Integrator fee in basis points, taken from the output; needs feeAccount"),
  feeAccount: text("Token account of the output mint that receives the platform fee"),
  prioritizationFeeLamports: text(
    "Priority fee in lamports, or auto, medium, high, veryHigh, disabled; not with computeUnitPriceMicroLamports",
  ),
  prioritizationFeeMaxLamports: text(
    "Cap on a priority fee level the venue picks (default 5000000, 0.005 SOL)",
  ),
  computeUnitPriceMicroLamports: text(
    "Price per compute unit in micro-lamports, instead of prioritizationFeeLamports",
  ),
  allowSyncExec: text("false to refuse routes executed in this transaction (default true)"),
  allowAsyncExec: text("false to refuse routes settled after it, prediction-market orders (default true)"),
  wrapAndUnwrapSol: text("With wrapped SOL as input or output, wrap and unwrap native SOL (default true)"),
});

export type OrderQuery = z.infer<typeof OrderQuery>;

/** Registers `GET /order`. */
export function getOrder(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.get(
    "/order",
    {
      schema: {
        operationId: "order",
        tags: ["Order"],
        summary: "Quote an order and get its transaction",
        querystring: OrderQuery,
        response: { 200: OrderResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      // Firm quotes are bounded per client: its key when it has one, else its address.
      const client = request.grant ? `key:${request.grant.id}` : `ip:${request.ip}`;
      const order = await desk.order(parseOrderRequest(request.query, book.venues()), client);
      return sendJson(reply, JSON.stringify(order));
    },
  );
}
