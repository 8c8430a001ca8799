/** GET /api/v1/trades — the exchange's trade tape, newest first, optionally for one market. */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { MarketRelay, TradesQuery as TradeListing } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { relayedResponses, TradesQuery } from "./relay-params.js";

const Query = z.object({ ...TradesQuery, ticker: z.string().min(1).max(160).optional() });

export const Trade = z
  .object({
    tradeId: z.string(),
    ticker: z.string(),
    price: z.number().int().min(0).max(100),
    count: z.number().int(),
    countFp: z.string(),
    yesPrice: z.number().int().min(0).max(100),
    noPrice: z.number().int().min(0).max(100),
    yesPriceDollars: z.string(),
    noPriceDollars: z.string(),
    takerSide: z.enum(["yes", "no"]),
    createdTime: z.number().int(),
  })
  .meta({ id: "Trade" });
export const TradePage = z.object({ trades: z.array(Trade), cursor: z.string().nullable() });

export function listTrades(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/trades",
    {
      schema: {
        operationId: "trades",
        tags: ["Trades"],
        summary: "Get trades",
        querystring: Query,
        response: relayedResponses(TradePage),
      },
    },
    async (request, reply) => {
      const { ticker } = request.query;
      if (ticker !== undefined && !catalog.require().market(ticker)) {
        throw new ApiError("market_not_found", `market ${ticker} not found`);
      }
      return sendJson(reply, await listedTrades(request.query, relay, history));
    },
  );
}

/** The upstream's trades, then (with an archive) the recorded ones older than it keeps. */
export function listedTrades(q: TradeListing, relay: MarketRelay, history?: ArchiveHistory): Promise<Buffer> {
  return history ? history.trades(q, (upstreamQuery) => relay.trades(upstreamQuery)) : relay.trades(q);
}
