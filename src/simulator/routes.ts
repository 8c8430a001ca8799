/**
 * The simulator's HTTP surface: Kalshi trade-api v2's public market-data routes (under the base path,
 * with Kalshi's field names and `{error: {code, message}}` bodies), and `/_sim` controls for faults
 * and lifecycle changes.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { MARKET_STATUSES, MarketResult, type MarketStatus } from "../contract/markets.js";
import { type BookImpact, impactedQuote, restingBook } from "./book-impact.js";
import { LifecycleError, type SimulatedExchange, type SimulatedMarket } from "./exchange.js";
import { type FaultControls, FaultRule } from "./faults.js";
import type { HistoryWindow } from "./history.js";
import {
  contracts,
  dollars,
  kalshiEvent,
  kalshiEventMetadata,
  kalshiMarket,
  kalshiSeries,
} from "./kalshi-json.js";
import { candlesticks, ExchangeRequestError, forecastHistory, listTrades } from "./market-data.js";
import type { MilestoneBook } from "./milestones.js";
import type { TradePrints } from "./trade-prints.js";

export interface SimulatorContext {
  /** Built on first use: reading it may take a moment the first time. */
  readonly exchange: SimulatedExchange;
  faults: FaultControls;
  /** The exchange's clock, Unix seconds. */
  now: () => number;
  /** Where the live tier ends and `/historical` begins. */
  history: HistoryWindow;
  /** The catalogue's milestones (games, readings), built on first use as the exchange is. */
  readonly milestones: MilestoneBook;
  /** Depth the accounts' orders took from the books, refilling over time. */
  impact: BookImpact;
  /** The accounts' trades on the tape. */
  prints: TradePrints;
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

export const notFound = (what: string) => new ExchangeRequestError(404, "not_found", `${what} not found`);

/** A whole-number query value within bounds. */
export const integer = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be from ${min} to ${max}`);
export const oneOf = (name: string, allowed: readonly number[]) =>
  z
    .string()
    .transform(Number)
    .refine((n) => allowed.includes(n), `${name} must be one of ${allowed.join(", ")}`);
export const list = z.string().transform((v) => v.split(",").filter(Boolean));
/** A comma list of at most `max` tickers. */
export const tickerList = (name: string, max: number) =>
  z
    .string()
    .max(max * (MAX_TICKER + 1))
    .transform((v) => v.split(",").filter(Boolean))
    .pipe(z.array(z.string().max(MAX_TICKER)).max(max, `${name}: at most ${max} tickers`));
/** A list sent as repeated keys (how Kalshi's clients send arrays) or comma separated, at most `max` long. */
export const repeated = <T extends z.ZodType<unknown, string>>(name: string, item: T, max: number) =>
  z
    .union([z.string(), z.array(z.string()).max(max)])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((entry) => entry.split(",")).filter(Boolean))
    .pipe(z.array(item).min(1, `${name} must name at least one`).max(max, `${name}: at most ${max}`));
/** Kalshi's opaque cursors, bounded. */
export const cursorParam = z.string().max(128).optional();
export const flag = z.enum(["true", "false"]).transform((v) => v === "true");
export const seconds = (name: string) => integer(name, 0, 99_999_999_999);
/** The longest ticker a query or path names: Kalshi's are far shorter. */
export const MAX_TICKER = 128;

const EventsQuery = z.object({
  limit: integer("limit", 1, 200).default(200),
  cursor: z.string().optional(),
  with_nested_markets: flag.default(false),
  status: list.optional(),
  series_ticker: z.string().optional(),
});
/** The filters GetMarkets and GetHistoricalMarkets share. */
export const MarketListQuery = z.object({
  limit: integer("limit", 1, 1000).default(100),
  cursor: cursorParam,
  event_ticker: z.string().max(MAX_TICKER).optional(),
  series_ticker: z.string().max(MAX_TICKER).optional(),
  tickers: tickerList("tickers", 1000).optional(),
  mve_filter: z.enum(["only", "exclude"]).optional(),
});
const MarketsQuery = MarketListQuery.extend({
  status: list.optional(),
  min_close_ts: seconds("min_close_ts").optional(),
  max_close_ts: seconds("max_close_ts").optional(),
});
export const TradesQuery = z.object({
  ticker: z.string().max(MAX_TICKER).optional(),
  limit: integer("limit", 1, 1000).default(100),
  cursor: z.string().max(128).optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
  is_block_trade: flag.optional(),
});
const OrderbookQuery = z.object({ depth: integer("depth", 0, 100).default(0) });
export const CandleQuery = z.object({
  start_ts: seconds("start_ts"),
  end_ts: seconds("end_ts"),
  period_interval: oneOf("period_interval", [1, 60, 1440]),
  include_latest_before_start: flag.default(false),
});
/** Kalshi's bounds on one batch: tickers, and candles across them. */
const MAX_BATCH_TICKERS = 100;
const MAX_BATCH_CANDLES = 10_000;
const BatchCandleQuery = CandleQuery.extend({
  market_tickers: tickerList("market_tickers", MAX_BATCH_TICKERS),
});
const BatchOrderbookQuery = z.object({
  tickers: repeated("tickers", z.string().max(MAX_TICKER), MAX_BATCH_TICKERS),
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
export class TapePositions {
  private readonly times = new Map<string, number>();

  constructor(private readonly prints?: TradePrints) {}

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
    let time = this.times.get(tradeId) ?? this.prints?.find(tradeId)?.time;
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

/** Reading the exchange for a route: JSON of its records, and lookups that 404 as Kalshi does. */
export function lookups(ctx: SimulatorContext) {
  // Read per request, not kept: the exchange is built on the first request (see startSimulator).
  const categoryOf = (seriesTicker: string) =>
    ctx.exchange.seriesByTicker.get(seriesTicker)?.category ?? null;
  const marketJson = (market: SimulatedMarket, now = ctx.now()) => {
    const strikes = ctx.exchange.eventsByTicker.get(market.record.eventTicker)?.strikes;
    const quote = impactedQuote(market, ctx.impact, now);
    return kalshiMarket(market, now, strikes?.byTicker.get(market.record.ticker), quote);
  };
  /** A market of either tier. */
  const anyMarketOf = (ticker: string) => {
    const market = ctx.exchange.marketsByTicker.get(ticker);
    if (!market) throw notFound(`market ${ticker}`);
    return market;
  };
  return {
    categoryOf,
    marketJson,
    marketsJson: (markets: readonly SimulatedMarket[]) => {
      const now = ctx.now();
      return markets.map((market) => marketJson(market, now));
    },
    anyMarketOf,
    /** A market of the live tier: one settled before the cutoff is not found there, as on Kalshi. */
    liveMarketOf: (ticker: string) => {
      const market = anyMarketOf(ticker);
      if (ctx.history.isHistorical(market, ctx.now())) throw notFound(`market ${ticker}`);
      return market;
    },
    /** A market of the historical tier. */
    historicalMarketOf: (ticker: string) => {
      const market = anyMarketOf(ticker);
      if (!ctx.history.isHistorical(market, ctx.now())) throw notFound(`historical market ${ticker}`);
      return market;
    },
    eventOf: (ticker: string, seriesTicker?: string) => {
      const event = ctx.exchange.eventsByTicker.get(ticker);
      if (!event || (seriesTicker !== undefined && event.record.seriesTicker !== seriesTicker)) {
        throw notFound(seriesTicker ? `event ${ticker} of series ${seriesTicker}` : `event ${ticker}`);
      }
      return event;
    },
  };
}

/** Filters of Kalshi's market listings, shared by the live and historical tiers. */
export function marketFilter(
  ctx: SimulatorContext,
  q: {
    tickers?: string[] | undefined;
    event_ticker?: string | undefined;
    series_ticker?: string | undefined;
  },
) {
  const tickers = q.tickers ? new Set(q.tickers) : undefined;
  return ({ record }: SimulatedMarket) =>
    (!tickers || tickers.has(record.ticker)) &&
    (!q.event_ticker || record.eventTicker === q.event_ticker) &&
    (!q.series_ticker ||
      ctx.exchange.eventsByTicker.get(record.eventTicker)?.record.seriesTicker === q.series_ticker);
}

/**
 * One page of the trade tape within [minTs, maxTs], newest first: what GetTrades and
 * GetTradesHistorical answer, each within its tier's bounds.
 */
export function tradesPage(
  ctx: SimulatorContext,
  tape: TapePositions,
  q: z.output<typeof TradesQuery>,
  bounds: { minTs?: number | undefined; maxTs?: number | undefined },
) {
  const markets = q.ticker ? [lookups(ctx).anyMarketOf(q.ticker)] : ctx.exchange.markets;
  const now = ctx.now();
  const after = q.cursor ? tape.positionOf(q.cursor, markets, now) : undefined;
  // Kalshi's block trades are negotiated off the book; the simulator prints none.
  if (q.is_block_trade === true || (bounds.minTs ?? 0) > (bounds.maxTs ?? now))
    return { trades: [], cursor: "" };
  // One trade more than asked tells whether a next page exists: the cursor is offered only then.
  // Trades older than the exchange keeps are gone from both tiers.
  const minTs = Math.max(bounds.minTs ?? 0, Math.ceil(ctx.history.keptFrom(now))) || undefined;
  const request = { markets, limit: q.limit + 1, cursor: after, prints: ctx.prints, ...bounds, minTs };
  const listed = listTrades(request, now).trades as {
    trade_id: string;
    created_time: string;
  }[];
  const trades = listed.slice(0, q.limit);
  for (const trade of trades) tape.remember(trade.trade_id, Date.parse(trade.created_time) / 1000);
  const last = trades[trades.length - 1];
  return { trades, cursor: listed.length > q.limit && last ? last.trade_id : "" };
}

/**
 * A market's resting book, as takers left it, as Kalshi's `orderbook_fp`, `depth` levels a side (0: all);
 * empty when none rests.
 */
function orderbookFp(ctx: SimulatorContext, market: SimulatedMarket, now: number, depth: number) {
  const book = restingBook(market, ctx.impact, now) ?? { yes: [], no: [] };
  // Levels come best first; Kalshi's depth keeps that many a side, 0 all of them.
  const levels = (side: [number, number][]) =>
    side.slice(0, depth || side.length).map(([price, size]) => [dollars(price), contracts(size)]);
  return { yes_dollars: levels(book.yes), no_dollars: levels(book.no) };
}

/**
 * A market's candles for a query; with `include_latest_before_start`, the period ending just before the
 * first one is put in front, as Kalshi does, when the market traded then.
 */
function candlesFor(
  ctx: SimulatorContext,
  market: SimulatedMarket,
  q: z.output<typeof CandleQuery>,
  now: number,
) {
  const asked = q.include_latest_before_start ? Math.max(0, q.start_ts - q.period_interval * 60) : q.start_ts;
  const start = ctx.history.firstCandleStart(asked, q.period_interval * 60, now);
  // A range wholly older than the exchange keeps has no candles left.
  if (start > q.end_ts && asked <= q.end_ts) return [];
  return candlesticks(market, start, q.end_ts, q.period_interval, now, ctx.prints);
}

/** Registers Kalshi's market-data routes on `app` (mounted under the base path). */
export function registerExchangeRoutes(
  app: FastifyInstance,
  ctx: SimulatorContext,
  tape: TapePositions,
): void {
  const { categoryOf, marketJson, marketsJson, liveMarketOf, eventOf } = lookups(ctx);
  const isLive = (market: SimulatedMarket, now = ctx.now()) => !ctx.history.isHistorical(market, now);

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

  app.get<{ Params: { ticker: string } }>("/events/:ticker/metadata", async (request) => {
    const event = eventOf(request.params.ticker);
    return kalshiEventMetadata(event, ctx.exchange.seriesByTicker.get(event.record.seriesTicker));
  });

  app.get("/markets", async (request) => {
    const q = parse(MarketsQuery, request.query);
    const states = q.status ? new Set(q.status) : undefined;
    const now = ctx.now();
    const filter = marketFilter(ctx, q);
    const matching = ctx.exchange.markets.filter(
      (market) =>
        filter(market) &&
        isLive(market, now) &&
        (!states || marketStates(market.lifecycle.status).some((state) => states.has(state))) &&
        (q.min_close_ts === undefined || market.record.closeTime >= q.min_close_ts) &&
        (q.max_close_ts === undefined || market.record.closeTime <= q.max_close_ts),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    return { markets: marketsJson(items), cursor };
  });

  app.get("/markets/trades", async (request) => {
    const q = parse(TradesQuery, request.query);
    // The live tape starts at the cutoff: older trades are served by /historical/trades.
    const cutoff = ctx.history.cutoff(ctx.now());
    return tradesPage(ctx, tape, q, { minTs: Math.max(q.min_ts ?? 0, cutoff), maxTs: q.max_ts });
  });

  app.get<{ Params: { ticker: string } }>("/markets/:ticker", async (request) => ({
    market: marketJson(liveMarketOf(request.params.ticker)),
  }));

  app.get<{ Params: { ticker: string } }>("/markets/:ticker/orderbook", async (request) => {
    const market = liveMarketOf(request.params.ticker);
    const { depth } = parse(OrderbookQuery, request.query);
    if (!market.dynamics.bookAt(ctx.now(), market.lifecycle.status)) {
      throw notFound(`order book of ${market.record.ticker} (${market.lifecycle.status})`);
    }
    return { orderbook_fp: orderbookFp(ctx, market, ctx.now(), depth) };
  });

  app.get("/markets/orderbooks", async (request) => {
    const { tickers } = parse(BatchOrderbookQuery, request.query);
    const now = ctx.now();
    const markets = [...new Set(tickers)].map(liveMarketOf);
    return {
      orderbooks: markets.map((m) => ({
        ticker: m.record.ticker,
        orderbook_fp: orderbookFp(ctx, m, now, 0),
      })),
    };
  });

  app.get("/markets/candlesticks", async (request) => {
    const q = parse(BatchCandleQuery, request.query);
    const now = ctx.now();
    const markets = [...new Set(q.market_tickers)].map(liveMarketOf);
    // Kalshi bounds the candles of a batch as a whole; each market's range is bounded by candlesticks().
    const periods = Math.floor((q.end_ts - Math.max(0, q.start_ts)) / (q.period_interval * 60)) + 1;
    if (periods * markets.length > MAX_BATCH_CANDLES) {
      throw new ExchangeRequestError(
        400,
        "bad_request",
        `the batch covers ${periods * markets.length} candles; at most ${MAX_BATCH_CANDLES} may be asked for at once`,
      );
    }
    return {
      markets: markets.map((m) => ({
        market_ticker: m.record.ticker,
        candlesticks: candlesFor(ctx, m, q, now),
      })),
    };
  });

  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/markets/:ticker/candlesticks",
    async (request) => {
      const market = liveMarketOf(request.params.ticker);
      eventOf(market.record.eventTicker, request.params.series);
      const q = parse(CandleQuery, request.query);
      return {
        ticker: market.record.ticker,
        candlesticks: candlesFor(ctx, market, q, ctx.now()),
      };
    },
  );

  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/events/:ticker/candlesticks",
    async (request) => {
      const event = eventOf(request.params.ticker, request.params.series);
      const q = parse(CandleQuery, request.query);
      const now = ctx.now();
      // Markets settled before the cutoff have their candles under /historical only.
      const live = event.markets.filter((m) => isLive(m, now));
      return {
        market_tickers: live.map((m) => m.record.ticker),
        market_candlesticks: live.map((m) => candlesFor(ctx, m, q, now)),
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
      // The live tier keeps its window of forecasts, as of trades and candles; Kalshi has no older tier for them.
      const now = ctx.now();
      const start = Math.max(q.start_ts, ctx.history.cutoff(now));
      if (q.start_ts <= q.end_ts && start > q.end_ts) return { forecast_history: [] };
      return forecastHistory(event, q.percentiles, start, q.end_ts, q.period_interval, now);
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
      const market = ctx.exchange.changeLifecycle(request.params.ticker, change, ctx.now());
      return { market: kalshiMarket(market, ctx.now()) };
    } catch (error) {
      if (error instanceof LifecycleError) throw new ExchangeRequestError(409, "conflict", error.message);
      throw error;
    }
  });
}

/** Kalshi's error body; `details` repeats the message unless Kalshi says more. */
export function sendExchangeError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  details = message,
) {
  return reply.code(status).send({ error: { code, message, details } });
}
