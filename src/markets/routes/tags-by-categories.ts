/** GET /api/v1/tags_by_categories — the tags of each series category. */
import { z } from "zod";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const Response = z.object({ tagsByCategories: z.record(z.string(), z.array(z.string())) });

export function tagsByCategories(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/tags_by_categories",
    {
      schema: {
        operationId: "tags_by_categories",
        tags: ["Tags"],
        summary: "Tags grouped by series category",
        response: { 200: Response },
      },
    },
    async (_request, reply) => sendJson(reply, catalog.require().tagsByCategoriesJson),
  );
}
