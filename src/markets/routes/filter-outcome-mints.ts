/** POST /api/v1/filter_outcome_mints — keeps the addresses that are outcome mints. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";

const MAX_ADDRESSES = 200;
const Body = z.strictObject({
  addresses: z
    .array(z.string().max(64))
    .max(MAX_ADDRESSES, { error: `addresses takes at most ${MAX_ADDRESSES} entries` }),
});
const Response = z.object({ outcomeMints: z.array(z.string()) });

export function filterOutcomeMints(app: ZodApp, catalog: CatalogHolder): void {
  app.post(
    "/filter_outcome_mints",
    {
      schema: {
        operationId: "filter_outcome_mints",
        tags: ["Markets"],
        summary: "Filter addresses down to outcome mints",
        body: Body,
        response: { 200: Response, 400: ErrorBody },
      },
    },
    async (request) => {
      const current = catalog.require();
      return { outcomeMints: request.body.addresses.filter((address) => current.isOutcomeMint(address)) };
    },
  );
}
