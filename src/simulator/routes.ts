/**
 * The simulator's HTTP surface: Kalshi trade-api v2's public market-data routes (under the base path,
 * with Kalshi's field names and `{error: {code, message}}` bodies), and `/_sim` controls for faults
 * and lifecycle changes.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { MARKET_STATUSES, MarketResult, type MarketStatus } from "../contract/markets.js";
import { LifecycleError, type SimulatedExchange, type SimulatedMarket } from "./exchange.js";
import { type FaultControls, FaultRule } from "./faults.js";
import { kalshiEvent, kalshiMarket, kalshiSeries } from "./kalshi-json.js";
import { candlesticks, ExchangeRequestError, forecastHistory, listTrades } from "./market-data.js";

export interface SimulatorContext {
  /** Built on first use: reading it may take a moment the first time. */
  readonly exchange: SimulatedExchange;
  faults: FaultControls;
  /** The exchange's clock, Unix seconds. */
  now: () => number;
}

/** Kalshi's coarse event states, as its `status` filter names them. */
const EVENT_STATES: Record<MarketStatus, string> = {
  initialized: "unopened",
  active: "open",
  inactive: "open",
  closed: "closed",
  determined: "settled",
  finalized: "settled",
};

/** The names a market's status answers to in the markets filter: its own, Kalshi's coarse one, "paused". */
const marketStates = (status: MarketStatus): string[] =>
  status === "inactive" ? [status, EVENT_STATES[status], "paused"] : [status, EVENT_STATES[status]];

const notFound = (what: string) => new ExchangeRequestError(404, "not_found", `${what} not found`);

/** A whole-number query value within bounds. */
export const integer = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be from ${min} to ${max}`);
const oneOf = (name: string, allowed: readonly number[]) =>
  z
    .string()
    .transform(Number)
    .refine((n) => allowed.includes(n), `${name} must be one of ${allowed.join(", ")}`);
const list = z.string().transform((v) => v.split(",").filter(Boolean));
const flag = z.enum(["true", "false"]).transform((v) => v === "true");
const seconds = (name: string) => integer(name, 0, 99_999_999_999);

const EventsQuery = z.object({
  limit: integer("limit", 1, 200).default(200),
  cursor: z.string().optional(),
  with_nested_markets: flag.default(false),
  status: list.optional(),
  series_ticker: z.string().optional(),
});
const MarketsQuery = z.object({
  limit: integer("limit", 1, 1000).default(100),
  cursor: z.string().optional(),
  event_ticker: z.string().optional(),
  series_ticker: z.string().optional(),
  status: list.optional(),
  tickers: list.optional(),
  min_close_ts: seconds("min_close_ts").optional(),
  max_close_ts: seconds("max_close_ts").optional(),
});
const TradesQuery = z.object({
  ticker: z.string().optional(),
  limit: integer("limit", 1, 1000).default(100),
  cursor: z.string().max(128).optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
});
const OrderbookQuery = z.object({ depth: integer("depth", 0, 100).default(0) });
const CandleQuery = z.object({
  start_ts: seconds("start_ts"),
  end_ts: seconds("end_ts"),
  period_interval: oneOf("period_interval", [1, 60, 1440]),
});
const ForecastQuery = z.object({
  // Kalshi's clients send one key per percentile; a comma list is read too.
  percentiles: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((item) => item.split(",")))
    .pipe(
      z
        .array(integer("percentiles", 0, 10_000))
        .min(1)
        .max(10),
    ),
  start_ts: seconds("start_ts"),
  end_ts: seconds("end_ts"),
  period_interval: oneOf("period_interval", [0, 1, 60, 1440]),
});
const LifecycleBody = z.object({
  status: z.enum(MARKET_STATUSES),
  result: MarketResult.optional(),
  scalarOutcomePct: z.number().int().min(0).max(10_000).nullable().optional(),
});

/** Parses with `schema`, or throws Kalshi's 400 naming the first problem. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") || "request";
  throw new ExchangeRequestError(400, "bad_request", `${where}: ${issue?.message ?? "invalid"}`);
}

/** An offset cursor: Kalshi's are opaque, so any string it did not issue is refused. */
export function offsetOf(cursor: string | undefined): number {
  if (!cursor) return 0;
  if (!/^\d{1,9}$/.test(cursor)) throw new ExchangeRequestError(400, "bad_request", "invalid cursor");
  return Number(cursor);
}

/** One page of `items` from `offset`, and the cursor of the next ("" on the last). */
export function page<T>(items: readonly T[], offset: number, limit: number): { items: T[]; cursor: string } {
  const slice = items.slice(offset, offset + limit);
  return { items: slice, cursor: offset + limit < items.length ? String(offset + limit) : "" };
}

/** Trades kept on record by id so that an id can continue a listing: about 10 MB of them. */
const REMEMBERED_TRADES = 100_000;
/** How far back a trade id not on record is looked for, in minutes of its market's tape. */
const CURSOR_SEARCH_MINUTES = 7 * 24 * 60;

/**
 * The cursor of the trade tape is the id of the last trade of a page: the next page continues after it.
 * Ids say nothing of their time, so served trades are remembered; an id not on record (served before a
 * restart, say) is looked for in its market's recent tape when the listing names one market.
 */
class TapePositions {
  private readonly times = new Map<string, number>();

  remember(tradeId: string, time: number): void {
    if (this.times.has(tradeId)) return;
    this.times.set(tradeId, time);
    if (this.times.size > REMEMBERED_TRADES) {
      const oldest = this.times.keys().next().value;
      if (oldest !== undefined) this.times.delete(oldest);
    }
  }

  /** The listing position (`time_id`) just after trade `tradeId`, or Kalshi's 400 for an unknown one. */
  positionOf(tradeId: string, markets: readonly SimulatedMarket[], now: number): string {
    let time = this.times.get(tradeId);
    const [market] = markets;
    if (time === undefined && markets.length === 1 && market) {
      const newest = Math.floor(Math.min(now, market.record.closeTime) / 60);
      const oldest = Math.max(Math.floor(market.record.openTime / 60), newest - CURSOR_SEARCH_MINUTES);
      for (let minute = newest; minute >= oldest && time === undefined; minute--) {
        const trade = market.dynamics.tradeInMinute(minute);
        if (trade?.tradeId === tradeId) time = trade.time;
      }
    }
    if (time === undefined) {
      throw new ExchangeRequestError(400, "bad_request", `invalid cursor: no trade ${tradeId.slice(0, 64)}`);
    }
    return `${time}_${tradeId}`;
  }
}

/** Registers Kalshi's market-data routes on `app` (mounted under the base path). */
export function registerExchangeRoutes(app: FastifyInstance, ctx: SimulatorContext): void {
  // Read per request, not kept: the exchange is built on the first request (see startSimulator).
  const categoryOf = (seriesTicker: string) =>
    ctx.exchange.seriesByTicker.get(seriesTicker)?.category ?? null;
  const marketJson = (market: SimulatedMarket, now = ctx.now()) => {
    const strikes = ctx.exchange.eventsByTicker.get(market.record.eventTicker)?.strikes;
    return kalshiMarket(market, now, strikes?.byTicker.get(market.record.ticker));
  };
  const marketsJson = (markets: readonly SimulatedMarket[]) => {
    const now = ctx.now();
    return markets.map((market) => marketJson(market, now));
  };
  const marketOf = (ticker: string) => {
    const market = ctx.exchange.marketsByTicker.get(ticker);
    if (!market) throw notFound(`market ${ticker}`);
    return market;
  };
  const eventOf = (ticker: string, seriesTicker?: string) => {
    const event = ctx.exchange.eventsByTicker.get(ticker);
    if (!event || (seriesTicker !== undefined && event.record.seriesTicker !== seriesTicker)) {
      throw notFound(seriesTicker ? `event ${ticker} of series ${seriesTicker}` : `event ${ticker}`);
    }
    return event;
  };

  app.get("/series", async () => ({ series: ctx.exchange.series.map(kalshiSeries) }));

  app.get<{ Params: { ticker: string } }>("/series/:ticker", async (request) => {
    const series = ctx.exchange.seriesByTicker.get(request.params.ticker);
    if (!series) throw notFound(`series ${request.params.ticker}`);
    return { series: kalshiSeries(series) };
  });

  app.get("/events", async (request) => {
    const q = parse(EventsQuery, request.query);
    const states = q.status ? new Set(q.status) : undefined;
    const matching = ctx.exchange.events.filter(
      (e) =>
        (!q.series_ticker || e.record.seriesTicker === q.series_ticker) &&
        (!states || states.has(EVENT_STATES[e.markets[0]?.lifecycle.status ?? "initialized"])),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    const events = items.map((e) =>
      kalshiEvent(
        e,
        categoryOf(e.record.seriesTicker),
        q.with_nested_markets ? marketsJson(e.markets) : undefined,
      ),
    );
    return { events, milestones: [], cursor };
  });

  app.get<{ Params: { ticker: string } }>("/events/:ticker", async (request) => {
    const event = eventOf(request.params.ticker);
    const q = parse(z.object({ with_nested_markets: flag.default(false) }), request.query);
    const markets = marketsJson(event.markets);
    return {
      event: kalshiEvent(
        event,
        categoryOf(event.record.seriesTicker),
        q.with_nested_markets ? markets : undefined,
      ),
      markets: q.with_nested_markets ? [] : markets,
    };
  });

  app.get("/markets", async (request) => {
    const q = parse(MarketsQuery, request.query);
    const tickers = q.tickers ? new Set(q.tickers) : undefined;
    const states = q.status ? new Set(q.status) : undefined;
    const matching = ctx.exchange.markets.filter(({ record, lifecycle }) => {
      const event = ctx.exchange.eventsByTicker.get(record.eventTicker);
      return (
        (!tickers || tickers.has(record.ticker)) &&
        (!q.event_ticker || record.eventTicker === q.event_ticker) &&
        (!q.series_ticker || event?.record.seriesTicker === q.series_ticker) &&
        (!states || marketStates(lifecycle.status).some((state) => states.has(state))) &&
        (q.min_close_ts === undefined || record.closeTime >= q.min_close_ts) &&
        (q.max_close_ts === undefined || record.closeTime <= q.max_close_ts)
      );
    });
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    return { markets: marketsJson(items), cursor };
  });

  const tape = new TapePositions();
  app.get("/markets/trades", async (request) => {
    const q = parse(TradesQuery, request.query);
    const markets = q.ticker ? [marketOf(q.ticker)] : ctx.exchange.markets;
    const now = ctx.now();
    const after = q.cursor ? tape.positionOf(q.cursor, markets, now) : undefined;
    // One trade more than asked tells whether a next page exists: the cursor is offered only then.
    const listed = listTrades(
      { markets, limit: q.limit + 1, cursor: after, minTs: q.min_ts, maxTs: q.max_ts },
      now,
    ).trades as { trade_id: string; created_time: string }[];
    const trades = listed.slice(0, q.limit);
    for (const trade of trades) tape.remember(trade.trade_id, Date.parse(trade.created_time) / 1000);
    const last = trades[trades.length - 1];
    return { trades, cursor: listed.length > q.limit && last ? last.trade_id : "" };
  });

  app.get<{ Params: { ticker: string } }>("/markets/:ticker", async (request) => ({
    market: marketJson(marketOf(request.params.ticker)),
  }));

  app.get<{ Params: { ticker: string } }>("/markets/:ticker/orderbook", async (request) => {
    const market = marketOf(request.params.ticker);
    const { depth } = parse(OrderbookQuery, request.query);
    const book = market.dynamics.bookAt(ctx.now(), market.lifecycle.status);
    if (!book) throw notFound(`order book of ${market.record.ticker} (${market.lifecycle.status})`);
    // Levels come best first; Kalshi's depth keeps that many a side, 0 all of them.
    const levels = (side: [number, number][]) =>
      side.slice(0, depth || side.length).map(([price, size]) => [(price / 10_000).toFixed(4), `${size}.00`]);
    return { orderbook_fp: { yes_dollars: levels(book.yes), no_dollars: levels(book.no) } };
  });

  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/markets/:ticker/candlesticks",
    async (request) => {
      const market = marketOf(request.params.ticker);
      eventOf(market.record.eventTicker, request.params.series);
      const q = parse(CandleQuery, request.query);
      return {
        ticker: market.record.ticker,
        candlesticks: candlesticks(market, q.start_ts, q.end_ts, q.period_interval, ctx.now()),
      };
    },
  );

  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/events/:ticker/candlesticks",
    async (request) => {
      const event = eventOf(request.params.ticker, request.params.series);
      const q = parse(CandleQuery, request.query);
      const now = ctx.now();
      return {
        market_tickers: event.markets.map((m) => m.record.ticker),
        market_candlesticks: event.markets.map((m) =>
          candlesticks(m, q.start_ts, q.end_ts, q.period_interval, now),
        ),
        adjusted_end_ts: Math.min(q.end_ts, now),
      };
    },
  );

  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/events/:ticker/forecast_percentile_history",
    async (request) => {
      const event = eventOf(request.params.ticker, request.params.series);
      const q = parse(ForecastQuery, request.query);
      if (new Set(q.percentiles).size !== q.percentiles.length) {
        throw new ExchangeRequestError(400, "bad_request", "percentiles must not repeat");
      }
      return forecastHistory(event, q.percentiles, q.start_ts, q.end_ts, q.period_interval, ctx.now());
    },
  );
}

/** Registers the `/_sim` controls: faults, request counts and market lifecycle changes. */
export function registerControlRoutes(app: FastifyInstance, ctx: SimulatorContext): void {
  app.get("/_sim/faults", async () => ({ faults: ctx.faults.list(), ...ctx.faults.stats() }));
  app.put("/_sim/faults", async (request) => {
    const rules = parse(z.array(FaultRule).max(20), request.body);
    ctx.faults.set(...rules);
    return { faults: ctx.faults.list() };
  });
  app.delete("/_sim/faults", async () => {
    ctx.faults.clear();
    ctx.faults.resetStats();
    return { faults: [] };
  });
  app.post<{ Params: { ticker: string } }>("/_sim/markets/:ticker/lifecycle", async (request) => {
    const change = parse(LifecycleBody, request.body);
    try {
      const market = ctx.exchange.changeLifecycle(request.params.ticker, change);
      return { market: kalshiMarket(market, ctx.now()) };
    } catch (error) {
      if (error instanceof LifecycleError) throw new ExchangeRequestError(409, "conflict", error.message);
      throw error;
    }
  });
}

/** Kalshi's error body. */
export function sendExchangeError(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).send({ error: { code, message, details: message } });
}
