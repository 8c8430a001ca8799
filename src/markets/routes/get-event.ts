/** GET /api/v1/event/{event_id} — one event, optionally with its markets (interface operation 3). */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { Event } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { booleanFlag } from "./params.js";

const Params = z.object({ event_id: z.string().min(1).max(128) });
const Query = z.object({
  withNestedMarkets: booleanFlag
    .optional()
    .default(false)
    .meta({ description: "Include the event's markets" }),
});

export function getEvent(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/event/:event_id",
    {
      schema: {
        operationId: "event",
        tags: ["Events"],
        summary: "Get a specific event",
        params: Params,
        querystring: Query,
        response: { 200: Event, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const event = current.event(request.params.event_id);
      if (!event) throw new ApiError("event_not_found", `event ${request.params.event_id} not found`);
      return sendJson(reply, current.eventJson(event, request.query.withNestedMarkets));
    },
  );
}
