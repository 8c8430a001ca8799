/** GET /api/v1/outcome_mints — every yes/no mint of the tokenized markets, on both settlement rails. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import { outcomeMintsOf } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { unixSecondsParam } from "./params.js";

const Query = z.object({
  minCloseTs: unixSecondsParam("minCloseTs")
    .optional()
    .meta({ description: "Only markets closing at or after" }),
});
const Response = z.object({ mints: z.array(z.string()) });

export function outcomeMints(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/outcome_mints",
    {
      schema: {
        operationId: "outcome_mints",
        tags: ["Markets"],
        summary: "List the outcome mints of tokenized markets",
        querystring: Query,
        response: { 200: Response, 400: ErrorBody },
      },
    },
    async (request) => {
      const minCloseTs = request.query.minCloseTs ?? 0;
      const mints = catalog
        .require()
        .markets.filter((m) => m.record.tokenized && m.record.closeTime >= minCloseTs)
        .flatMap(outcomeMintsOf);
      return { mints };
    },
  );
}
