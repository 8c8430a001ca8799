/**
 * GET /api/v1/orderbook/{market_ticker} — a market's bids on both sides, from the upstream exchange;
 * with `at`, the book as the venue recorded it at that moment (its archive).
 */

import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { integerParam, rfc3339MsParam } from "./params.js";

const Params = z.object({ market_ticker: z.string().min(1).max(160) });

/** The most price levels a side `depth` may ask for (the upstream exchange's own bound). */
export const MAX_DEPTH = 100;

/** `depth`: the best price levels per side, 1–100; 0 or none is every level (the upstream's meaning). */
export const OrderbookQuery = z.object({
  depth: integerParam("depth", 0, MAX_DEPTH)
    .optional()
    .meta({ description: `Best price levels per side, 1–${MAX_DEPTH}; 0 or none: every level` }),
  at: rfc3339MsParam("at").optional().meta({
    description:
      "A past moment (RFC 3339): the last book the venue recorded at or before it, from its archive; 404 when it recorded none",
  }),
});

/** The book now (relayed) or, with `at`, as the archive recorded it: one answer for both routes. */
export async function orderbookAnswer(
  ticker: string,
  query: z.infer<typeof OrderbookQuery>,
  relay: MarketRelay,
  history: ArchiveHistory | undefined,
): Promise<Buffer> {
  if (query.at === undefined) return relay.orderbook(ticker, query.depth);
  if (!history)
    throw new ApiError(
      "orderbook_not_found",
      "this venue keeps no archive (ARCHIVE=false), so no past books",
    );
  const book = await history.orderbookAt(ticker, query.at, query.depth);
  if (!book) {
    throw new ApiError(
      "orderbook_not_found",
      `the venue recorded no book of ${ticker} at or before ${new Date(query.at).toISOString()}`,
    );
  }
  return Buffer.from(JSON.stringify(book));
}

const Bids = z
  .record(z.string(), z.number().int())
  .meta({ description: 'Dollar price ("0.4200") → contracts' });
/** The reference's order book: bids only; the best YES ask is 1 − the best NO bid. */
export const Orderbook = z
  .object({ yes_bids: Bids, no_bids: Bids, sequence: z.number().int() })
  .meta({ id: "Orderbook" });

export function getOrderbook(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/orderbook/:market_ticker",
    {
      schema: {
        operationId: "orderbook",
        tags: ["Orderbook"],
        summary: "Get the order book of a market",
        params: Params,
        querystring: OrderbookQuery,
        response: { 200: Orderbook, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody },
      },
    },
    async (request, reply) => {
      const market = catalog.require().market(request.params.market_ticker);
      if (!market) throw new ApiError("market_not_found", `market ${request.params.market_ticker} not found`);
      return sendJson(reply, await orderbookAnswer(market.record.ticker, request.query, relay, history));
    },
  );
}
