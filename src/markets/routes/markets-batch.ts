/** POST /api/v1/markets/batch — markets by tickers and/or mints, unknown ids skipped. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketEntry } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { MarketPage, marketPageJson } from "./list-markets.js";

const MAX_IDS = 100;
const Body = z
  .strictObject({
    tickers: z.array(z.string().max(160)).optional(),
    mints: z.array(z.string().max(64)).optional(),
  })
  .refine((body) => (body.tickers?.length ?? 0) + (body.mints?.length ?? 0) <= MAX_IDS, {
    error: `tickers and mints together take at most ${MAX_IDS} ids`,
  });

export function marketsBatch(app: ZodApp, catalog: CatalogHolder): void {
  app.post(
    "/markets/batch",
    {
      schema: {
        operationId: "markets_batch",
        tags: ["Markets"],
        summary: "Get multiple markets by tickers and/or mints",
        body: Body,
        response: { 200: MarketPage, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const found = new Set<MarketEntry>();
      for (const ticker of request.body.tickers ?? []) {
        const market = current.market(ticker);
        if (market) found.add(market);
      }
      for (const mint of request.body.mints ?? []) {
        const market = current.marketByMint(mint);
        if (market) found.add(market);
      }
      return sendJson(reply, marketPageJson(current, [...found], null));
    },
  );
}
