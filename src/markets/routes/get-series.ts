/** GET /api/v1/series/{ticker} — one series. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { Series } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const Params = z.object({ ticker: z.string().min(1).max(128) });

export function getSeries(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/series/:ticker",
    {
      schema: {
        operationId: "series_by_ticker",
        tags: ["Series"],
        summary: "Get a series by ticker",
        params: Params,
        response: { 200: Series, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const entry = catalog.require().seriesEntry(request.params.ticker);
      if (!entry) throw new ApiError("series_not_found", `series ${request.params.ticker} not found`);
      return sendJson(reply, entry.json);
    },
  );
}
