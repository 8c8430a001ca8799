/** GET /api/v1/onchain-trades/by-event/{event_ticker} — the on-chain fills of every market of one event. */
import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import { outcomeMintsOf } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import type { OnchainTrades } from "../onchain-trades.js";
import { OnchainTradePageSchema, OnchainTradesQuery, onchainTradePage } from "./list-onchain-trades.js";

const Params = z.object({ event_ticker: z.string().min(1).max(128) });

export function listOnchainTradesByEvent(app: ZodApp, catalog: CatalogHolder, trades: OnchainTrades): void {
  app.get(
    "/onchain-trades/by-event/:event_ticker",
    {
      schema: {
        operationId: "onchain_trades_by_event",
        tags: ["Trades"],
        summary: "Get list of onchain fills for an event",
        description: "The on-chain fills of the outcome tokens of every market of the event.",
        params: Params,
        querystring: OnchainTradesQuery,
        response: { 200: OnchainTradePageSchema, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const ticker = request.params.event_ticker;
      const event = catalog.require().event(ticker);
      if (!event) throw new ApiError("event_not_found", `event ${ticker} not found`);
      return onchainTradePage(trades, catalog, request.query, event.markets.flatMap(outcomeMintsOf));
    },
  );
}
