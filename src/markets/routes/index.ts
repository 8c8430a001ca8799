/** The prediction-market data API (contract §5), mounted under /api/v1 with its own OpenAPI document. */
import type { FastifyPluginAsync } from "fastify";
import type { ArchiveHistory } from "../../archive/history.js";
import type { Config } from "../../config.js";
import { registerOpenApi } from "../../http/openapi.js";
import type { ZodApp } from "../../http/types.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import type { OnchainTrades } from "../onchain-trades.js";
import type { MarketStreamHub } from "../ws.js";
import { filterOutcomeMints } from "./filter-outcome-mints.js";
import { filtersBySports } from "./filters-by-sports.js";
import { getEvent } from "./get-event.js";
import { getEventCandlesticks } from "./get-event-candlesticks.js";
import { getForecastHistory } from "./get-forecast-history.js";
import { getForecastHistoryByMint } from "./get-forecast-history-by-mint.js";
import { getLiveData } from "./get-live-data.js";
import { getLiveDataByEvent } from "./get-live-data-by-event.js";
import { getLiveDataByMint } from "./get-live-data-by-mint.js";
import { getMarket } from "./get-market.js";
import { getMarketByMint } from "./get-market-by-mint.js";
import { getMarketCandlesticks } from "./get-market-candlesticks.js";
import { getMarketCandlesticksByMint } from "./get-market-candlesticks-by-mint.js";
import { getOrderbook } from "./get-orderbook.js";
import { getOrderbookByMint } from "./get-orderbook-by-mint.js";
import { getSeries } from "./get-series.js";
import { listEvents } from "./list-events.js";
import { listMarkets } from "./list-markets.js";
import { listOnchainTrades } from "./list-onchain-trades.js";
import { listOnchainTradesByEvent } from "./list-onchain-trades-by-event.js";
import { listOnchainTradesByMarket } from "./list-onchain-trades-by-market.js";
import { listSeries } from "./list-series.js";
import { listTrades } from "./list-trades.js";
import { listTradesByMint } from "./list-trades-by-mint.js";
import { marketStream } from "./market-stream.js";
import { marketsBatch } from "./markets-batch.js";
import { outcomeMints } from "./outcome-mints.js";
import { search } from "./search.js";
import { tagsByCategories } from "./tags-by-categories.js";

const ROUTES = [
  getEvent,
  listEvents,
  getMarket,
  getMarketByMint,
  listMarkets,
  marketsBatch,
  outcomeMints,
  filterOutcomeMints,
  listSeries,
  getSeries,
  tagsByCategories,
  filtersBySports,
  search,
];

/** Operations answered by the upstream exchange through the relay. */
const RELAY_ROUTES = [
  getForecastHistory,
  getForecastHistoryByMint,
  getOrderbook,
  getOrderbookByMint,
  listTrades,
  listTradesByMint,
  getMarketCandlesticks,
  getMarketCandlesticksByMint,
  getEventCandlesticks,
  getLiveData,
  getLiveDataByEvent,
  getLiveDataByMint,
];

/** Operations answered from the venue's own settlement records in storage. */
const ONCHAIN_TRADE_ROUTES = [listOnchainTrades, listOnchainTradesByMarket, listOnchainTradesByEvent];

/**
 * Registers every prediction-market route and `/openapi.json` in one encapsulated context; the
 * relayed operations and the `/ws` stream only with the upstream behind them, the on-chain trades
 * only with their store.
 */
export function registerMarketsApi(
  catalog: CatalogHolder,
  mode: Config["MODE"],
  relay?: MarketRelay,
  stream?: MarketStreamHub,
  onchainTrades?: OnchainTrades,
  history?: ArchiveHistory,
): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as ZodApp;
    await registerOpenApi(
      app,
      {
        title: "prediction-markets-api",
        description:
          "Oddsgate prediction-market data: events, markets, series and search, plus forecast history, order books, trades and candlesticks relayed from the upstream exchange.",
      },
      mode,
    );
    for (const route of ROUTES) route(app, catalog);
    if (relay) for (const route of RELAY_ROUTES) route(app, catalog, relay, history);
    if (relay && stream) marketStream(app, stream);
    if (onchainTrades) for (const route of ONCHAIN_TRADE_ROUTES) route(app, catalog, onchainTrades);
  };
}
