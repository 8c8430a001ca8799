/**
 * GET /api/v1/event/{series_ticker}/{event_id}/forecast_percentile_history — the upstream's forecast
 * percentile history of an event, relayed byte for byte (interface operation 1); periods older than
 * the upstream keeps come from the venue's archive, in front of the upstream's.
 */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { ForecastQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({
  series_ticker: z.string().min(1).max(128),
  event_id: z.string().min(1).max(128),
});

export function getForecastHistory(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/event/:series_ticker/:event_id/forecast_percentile_history",
    {
      schema: {
        operationId: "forecast_percentile_history",
        tags: ["Events"],
        summary: "Get event forecast percentile history by event ticker",
        description:
          "Historical raw and formatted forecast numbers of an event, relayed from the upstream exchange.",
        params: Params,
        querystring: ForecastQuery,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const { series_ticker: seriesTicker, event_id: eventTicker } = request.params;
      const event = catalog.require().event(eventTicker);
      if (!event || event.record.seriesTicker !== seriesTicker) {
        throw new ApiError("event_not_found", `event ${eventTicker} not found in series ${seriesTicker}`);
      }
      const answer = await relay.forecastHistory(seriesTicker, eventTicker, request.query);
      return sendUpstream(
        reply,
        history ? await history.forecastHistory(eventTicker, request.query, answer) : answer,
      );
    },
  );
}
