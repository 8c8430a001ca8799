/** GET /api/v1/markets — markets, filtered, sorted and paged by offset cursor. */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { Market } from "../../contract/markets.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { Catalog, MarketEntry } from "../catalog.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { booleanFlag, commaList, page, paging, sorting, statusParam, unixSecondsParam } from "./params.js";

/** The most tickers one `/markets` call may name, as many as one `/markets/batch` call may. */
export const MAX_TICKERS = 100;

const Query = z.object({
  ...paging,
  ...sorting,
  isInitialized: booleanFlag.optional(),
  status: statusParam,
  eventTicker: z.string().min(1).max(128).optional(),
  seriesTicker: z.string().min(1).max(128).optional(),
  minCloseTs: unixSecondsParam("minCloseTs").optional(),
  maxCloseTs: unixSecondsParam("maxCloseTs").optional(),
  tickers: commaList("tickers", MAX_TICKERS, 160)
    .optional()
    .meta({ description: `Comma-separated market tickers (at most ${MAX_TICKERS}); only those markets` }),
});

export const MarketPage = z.object({ markets: z.array(Market), cursor: z.number().int().nullable() });

/** Serializes a list of markets as `{markets, cursor}`. */
export function marketPageJson(
  catalog: Catalog,
  markets: readonly MarketEntry[],
  cursor: number | null,
): Buffer {
  return catalog.marketsJson('{"markets":[', markets, `],"cursor":${cursor}}`);
}

export function listMarkets(app: ZodApp, catalog: CatalogHolder): void {
  app.get(
    "/markets",
    {
      schema: {
        operationId: "markets",
        tags: ["Markets"],
        summary: "List markets",
        querystring: Query,
        response: { 200: MarketPage, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const current = catalog.require();
      const sorted = current.sortedMarkets(q.sort, q.order);
      const conditions: ((m: MarketEntry) => boolean)[] = [];
      if (q.tickers !== undefined) {
        const tickers = new Set(q.tickers);
        conditions.push((m) => tickers.has(m.record.ticker));
      }
      if (q.isInitialized !== undefined) conditions.push((m) => m.record.tokenized === q.isInitialized);
      if (q.status !== undefined) conditions.push((m) => m.record.status === q.status);
      if (q.eventTicker !== undefined) conditions.push((m) => m.record.eventTicker === q.eventTicker);
      if (q.seriesTicker !== undefined) conditions.push((m) => current.seriesTickerOf(m) === q.seriesTicker);
      if (q.minCloseTs !== undefined) conditions.push((m) => m.record.closeTime >= (q.minCloseTs ?? 0));
      if (q.maxCloseTs !== undefined) conditions.push((m) => m.record.closeTime <= (q.maxCloseTs ?? 0));
      const markets = conditions.length ? sorted.filter((m) => conditions.every((test) => test(m))) : sorted;
      const { items, next } = page(markets, q.cursor, q.limit);
      return sendJson(reply, marketPageJson(current, items, next));
    },
  );
}
