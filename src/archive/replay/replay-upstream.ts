/**
 * The replay upstream: a Kalshi trade-api v2 HTTP server that answers, from the archive, what the
 * recorded upstream would have answered at the replay clock's moment. A venue pointed at its URL
 * (UPSTREAM_URL) relays the recording as if it were live: the last book recorded by then, the trades
 * created by then (newest first, paged), the forecast periods ended by then, each milestone's last
 * live data, and one-minute (hourly, daily) candles of every market the venue saw trade, computed
 * from the recorded tape. `GET /historical/cutoff` answers 404, as an exchange without a historical
 * tier does, so the relay reads everything from the live routes; every other route is a 404 too.
 *
 * Bodies and errors are Kalshi's, as the simulator writes them (src/simulator). Every query is
 * bounded before it is read (lengths, counts, ranges) and every archive read is parameterised (the
 * reader binds each value).
 */
import Fastify, { type FastifyInstance } from "fastify";
import { z } from "zod";
import { fastifyListenerOptions, HTTP_LIMITS } from "../../limits.js";
import type { ArchiveReader } from "../archive-reader.js";
import { InvalidArchiveQueryError, UnknownArchiveColumnError } from "../errors.js";
import type { ReplayClock } from "./clock.js";
import {
  badRequest,
  errorBody,
  forecastPeriods,
  kalshiLiveData,
  kalshiOrderbook,
  kalshiTrade,
  notFound,
  ReplayRequestError,
} from "./kalshi-answers.js";
import { lastRow } from "./last-row.js";
import { MAX_CANDLE_PERIODS, recordedCandles } from "./recorded-candles.js";
import { decodeCursor, encodeCursor, type TapeWindow, type TradeRow, tradesNewestFirst } from "./tape.js";

/** Where Kalshi serves trade-api v2 (and the simulator), so the replay's URL stands in for either. */
export const REPLAY_BASE_PATH = "/trade-api/v2";

export interface ReplayUpstreamOptions {
  reader: ArchiveReader;
  clock: ReplayClock;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface RunningReplayUpstream {
  /** Base URL of trade-api v2, e.g. http://127.0.0.1:8090/trade-api/v2 */
  url: string;
  close(): Promise<void>;
}

/** The longest ticker a path or query names (the simulator's bound; Kalshi's are far shorter). */
const MAX_TICKER = 128;
/** Kalshi's bound on the milestone ids of one live-data batch. */
const MAX_MILESTONE_IDS = 100;
/** The most periods one forecast request may cover, as one candlestick request. */
const MAX_PERIODS = MAX_CANDLE_PERIODS;
/** Forecast rows read per percentile at most: every period twice over (a restarted recorder repeats some). */
const MAX_FORECAST_ROWS = 2 * MAX_PERIODS;
/** Archive reads of one live-data batch run at once. */
const LIVE_DATA_READS_AT_ONCE = 8;
/** The longest trade cursor taken: base64url of a 16-digit time and a 256-character id. */
const MAX_CURSOR = 400;
/** A whole-number query value within bounds (its text bounded first). */
const integer = (name: string, min: number, max: number) =>
  z
    .string()
    .max(20)
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be from ${min} to ${max}`);
const oneOf = (name: string, allowed: readonly number[]) =>
  z
    .string()
    .max(8)
    .transform(Number)
    .refine((n) => allowed.includes(n), `${name} must be one of ${allowed.join(", ")}`);
const seconds = (name: string) => integer(name, 0, 99_999_999_999);
const flag = z.enum(["true", "false"]).transform((v) => v === "true");
/** A list sent as repeated keys (as Kalshi's clients send arrays) or comma separated: at most `max` entries. */
const repeated = <T extends z.ZodType<unknown, string>>(
  name: string,
  item: T,
  max: number,
  maxChars: number,
) =>
  z
    .union([z.string().max(max * (maxChars + 1)), z.array(z.string().max(max * (maxChars + 1))).max(max)])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((entry) => entry.split(",")).filter(Boolean))
    .pipe(z.array(item).max(max, `${name}: at most ${max}`));

const OrderbookQuery = z.object({ depth: integer("depth", 0, 100).default(0) });
const TradesQuery = z.object({
  ticker: z.string().max(MAX_TICKER).optional(),
  limit: integer("limit", 1, 1000).default(100),
  cursor: z.string().max(MAX_CURSOR).optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
  is_block_trade: flag.optional(),
});
const CandleQuery = z.object({
  start_ts: seconds("start_ts"),
  end_ts: seconds("end_ts"),
  period_interval: oneOf("period_interval", [1, 60, 1440]),
  include_latest_before_start: flag.default(false),
});
const ForecastQuery = z.object({
  percentiles: repeated("percentiles", integer("percentiles", 0, 10_000), 10, 5).pipe(
    z.array(z.number()).min(1, "percentiles must name at least one"),
  ),
  start_ts: seconds("start_ts"),
  end_ts: seconds("end_ts"),
  period_interval: oneOf("period_interval", [0, 1, 60, 1440]),
});
const LiveDataQuery = z.object({
  milestone_ids: repeated("milestone_ids", z.string().min(1).max(256), MAX_MILESTONE_IDS, 256),
  include_player_stats: z.enum(["true", "false"]).optional(),
});

/** Parses with `schema`, or throws Kalshi's 400 naming the first problem. */
function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") || "request";
  throw badRequest(`${where}: ${issue?.message ?? "invalid"}`);
}

/** A ticker of a path: one longer than any can be names no market. */
function tickerParam(ticker: string, what = "market"): string {
  if (ticker.length === 0 || ticker.length > MAX_TICKER)
    throw notFound(`${what} ${ticker.slice(0, MAX_TICKER)}`);
  return ticker;
}

/** Starts the replay upstream on `host:port` (port 0, the default, picks a free one). */
export async function startReplayUpstream(options: ReplayUpstreamOptions): Promise<RunningReplayUpstream> {
  const host = options.host ?? "127.0.0.1";
  // Hung connections must not hold up close().
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 3 * MAX_TICKER },
    ...fastifyListenerOptions(HTTP_LIMITS),
  });
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof ReplayRequestError) {
      return reply.code(error.status).send(errorBody(error.code, error.message));
    }
    if (error instanceof InvalidArchiveQueryError || error instanceof UnknownArchiveColumnError) {
      return reply.code(400).send(errorBody("bad_request", error.message));
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    const message = error instanceof Error ? error.message : String(error);
    return reply.code(status).send(errorBody(status < 500 ? "bad_request" : "internal_error", message));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(errorBody("not_found", `no route ${request.method} ${request.url.split("?")[0]?.slice(0, 256)}`)),
  );
  await app.register(async (api) => registerReplayRoutes(api, options.reader, options.clock), {
    prefix: REPLAY_BASE_PATH,
  });
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : (options.port ?? 0);
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}${REPLAY_BASE_PATH}`,
    close: () => app.close(),
  };
}

function registerReplayRoutes(app: FastifyInstance, reader: ArchiveReader, clock: ReplayClock): void {
  /** The recording's moment being replayed, read once per request: rows dated after it are not served. */
  const nowMs = () => Math.floor(clock.now());

  // An exchange without a historical tier answers 404 here: the relay then reads every range live.
  app.get("/historical/cutoff", async () => {
    throw notFound("historical cutoff (a replay has no historical tier)");
  });

  app.get<{ Params: { ticker: string } }>("/markets/:ticker/orderbook", async (request) => {
    const ticker = tickerParam(request.params.ticker);
    const { depth } = parse(OrderbookQuery, request.query);
    const book = await lastRow(reader, "orderbooks", { ticker }, nowMs() + 1);
    if (!book) throw notFound(`order book of ${ticker}`);
    return kalshiOrderbook(book, depth);
  });

  app.get("/markets/trades", async (request) => {
    const q = parse(TradesQuery, request.query);
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    if (q.cursor && !after) throw badRequest("invalid cursor");
    // Kalshi's block trades are negotiated off the book; the recorded tape holds none.
    if (q.is_block_trade === true) return { trades: [], cursor: "" };
    // min_ts and max_ts name whole seconds, both included, as the trades' seconds are.
    const window: TapeWindow = {
      ticker: q.ticker || undefined,
      from: q.min_ts === undefined ? undefined : q.min_ts * 1000,
      to: Math.min(nowMs(), q.max_ts === undefined ? Number.POSITIVE_INFINITY : q.max_ts * 1000 + 999) + 1,
    };
    if (window.from !== undefined && window.from >= window.to) return { trades: [], cursor: "" };
    // One trade more than asked tells whether a next page exists: the cursor is offered only then.
    const found: TradeRow[] = [];
    for await (const group of tradesNewestFirst(reader, window, q.limit + 1, after)) {
      found.push(...group);
      if (found.length > q.limit) break;
    }
    const trades = found.slice(0, q.limit);
    const last = trades.at(-1);
    return {
      trades: trades.map(kalshiTrade),
      cursor:
        found.length > q.limit && last ? encodeCursor({ ms: last.created_time, id: last.trade_id }) : "",
    };
  });

  const candles = async (ticker: string, query: unknown) => {
    const q = parse(CandleQuery, query);
    const candles = await recordedCandles(
      reader,
      ticker,
      {
        startTs: q.start_ts,
        endTs: q.end_ts,
        periodMinutes: q.period_interval,
        includeLatestBeforeStart: q.include_latest_before_start,
      },
      nowMs(),
    );
    if (candles === undefined) throw notFound(`market ${ticker}`);
    return { ticker, candlesticks: candles };
  };
  app.get<{ Params: { ticker: string } }>("/markets/:ticker/candlesticks", async (request) =>
    candles(tickerParam(request.params.ticker), request.query),
  );
  // The path the relay calls; the archive does not tie a market to its series, so the series is not checked.
  app.get<{ Params: { series: string; ticker: string } }>(
    "/series/:series/markets/:ticker/candlesticks",
    async (request) => {
      tickerParam(request.params.series, "series");
      return candles(tickerParam(request.params.ticker), request.query);
    },
  );

  app.get<{ Params: { series: string; event: string } }>(
    "/series/:series/events/:event/forecast_percentile_history",
    async (request) => {
      const series = tickerParam(request.params.series, "series");
      const event = tickerParam(request.params.event, "event");
      const q = parse(ForecastQuery, request.query);
      if (new Set(q.percentiles).size !== q.percentiles.length)
        throw badRequest("percentiles must not repeat");
      if (q.start_ts > q.end_ts) throw badRequest("start_ts must not be after end_ts");
      const from = q.start_ts * 1000;
      const to = Math.min(q.end_ts * 1000, nowMs()) + 1;
      if (from >= to) return { forecast_history: [] };
      const rows = await Promise.all(
        q.percentiles.map((percentile) =>
          reader.rows("forecasts", {
            from,
            to,
            equals: {
              series_ticker: series,
              event_ticker: event,
              period_interval: q.period_interval,
              percentile,
            },
            orderBy: "end_period_ts",
            limit: MAX_FORECAST_ROWS + 1,
          }),
        ),
      );
      for (const read of rows) {
        const periods = new Set(read.map((row) => row.end_period_ts)).size;
        if (read.length > MAX_FORECAST_ROWS || periods > MAX_PERIODS) {
          throw badRequest(
            `the range covers over ${MAX_PERIODS} recorded periods; at most ${MAX_PERIODS} may be asked for at once`,
          );
        }
      }
      return { forecast_history: forecastPeriods(rows.flat(), q.percentiles) };
    },
  );

  app.get("/live_data/batch", async (request) => {
    const q = parse(LiveDataQuery, request.query);
    const to = nowMs() + 1;
    const ids = [...new Set(q.milestone_ids)];
    const found = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < ids.length; i += LIVE_DATA_READS_AT_ONCE) {
      const batch = ids.slice(i, i + LIVE_DATA_READS_AT_ONCE);
      const read = await Promise.all(
        batch.map((milestone_id) => lastRow(reader, "live_data", { milestone_id }, to)),
      );
      for (const row of read) if (row) found.set(row.milestone_id, kalshiLiveData(row));
    }
    // Ids with nothing recorded by now are left out, as Kalshi leaves unknown ones out.
    return { live_datas: q.milestone_ids.flatMap((id) => found.get(id) ?? []) };
  });
}
