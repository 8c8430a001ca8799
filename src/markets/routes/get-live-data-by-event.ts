/**
 * GET /api/v1/live_data/by-event/{event_ticker} — the live data of every milestone of an event (the
 * upstream's milestones related to it, filtered), asked for in batches of 100.
 */
import { z } from "zod";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { MilestoneFilterQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ event_ticker: z.string().min(1).max(128) });
const Query = z.object(MilestoneFilterQuery);

export function getLiveDataByEvent(app: ZodApp, catalog: CatalogHolder, relay: MarketRelay): void {
  app.get(
    "/live_data/by-event/:event_ticker",
    {
      schema: {
        operationId: "live_data_by_event",
        tags: ["Live Data"],
        summary: "Get live data by event ticker",
        description:
          "Fetches all live data for an event by looking up its related milestones upstream and batching the live data requests.",
        params: Params,
        querystring: Query,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const ticker = request.params.event_ticker;
      if (!catalog.require().event(ticker))
        throw new ApiError("event_not_found", `event ${ticker} not found`);
      return sendUpstream(reply, await relay.liveDataByEvent(ticker, request.query));
    },
  );
}
