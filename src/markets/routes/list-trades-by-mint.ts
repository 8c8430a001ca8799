/** GET /api/v1/trades/by-mint/{mint} — trades of the market owning a mint, newest first. */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { listedTrades, TradePage } from "./list-trades.js";
import { relayedResponses, TradesQuery } from "./relay-params.js";

const Params = z.object({ mint: z.string().min(1).max(64) });
const Query = z.object(TradesQuery);

export function listTradesByMint(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/trades/by-mint/:mint",
    {
      schema: {
        operationId: "trades_by_mint",
        tags: ["Trades"],
        summary: "Get list of trades for a market by mint address",
        params: Params,
        querystring: Query,
        response: relayedResponses(TradePage),
      },
    },
    async (request, reply) => {
      const market = catalog.require().marketByMint(request.params.mint);
      if (!market) throw new ApiError("market_not_found", `no market has the mint ${request.params.mint}`);
      const q = { ...request.query, ticker: market.record.ticker };
      return sendJson(reply, await listedTrades(q, relay, history));
    },
  );
}
