/** GET /api/v1/search — events whose tickers, titles or markets match every query token. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import { eventMentions } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { EventPage, eventPageJson } from "./list-events.js";
import { booleanFlag, paging, sorting, statusParam } from "./params.js";

const Query = z.object({
  q: z
    .string({ error: "q is required" })
    .max(256, { error: "q must be at most 256 characters" })
    // Control characters can never match and NUL separates the searchable fields.
    .transform((q) => q.replace(/[\p{Cc}]/gu, " ").trim())
    .refine((q) => q.length > 0, { error: "q must contain at least one search term" }),
  ...paging,
  ...sorting,
  withNestedMarkets: booleanFlag.optional().default(false),
  withMarketAccounts: booleanFlag
    .optional()
    .default(true)
    .meta({ description: "false leaves nested markets' accounts empty ({}); default true" }),
  status: statusParam,
  // The reference's other entity types would change the answer's shape, which is always events here.
  entityType: z
    .string()
    .max(16, { error: "entityType must be events" })
    .refine((value) => value === "events", {
      error: (issue) =>
        `entityType ${String(issue.input)} is not offered: search answers events (with their markets on withNestedMarkets=true); use entityType=events or leave it out`,
    })
    .optional()
    .meta({ description: "Only events is offered" }),
});

export function search(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/search",
    {
      schema: {
        operationId: "search",
        tags: ["Search"],
        summary: "Search events and their markets",
        description:
          "Every whitespace-separated token must match (case-insensitively) the event ticker, series ticker, " +
          "title or subtitle, or a nested market's ticker, title or yes/no subtitle. Ordered by volume unless sort is given.",
        querystring: Query,
        response: { 200: EventPage, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const tokens = q.q.toLowerCase().split(/\s+/);
      const current = catalog.require();
      const events = current
        // Unsorted searches rank by volume: the liveliest matches first, ties in ticker order.
        .sortedEvents(q.sort ?? "volume", q.order ?? "desc")
        .filter(
          (event) =>
            (q.status === undefined || event.statuses.has(q.status)) &&
            tokens.every((token) => eventMentions(event, token)),
        );
      return sendJson(reply, eventPageJson(current, events, q));
    },
  );
}
