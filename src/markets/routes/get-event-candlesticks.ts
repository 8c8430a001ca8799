/** GET /api/v1/event/{ticker}/candlesticks — candlesticks of every market of an event, relayed. */
import { z } from "zod";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { CandleQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ ticker: z.string().min(1).max(128) });

export function getEventCandlesticks(app: ZodApp, catalog: CatalogHolder, relay: MarketRelay): void {
  app.get(
    "/event/:ticker/candlesticks",
    {
      schema: {
        operationId: "event_candlesticks",
        tags: ["Candlesticks"],
        summary: "Get candlesticks of every market of an event",
        params: Params,
        querystring: CandleQuery,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const event = catalog.require().event(request.params.ticker);
      if (!event) throw new ApiError("event_not_found", `event ${request.params.ticker} not found`);
      return sendUpstream(
        reply,
        await relay.eventCandlesticks(event.record.seriesTicker, event.record.ticker, request.query),
      );
    },
  );
}
