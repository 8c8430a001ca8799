/**
 * GET /quote — the reference's deprecated imperative quote (dflow-trade-api.md §6.1): the price of a
 * spot swap, to be turned into a transaction by `POST /swap` or `/swap-instructions`. It is `/order`'s
 * routing and pricing without a user; prediction markets trade through `/order` only.
 */

import { z } from "zod";
import { ApiError, ErrorBody, type ErrorCode } from "../../contract/errors.js";
import { QuoteResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { ORDER_PARAM_CODES, parseOrderRequest } from "./order-params.js";

const text = (description: string) => z.string().optional().meta({ description });

const QuoteQuery = z.object({
  inputMint: z.string().meta({ description: "Mint of the token given" }),
  outputMint: z.string().meta({ description: "Mint of the token received" }),
  amount: z.string().meta({ description: "Input amount in the input token's smallest unit" }),
  slippageBps: text('Allowed slippage in basis points (0–10000) or "auto" (the default, 50)'),
  priceImpactTolerancePct: text("Largest price impact accepted, in whole percent (default 25)"),
  dexes: text("Comma-separated venues a route may use (see GET /venues)"),
  excludeDexes: text("Comma-separated venues a route must not use"),
  platformFeeBps: text("Integrator fee in basis points; the fee account is named at POST /swap"),
  platformFeeMode: text(
    "outputMint (the default) or inputMint: the fee is taken off the input before routing",
  ),
  sponsoredSwap: text("true or false; no effect: no token this venue lists charges a transfer fee"),
  sponsorExec: text("true (the default) or false; only with sponsoredSwap"),
  destinationSwap: text("true or false; no effect: no token this venue lists charges a transfer fee"),
  onlyDirectRoutes: text("true for single-leg routes only"),
  maxRouteLength: text("Most legs a route may have (1 or more; routes have at most 2)"),
  onlyJitRoutes: text("true is refused (route_not_found): this venue has no JIT router"),
  forJitoBundle: text("true is refused (route_not_found): the chain runs no Jito block engine"),
  skipPumpfunCashbackClaim: text("true or false; no effect: no Pump.fun venue here"),
});

type QuoteQuery = z.infer<typeof QuoteQuery>;

/**
 * The code each parameter is refused with when missing or malformed, from the quote's own list
 * (QuoteBadRequestCode): the order's where `/order` shares it, else the family it belongs to.
 */
export const QUOTE_PARAM_CODES = {
  inputMint: ORDER_PARAM_CODES.inputMint,
  outputMint: ORDER_PARAM_CODES.outputMint,
  amount: ORDER_PARAM_CODES.amount,
  slippageBps: ORDER_PARAM_CODES.slippageBps,
  priceImpactTolerancePct: ORDER_PARAM_CODES.priceImpactTolerancePct,
  dexes: ORDER_PARAM_CODES.dexes,
  excludeDexes: ORDER_PARAM_CODES.excludeDexes,
  platformFeeBps: ORDER_PARAM_CODES.platformFeeBps,
  platformFeeMode: ORDER_PARAM_CODES.platformFeeMode,
  // Who pays fees and transfer fees: the fee family.
  sponsoredSwap: "invalid_platform_fee_bps",
  sponsorExec: "invalid_platform_fee_bps",
  destinationSwap: "invalid_platform_fee_bps",
  onlyDirectRoutes: ORDER_PARAM_CODES.onlyDirectRoutes,
  maxRouteLength: ORDER_PARAM_CODES.maxRouteLength,
  onlyJitRoutes: ORDER_PARAM_CODES.onlyJitRoutes,
  forJitoBundle: "invalid_dex",
  skipPumpfunCashbackClaim: "invalid_dex",
} as const satisfies Record<keyof QuoteQuery, ErrorCode>;

/** Registers `GET /quote`. */
export function getQuote(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.get(
    "/quote",
    {
      schema: {
        operationId: "quote",
        tags: ["Swap"],
        summary: "Quote an imperative swap (deprecated: use GET /order)",
        description:
          "The price of a spot swap; POST /swap or /swap-instructions turns the response into a transaction.",
        querystring: QuoteQuery,
        response: { 200: QuoteResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const query = request.query;
      // Checked and without effect here (no transfer-fee tokens, no Pump.fun venue); /order's pairing
      // of skipPumpfunCashbackClaim with sponsorExec is for its sponsored Pump.fun routes only.
      for (const name of [
        "sponsoredSwap",
        "sponsorExec",
        "destinationSwap",
        "skipPumpfunCashbackClaim",
      ] as const)
        flag(query[name], name);
      const order = parseOrderRequest(
        {
          inputMint: query.inputMint,
          outputMint: query.outputMint,
          amount: query.amount,
          slippageBps: query.slippageBps,
          priceImpactTolerancePct: query.priceImpactTolerancePct,
          dexes: query.dexes,
          excludeDexes: query.excludeDexes,
          platformFeeBps: query.platformFeeBps,
          platformFeeMode: query.platformFeeMode,
          onlyDirectRoutes: query.onlyDirectRoutes,
          maxRouteLength: query.maxRouteLength,
          onlyJitRoutes: query.onlyJitRoutes,
          forJitoBundle: query.forJitoBundle,
        },
        book.venues(),
        { feeAccountLater: true },
      );
      return sendJson(reply, JSON.stringify(await desk.quote(order)));
    },
  );
}

function flag(value: string | undefined, name: keyof typeof QUOTE_PARAM_CODES): void {
  if (value !== undefined && value !== "true" && value !== "false")
    throw new ApiError(
      QUOTE_PARAM_CODES[name],
      `${name} must be true or false, got ${JSON.stringify(value.slice(0, 64))}`,
    );
}
