/** GET /api/v1/market/{ticker}/candlesticks — a market's candlesticks, relayed from the upstream. */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { CandleQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ ticker: z.string().min(1).max(160) });

export function getMarketCandlesticks(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/market/:ticker/candlesticks",
    {
      schema: {
        operationId: "market_candlesticks",
        tags: ["Candlesticks"],
        summary: "Get candlesticks of a market",
        params: Params,
        querystring: CandleQuery,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const market = current.market(request.params.ticker);
      if (!market) throw new ApiError("market_not_found", `market ${request.params.ticker} not found`);
      const ticker = market.record.ticker;
      const fromUpstream = () =>
        relay.marketCandlesticks(current.seriesTickerOf(market), ticker, request.query);
      return sendUpstream(
        reply,
        history
          ? await history.marketCandlesticks(ticker, request.query, fromUpstream)
          : await fromUpstream(),
      );
    },
  );
}
