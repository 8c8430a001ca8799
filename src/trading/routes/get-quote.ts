/**
 * GET /quote — the reference's deprecated imperative quote (dflow-trade-api.md §6.1): the price of a
 * spot swap, to be turned into a transaction by `POST /swap` or `/swap-instructions`. It is `/order`'s
 * routing and pricing without a user; prediction markets trade through `/order` only.
 */

import { ErrorBody } from "../../contract/errors.js";
import { QuoteResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { ORDER_PARAMS } from "./order-params.js";
import { parseOrderRequest } from "./order-request.js";
import { flag, like, paramCodes, parseParams, querySchema } from "./query-params.js";

/**
 * Checked and without effect here (no transfer-fee tokens, no Pump.fun venue); `/order`'s pairing of
 * skipPumpfunCashbackClaim with sponsorExec is for its sponsored Pump.fun routes only. Who pays fees
 * and transfer fees is the fee family; a Pump.fun option is a venue's.
 */
const QUOTE_OWN_PARAMS = {
  sponsoredSwap: flag(
    "invalid_platform_fee_bps",
    "true or false; no effect: no token this venue lists charges a transfer fee",
    false,
  ),
  sponsorExec: flag("invalid_platform_fee_bps", "true (the default) or false; only with sponsoredSwap", true),
  destinationSwap: flag(
    "invalid_platform_fee_bps",
    "true or false; no effect: no token this venue lists charges a transfer fee",
    false,
  ),
  skipPumpfunCashbackClaim: flag("invalid_dex", "true or false; no effect: no Pump.fun venue here", false),
};

/** The parameters of `GET /quote`: `/order`'s where they mean the same, and its own. */
const QUOTE_PARAMS = {
  inputMint: ORDER_PARAMS.inputMint,
  outputMint: ORDER_PARAMS.outputMint,
  amount: ORDER_PARAMS.amount,
  slippageBps: ORDER_PARAMS.slippageBps,
  priceImpactTolerancePct: ORDER_PARAMS.priceImpactTolerancePct,
  dexes: ORDER_PARAMS.dexes,
  excludeDexes: ORDER_PARAMS.excludeDexes,
  platformFeeBps: like(ORDER_PARAMS.platformFeeBps, {
    description: "Integrator fee in basis points; the fee account is named at POST /swap",
  }),
  platformFeeMode: ORDER_PARAMS.platformFeeMode,
  sponsoredSwap: QUOTE_OWN_PARAMS.sponsoredSwap,
  sponsorExec: QUOTE_OWN_PARAMS.sponsorExec,
  destinationSwap: QUOTE_OWN_PARAMS.destinationSwap,
  onlyDirectRoutes: ORDER_PARAMS.onlyDirectRoutes,
  maxRouteLength: ORDER_PARAMS.maxRouteLength,
  onlyJitRoutes: ORDER_PARAMS.onlyJitRoutes,
  // Read as /order reads it; a quote's reference names its refusals invalid_dex (errors.ts).
  forJitoBundle: like(ORDER_PARAMS.forJitoBundle, { code: "invalid_dex" }),
  skipPumpfunCashbackClaim: QUOTE_OWN_PARAMS.skipPumpfunCashbackClaim,
};

const QuoteQuery = querySchema(QUOTE_PARAMS);

/** The code each parameter is refused with when missing or malformed (QuoteBadRequestCode). */
export const QUOTE_PARAM_CODES = paramCodes(QUOTE_PARAMS);

/** Registers `GET /quote`. */
export function getQuote(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.get(
    "/quote",
    {
      schema: {
        operationId: "quote_handler",
        tags: ["swap"],
        summary: "Quote an imperative swap (deprecated: use GET /order)",
        description:
          "The price of a spot swap; POST /swap or /swap-instructions turns the response into a transaction.",
        querystring: QuoteQuery,
        response: { 200: QuoteResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { sponsoredSwap, sponsorExec, destinationSwap, skipPumpfunCashbackClaim, ...shared } =
        request.query;
      parseParams(QUOTE_OWN_PARAMS, {
        sponsoredSwap,
        sponsorExec,
        destinationSwap,
        skipPumpfunCashbackClaim,
      });
      const order = parseOrderRequest(shared, book.venues(), { feeAccountLater: true });
      return sendJson(reply, JSON.stringify(await desk.quote(order)));
    },
  );
}
