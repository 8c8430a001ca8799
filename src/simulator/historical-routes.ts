/**
 * Kalshi trade-api v2's historical tier over the simulator: GetHistoricalCutoff, GetHistoricalMarkets,
 * GetHistoricalMarket, GetMarketCandlesticksHistorical and GetTradesHistorical. It serves exactly what
 * the live routes leave out: markets settled before the cutoff, their candles, and older trades.
 */
import type { FastifyInstance } from "fastify";
import { iso } from "./kalshi-json.js";
import { candlesticks, historicalCandle } from "./market-data.js";
import {
  CandleQuery,
  lookups,
  MarketListQuery,
  marketFilter,
  offsetOf,
  page,
  parse,
  type SimulatorContext,
  type TapePositions,
  TradesQuery,
  tradesPage,
} from "./routes.js";

export function registerHistoricalRoutes(
  app: FastifyInstance,
  ctx: SimulatorContext,
  tape: TapePositions,
): void {
  const { marketsJson, marketJson, historicalMarketOf } = lookups(ctx);

  app.get("/historical/cutoff", async () => {
    // One window bounds every partition; the portfolio's orders and positions are all kept live.
    const cutoff = iso(ctx.history.cutoff(ctx.now()));
    return {
      market_settled_ts: cutoff,
      trades_created_ts: cutoff,
      orders_updated_ts: cutoff,
      market_positions_last_updated_ts: cutoff,
    };
  });

  app.get("/historical/markets", async (request) => {
    const q = parse(MarketListQuery, request.query);
    const now = ctx.now();
    const filter = marketFilter(ctx, q);
    const matching = ctx.exchange.markets.filter(
      (market) => filter(market) && ctx.history.isHistorical(market, now),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    return { markets: marketsJson(items), cursor };
  });

  app.get<{ Params: { ticker: string } }>("/historical/markets/:ticker", async (request) => ({
    market: marketJson(historicalMarketOf(request.params.ticker)),
  }));

  app.get<{ Params: { ticker: string } }>("/historical/markets/:ticker/candlesticks", async (request) => {
    const q = parse(CandleQuery, request.query);
    const market = historicalMarketOf(request.params.ticker);
    const start = ctx.history.firstCandleStart(q.start_ts, q.period_interval * 60, ctx.now());
    // A range wholly older than the exchange keeps has no candles left.
    if (start > q.end_ts && q.start_ts <= q.end_ts) return { ticker: market.record.ticker, candlesticks: [] };
    return {
      ticker: market.record.ticker,
      candlesticks: candlesticks(market, start, q.end_ts, q.period_interval, ctx.now(), ctx.prints).map(
        historicalCandle,
      ),
    };
  });

  app.get("/historical/trades", async (request) => {
    const q = parse(TradesQuery, request.query);
    // Trades at or after the cutoff are the live tape's.
    const before = ctx.history.cutoff(ctx.now()) - 1;
    return tradesPage(ctx, tape, q, { minTs: q.min_ts, maxTs: Math.min(q.max_ts ?? before, before) });
  });
}
