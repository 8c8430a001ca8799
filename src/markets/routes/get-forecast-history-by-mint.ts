/**
 * GET /api/v1/event/by-mint/{mint}/forecast_percentile_history — the forecast history of the event
 * owning a market mint (ledger, yes or no), relayed byte for byte.
 */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { ForecastQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ mint: z.string().min(1).max(64) });

export function getForecastHistoryByMint(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/event/by-mint/:mint/forecast_percentile_history",
    {
      schema: {
        operationId: "forecast_percentile_history_by_mint",
        tags: ["Events"],
        summary: "Get event forecast percentile history by market mint",
        params: Params,
        querystring: ForecastQuery,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const market = current.marketByMint(request.params.mint);
      if (!market) throw new ApiError("event_not_found", `no market has the mint ${request.params.mint}`);
      const answer = await relay.forecastHistory(
        current.seriesTickerOf(market),
        market.record.eventTicker,
        request.query,
      );
      return sendUpstream(
        reply,
        history ? await history.forecastHistory(market.record.eventTicker, request.query, answer) : answer,
      );
    },
  );
}
