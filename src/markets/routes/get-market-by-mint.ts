/** GET /api/v1/market/by-mint/{mint} — the market owning a ledger, yes or no mint. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { Market } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const Params = z.object({ mint: z.string().min(1).max(64) });

export function getMarketByMint(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/market/by-mint/:mint",
    {
      schema: {
        operationId: "market_by_mint",
        tags: ["Markets"],
        summary: "Get a market by any of its mints (ledger or outcome)",
        params: Params,
        response: { 200: Market, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const market = current.marketByMint(request.params.mint);
      if (!market) throw new ApiError("market_not_found", `no market has the mint ${request.params.mint}`);
      return sendJson(reply, current.marketJson(market));
    },
  );
}
