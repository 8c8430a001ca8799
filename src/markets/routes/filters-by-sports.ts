/** GET /api/v1/filters_by_sports — scopes and competitions available per sport. */
import { z } from "zod";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const Response = z.object({
  filtersBySports: z.record(
    z.string(),
    z.object({ scopes: z.array(z.string()), competitions: z.array(z.string()) }),
  ),
  sportOrdering: z.array(z.string()),
});

export function filtersBySports(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/filters_by_sports",
    {
      schema: {
        operationId: "filters_by_sports",
        tags: ["Sports"],
        summary: "Filtering options per sport",
        response: { 200: Response },
      },
    },
    async (_request, reply) => sendJson(reply, catalog.require().filtersBySportsJson),
  );
}
