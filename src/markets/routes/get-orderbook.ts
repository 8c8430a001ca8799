/** GET /api/v1/orderbook/{market_ticker} — a market's bids on both sides, from the upstream exchange. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { integerParam } from "./params.js";

const Params = z.object({ market_ticker: z.string().min(1).max(160) });

/** The most price levels a side `depth` may ask for (the upstream exchange's own bound). */
export const MAX_DEPTH = 100;

/** `depth`: the best price levels per side, 1–100; 0 or none is every level (the upstream's meaning). */
export const OrderbookQuery = z.object({
  depth: integerParam("depth", 0, MAX_DEPTH)
    .optional()
    .meta({ description: `Best price levels per side, 1–${MAX_DEPTH}; 0 or none: every level` }),
});

const Bids = z
  .record(z.string(), z.number().int())
  .meta({ description: 'Dollar price ("0.4200") → contracts' });
/** The reference's order book: bids only; the best YES ask is 1 − the best NO bid. */
export const Orderbook = z
  .object({ yes_bids: Bids, no_bids: Bids, sequence: z.number().int() })
  .meta({ id: "Orderbook" });

export function getOrderbook(app: ZodApp, catalog: CatalogHolder, relay: MarketRelay): void {
  app.get(
    "/orderbook/:market_ticker",
    {
      schema: {
        operationId: "orderbook",
        tags: ["Orderbook"],
        summary: "Get the order book of a market",
        params: Params,
        querystring: OrderbookQuery,
        response: { 200: Orderbook, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody },
      },
    },
    async (request, reply) => {
      const market = catalog.require().market(request.params.market_ticker);
      if (!market) throw new ApiError("market_not_found", `market ${request.params.market_ticker} not found`);
      return sendJson(reply, await relay.orderbook(market.record.ticker, request.query.depth));
    },
  );
}
