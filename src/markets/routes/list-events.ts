/** GET /api/v1/events — events, filtered, sorted and paged by offset cursor. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { Event } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import { type Catalog, type EventEntry, joinJson } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import {
  booleanFlag,
  commaList,
  page,
  paging,
  seriesFilters,
  seriesMatches,
  sorting,
  statusParam,
} from "./params.js";

export const ListEventsQuery = z.object({
  ...paging,
  ...sorting,
  withNestedMarkets: booleanFlag.optional().default(false),
  seriesTickers: commaList("seriesTickers", 25).optional(),
  isInitialized: booleanFlag.optional(),
  status: statusParam,
  ...seriesFilters,
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;

export const EventPage = z.object({ events: z.array(Event), cursor: z.number().int().nullable() });

/** Serializes a page of events as `{events, cursor}`. */
export function eventPageJson(
  catalog: Catalog,
  events: readonly EventEntry[],
  query: { cursor: number; limit: number; withNestedMarkets: boolean; withMarketAccounts?: boolean },
): Buffer {
  const { items, next } = page(events, query.cursor, query.limit);
  const bodies = items.map((event) =>
    catalog.eventJson(event, query.withNestedMarkets, query.withMarketAccounts),
  );
  return joinJson('{"events":[', bodies, `],"cursor":${next}}`);
}

export function listEvents(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/events",
    {
      schema: {
        operationId: "events",
        tags: ["Events"],
        summary: "List events",
        querystring: ListEventsQuery,
        response: { 200: EventPage, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const current = catalog.require();
      const series = query.seriesTickers ? new Set(query.seriesTickers) : undefined;
      const sorted = current.sortedEvents(query.sort, query.order);
      const bySeries = query.category !== undefined || query.tags !== undefined;
      const filtered =
        series !== undefined || query.isInitialized !== undefined || query.status !== undefined || bySeries;
      const events = filtered
        ? sorted.filter(
            (event) =>
              (series === undefined || series.has(event.record.seriesTicker)) &&
              (query.isInitialized === undefined || event.isInitialized === query.isInitialized) &&
              (query.status === undefined || event.statuses.has(query.status)) &&
              // An event has no category or tags of its own: its series' are its.
              (!bySeries || seriesMatches(current.seriesEntry(event.record.seriesTicker)?.series, query)),
          )
        : sorted;
      return sendJson(reply, eventPageJson(current, events, query));
    },
  );
}
