/** GET /api/v1/onchain-trades/by-market/{market_ticker} — the on-chain fills of one market's outcome tokens. */
import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import { outcomeMintsOf } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import type { OnchainTrades } from "../onchain-trades.js";
import { OnchainTradePageSchema, OnchainTradesQuery, onchainTradePage } from "./list-onchain-trades.js";

const Params = z.object({ market_ticker: z.string().min(1).max(160) });

export function listOnchainTradesByMarket(app: ZodApp, catalog: CatalogHolder, trades: OnchainTrades): void {
  app.get(
    "/onchain-trades/by-market/:market_ticker",
    {
      schema: {
        operationId: "onchain_trades_by_market",
        tags: ["Trades"],
        summary: "Get list of onchain fills for a market",
        description: "The on-chain fills of the market's yes and no tokens, on every settlement rail.",
        params: Params,
        querystring: OnchainTradesQuery,
        response: { 200: OnchainTradePageSchema, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const ticker = request.params.market_ticker;
      const market = catalog.require().market(ticker);
      if (!market) throw new ApiError("market_not_found", `market ${ticker} not found`);
      return onchainTradePage(trades, catalog, request.query, outcomeMintsOf(market));
    },
  );
}
