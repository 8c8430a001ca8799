/** GET /api/v1/market/{ticker} — one market, unwrapped. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { Market } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const Params = z.object({ ticker: z.string().min(1).max(160) });

export function getMarket(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/market/:ticker",
    {
      schema: {
        operationId: "market",
        tags: ["Markets"],
        summary: "Get a market by ticker",
        params: Params,
        response: { 200: Market, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const market = current.market(request.params.ticker);
      if (!market) throw new ApiError("market_not_found", `market ${request.params.ticker} not found`);
      return sendJson(reply, current.marketJson(market));
    },
  );
}
