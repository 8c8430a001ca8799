/**
 * GET /api/v1/live_data/by-mint/{mint} — the live data of the event owning a market mint (ledger, yes
 * or no), as by event.
 */
import { z } from "zod";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { MilestoneFilterQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ mint: z.string().min(1).max(64) });
const Query = z.object(MilestoneFilterQuery);

export function getLiveDataByMint(app: ZodApp, catalog: CatalogHolder, relay: MarketRelay): void {
  app.get(
    "/live_data/by-mint/:mint",
    {
      schema: {
        operationId: "live_data_by_mint",
        tags: ["Live Data"],
        summary: "Get live data by market mint",
        description: "Live data of the event owning a market mint (ledger or outcome), as by event.",
        params: Params,
        querystring: Query,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const market = catalog.require().marketByMint(request.params.mint);
      if (!market) throw new ApiError("event_not_found", `no market has the mint ${request.params.mint}`);
      return sendUpstream(reply, await relay.liveDataByEvent(market.record.eventTicker, request.query));
    },
  );
}
