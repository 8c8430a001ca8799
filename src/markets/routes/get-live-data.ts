/**
 * GET /api/v1/live_data — the upstream's live data of up to 100 milestones by id (scores, clocks,
 * readings), relayed byte for byte.
 */
import { z } from "zod";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { milestoneIdsParam, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Query = z.object({ milestoneIds: milestoneIdsParam });

export function getLiveData(app: ZodApp, _catalog: CatalogHolder, relay: MarketRelay): void {
  app.get(
    "/live_data",
    {
      schema: {
        operationId: "live_data",
        tags: ["Live Data"],
        summary: "Get live data from Kalshi",
        description:
          "Live data of milestones by id, relayed from the upstream exchange: `{live_datas: [{type, details, milestone_id}]}`.",
        querystring: Query,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => sendUpstream(reply, await relay.liveData(request.query.milestoneIds)),
  );
}
