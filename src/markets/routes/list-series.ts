/** GET /api/v1/series — every series, optionally filtered. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { Series } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import { joinJson } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { booleanFlag, seriesFilters, seriesMatches, statusParam } from "./params.js";

const Query = z.object({
  ...seriesFilters,
  isInitialized: booleanFlag.optional(),
  status: statusParam,
});

export function listSeries(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/series",
    {
      schema: {
        operationId: "series",
        tags: ["Series"],
        summary: "List series",
        querystring: Query,
        response: { 200: z.object({ series: z.array(Series) }), 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const series = catalog
        .require()
        .series.filter(
          (entry) =>
            seriesMatches(entry.series, q) &&
            (q.isInitialized === undefined || entry.isInitialized === q.isInitialized) &&
            (q.status === undefined || entry.statuses.has(q.status)),
        );
      return sendJson(
        reply,
        joinJson(
          '{"series":[',
          series.map((entry) => entry.json),
          "]}",
        ),
      );
    },
  );
}
