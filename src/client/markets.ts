/** Typed client for the prediction-market data API (`/api/v1`). */
import type { Event, ForecastHistory, Market, Series } from "../contract/markets.js";
import { ApiTransport, type ClientOptions, type QueryValue } from "./http.js";

export type { ForecastHistory } from "../contract/markets.js";

export { type ClientOptions, OddsgateApiError } from "./http.js";

export type SortKey = "volume" | "volume24h" | "liquidity" | "openInterest" | "startDate";

export interface PageOptions {
  limit?: number;
  cursor?: number;
  sort?: SortKey;
  order?: "asc" | "desc";
}

export interface ListEventsOptions extends PageOptions {
  withNestedMarkets?: boolean;
  seriesTickers?: string[];
  isInitialized?: boolean;
  status?: Market["status"];
}

export interface ListMarketsOptions extends PageOptions {
  isInitialized?: boolean;
  status?: Market["status"];
  eventTicker?: string;
  seriesTicker?: string;
  minCloseTs?: number;
  maxCloseTs?: number;
}

export interface SearchOptions extends PageOptions {
  withNestedMarkets?: boolean;
}

export interface ListSeriesOptions {
  category?: string;
  tags?: string[];
  isInitialized?: boolean;
  status?: Market["status"];
}

export interface EventPage {
  events: Event[];
  cursor: number | null;
}

export interface MarketPage {
  markets: Market[];
  cursor: number | null;
}

export interface ForecastOptions {
  /** Basis points, 0–10000; at most 10. */
  percentiles: number[];
  startTs: number;
  endTs: number;
  /** Minutes: 0 (5-second buckets), 1, 60 or 1440. */
  periodInterval: 0 | 1 | 60 | 1440;
}

export interface CandleOptions {
  startTs: number;
  endTs: number;
  periodInterval: 1 | 60 | 1440;
}

export interface TradesOptions {
  ticker?: string;
  limit?: number;
  cursor?: string;
  minTs?: number;
  maxTs?: number;
}

export interface Trade {
  tradeId: string;
  ticker: string;
  price: number;
  count: number;
  countFp: string;
  yesPrice: number;
  noPrice: number;
  yesPriceDollars: string;
  noPriceDollars: string;
  takerSide: "yes" | "no";
  createdTime: number;
}

export interface Orderbook {
  yes_bids: Record<string, number>;
  no_bids: Record<string, number>;
  sequence: number;
}

export class MarketsClient {
  private readonly transport: ApiTransport;

  constructor(options: ClientOptions) {
    this.transport = new ApiTransport(options, "/api/v1");
  }

  /** GET /api/v1/event/{ticker}. */
  getEvent(ticker: string, options: { withNestedMarkets?: boolean } = {}): Promise<Event> {
    return this.get(`/event/${encodeURIComponent(ticker)}`, options);
  }

  /** GET /api/v1/events: one page. */
  listEvents(options: ListEventsOptions = {}): Promise<EventPage> {
    return this.get("/events", { ...options });
  }

  /** Walks every page of /events, yielding each event once. */
  async *allEvents(options: Omit<ListEventsOptions, "cursor"> = {}): AsyncGenerator<Event> {
    let cursor: number | null = 0;
    while (cursor !== null) {
      const page: EventPage = await this.listEvents({ ...options, cursor });
      yield* page.events;
      cursor = page.cursor;
    }
  }

  /** GET /api/v1/market/{ticker}. */
  getMarket(ticker: string): Promise<Market> {
    return this.get(`/market/${encodeURIComponent(ticker)}`, {});
  }

  /** GET /api/v1/market/by-mint/{mint}. */
  getMarketByMint(mint: string): Promise<Market> {
    return this.get(`/market/by-mint/${encodeURIComponent(mint)}`, {});
  }

  /** GET /api/v1/markets: one page. */
  listMarkets(options: ListMarketsOptions = {}): Promise<MarketPage> {
    return this.get("/markets", { ...options });
  }

  /** POST /api/v1/markets/batch. */
  marketsBatch(ids: { tickers?: string[]; mints?: string[] }): Promise<MarketPage> {
    return this.post("/markets/batch", ids);
  }

  /** GET /api/v1/outcome_mints. */
  outcomeMints(options: { minCloseTs?: number } = {}): Promise<{ mints: string[] }> {
    return this.get("/outcome_mints", options);
  }

  /** POST /api/v1/filter_outcome_mints. */
  filterOutcomeMints(addresses: string[]): Promise<{ outcomeMints: string[] }> {
    return this.post("/filter_outcome_mints", { addresses });
  }

  /** GET /api/v1/series. */
  listSeries(options: ListSeriesOptions = {}): Promise<{ series: Series[] }> {
    return this.get("/series", { ...options });
  }

  /** GET /api/v1/series/{ticker}. */
  getSeries(ticker: string): Promise<Series> {
    return this.get(`/series/${encodeURIComponent(ticker)}`, {});
  }

  /** GET /api/v1/tags_by_categories. */
  tagsByCategories(): Promise<{ tagsByCategories: Record<string, string[]> }> {
    return this.get("/tags_by_categories", {});
  }

  /** GET /api/v1/filters_by_sports. */
  filtersBySports(): Promise<{
    filtersBySports: Record<string, { scopes: string[]; competitions: string[] }>;
    sportOrdering: string[];
  }> {
    return this.get("/filters_by_sports", {});
  }

  /** GET /api/v1/search. */
  search(q: string, options: SearchOptions = {}): Promise<EventPage> {
    return this.get("/search", { q, ...options });
  }

  /** GET /api/v1/event/{series}/{event}/forecast_percentile_history (the upstream's body). */
  forecastHistory(
    seriesTicker: string,
    eventTicker: string,
    options: ForecastOptions,
  ): Promise<ForecastHistory> {
    return this.get(
      `/event/${encodeURIComponent(seriesTicker)}/${encodeURIComponent(eventTicker)}/forecast_percentile_history`,
      { ...options },
    );
  }

  /** GET /api/v1/event/by-mint/{mint}/forecast_percentile_history. */
  forecastHistoryByMint(mint: string, options: ForecastOptions): Promise<ForecastHistory> {
    return this.get(`/event/by-mint/${encodeURIComponent(mint)}/forecast_percentile_history`, { ...options });
  }

  /** GET /api/v1/orderbook/{ticker}. */
  orderbook(ticker: string): Promise<Orderbook> {
    return this.get(`/orderbook/${encodeURIComponent(ticker)}`, {});
  }

  /** GET /api/v1/orderbook/by-mint/{mint}. */
  orderbookByMint(mint: string): Promise<Orderbook> {
    return this.get(`/orderbook/by-mint/${encodeURIComponent(mint)}`, {});
  }

  /** GET /api/v1/trades: one page, newest first. */
  trades(options: TradesOptions = {}): Promise<{ trades: Trade[]; cursor: string | null }> {
    return this.get("/trades", { ...options });
  }

  /** GET /api/v1/trades/by-mint/{mint}. */
  tradesByMint(
    mint: string,
    options: Omit<TradesOptions, "ticker"> = {},
  ): Promise<{ trades: Trade[]; cursor: string | null }> {
    return this.get(`/trades/by-mint/${encodeURIComponent(mint)}`, { ...options });
  }

  /** GET /api/v1/market/{ticker}/candlesticks (the upstream's body). */
  marketCandlesticks(
    ticker: string,
    options: CandleOptions,
  ): Promise<{ ticker: string; candlesticks: unknown[] }> {
    return this.get(`/market/${encodeURIComponent(ticker)}/candlesticks`, { ...options });
  }

  /** GET /api/v1/event/{ticker}/candlesticks (the upstream's body). */
  eventCandlesticks(
    ticker: string,
    options: CandleOptions,
  ): Promise<{ market_tickers: string[]; market_candlesticks: unknown[][]; adjusted_end_ts: number }> {
    return this.get(`/event/${encodeURIComponent(ticker)}/candlesticks`, { ...options });
  }

  private get<T>(path: string, query: Record<string, QueryValue>): Promise<T> {
    return this.transport.get(path, query);
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    return this.transport.post(path, body);
  }
}
