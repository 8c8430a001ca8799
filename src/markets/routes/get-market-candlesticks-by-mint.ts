/** GET /api/v1/market/by-mint/{mint}/candlesticks — candlesticks of the market owning a mint. */
import { z } from "zod";
import type { ArchiveHistory } from "../../archive/history.js";
import { ApiError } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import { CandleQuery, RELAYED_RESPONSES, sendUpstream } from "./relay-params.js";

const Params = z.object({ mint: z.string().min(1).max(64) });

export function getMarketCandlesticksByMint(
  app: ZodApp,
  catalog: CatalogHolder,
  relay: MarketRelay,
  history?: ArchiveHistory,
): void {
  app.get(
    "/market/by-mint/:mint/candlesticks",
    {
      schema: {
        operationId: "market_candlesticks_by_mint",
        tags: ["Candlesticks"],
        summary: "Get candlesticks of a market by any of its mints (ledger or outcome)",
        params: Params,
        querystring: CandleQuery,
        response: RELAYED_RESPONSES,
      },
    },
    async (request, reply) => {
      const current = catalog.require();
      const market = current.marketByMint(request.params.mint);
      if (!market) throw new ApiError("market_not_found", `no market has the mint ${request.params.mint}`);
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
