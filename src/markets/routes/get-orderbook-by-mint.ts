/** GET /api/v1/orderbook/by-mint/{mint} — the order book of the market owning a mint. */

import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { Orderbook, OrderbookQuery, orderbookAnswer } from "./get-orderbook.js";

const Params = z.object({ mint: z.string().min(1).max(64) });

export function getOrderbookByMint(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/orderbook/by-mint/:mint",
    {
      schema: {
        operationId: "orderbook_by_mint",
        tags: ["Orderbook"],
        summary: "Get the order book of a market by any of its mints (ledger or outcome)",
        params: Params,
        querystring: OrderbookQuery,
        response: { 200: Orderbook, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody },
      },
    },
    async (request, reply) => {
      const market = catalog.require().marketByMint(request.params.mint);
      if (!market) throw new ApiError("market_not_found", `no market has the mint ${request.params.mint}`);
      return sendJson(reply, await orderbookAnswer(market.record.ticker, request.query, relay, history));
    },
  );
}
