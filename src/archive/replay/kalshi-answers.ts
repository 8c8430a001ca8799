/**
 * Archive rows as Kalshi trade-api v2 answers them, field for field as the simulator writes them
 * (src/simulator/kalshi-json.ts, market-data.ts, live-data.ts; the archive lies below the simulator in
 * the floor plan, so the shapes are restated here, not imported). Each answer reads back, through the
 * relay (`toReferenceBook`, `toReferenceTrades`), to exactly the values the recorder took from it.
 */
import type { ArchiveRow } from "../tables.js";

/** Basis points in one dollar: prices are counted in them between rows and answers. */
export const ONE_DOLLAR = 10_000;

/** A request the replay refuses, with Kalshi's status and code (`{error: {code, message, details}}`). */
export class ReplayRequestError extends Error {
  override name = "ReplayRequestError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ReplayRequestError(400, "bad_request", message);
export const notFound = (what: string) => new ReplayRequestError(404, "not_found", `${what} not found`);

/** Kalshi's error body; `details` repeats the message, as the simulator's does. */
export function errorBody(code: string, message: string): { error: Record<string, string> } {
  return { error: { code, message, details: message } };
}

/** Basis points as Kalshi's dollar string ("0.4200"). */
const dollars = (basisPoints: number) => (basisPoints / ONE_DOLLAR).toFixed(4);
/** A contract count as Kalshi's fixed-point string ("125.00", "2.50"). */
const fixedPoint = (count: number) => count.toFixed(2);
/** A price in dollars, as the archive keeps it, in basis points. */
export const basisPointsOf = (priceDollars: number) => Math.round(priceDollars * ONE_DOLLAR);

/** Recorded JSON (the archive's own writing); text that does not parse is the archive's fault. */
export function recordedJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ReplayRequestError(500, "internal_error", `the archive holds ${what} that is not JSON`);
  }
}

/**
 * A recorded book (`{"0.4200": 120}` per side) as GetMarketOrderbook's `orderbook_fp`: levels best
 * (highest) first, `depth` a side (0: all), prices as 4-decimal dollars and sizes fixed-point. A level
 * of no contracts (a fraction of one, floored as the recorder read it) rests nothing and is left out.
 */
export function kalshiOrderbook(row: ArchiveRow<"orderbooks">, depth: number): Record<string, unknown> {
  return {
    orderbook_fp: {
      yes_dollars: bookSide(row.yes_bids, depth),
      no_dollars: bookSide(row.no_bids, depth),
    },
  };
}

function bookSide(json: string, depth: number): [string, string][] {
  const side = recordedJson(json, "an order book");
  if (typeof side !== "object" || side === null || Array.isArray(side)) {
    throw new ReplayRequestError(
      500,
      "internal_error",
      "the archive holds an order book side that is no map",
    );
  }
  const levels: [number, number][] = [];
  for (const [price, size] of Object.entries(side)) {
    const value = price.trim() === "" ? Number.NaN : Number(price);
    if (!(value >= 0 && value <= 1) || typeof size !== "number" || !Number.isFinite(size) || size <= 0)
      continue;
    levels.push([value, size]);
  }
  levels.sort((a, b) => b[0] - a[0]);
  return levels.slice(0, depth || levels.length).map(([price, size]) => [price.toFixed(4), fixedPoint(size)]);
}

/**
 * A recorded trade as GetTrades sends it. Prices are the recorded dollars to four places (their cents
 * beside them), the count fixed-point (its whole part beside it), the time ISO with its milliseconds.
 */
export function kalshiTrade(row: ArchiveRow<"trades">): Record<string, unknown> {
  const yes = basisPointsOf(row.yes_price);
  const no = basisPointsOf(row.no_price);
  const cents = (bp: number) => Math.round(bp / 100);
  return {
    trade_id: row.trade_id,
    ticker: row.ticker,
    count: Math.floor(row.count),
    count_fp: fixedPoint(row.count),
    price: cents(yes),
    yes_price: cents(yes),
    no_price: cents(no),
    yes_price_dollars: dollars(yes),
    no_price_dollars: dollars(no),
    taker_side: row.taker_side,
    taker_outcome_side: row.taker_side,
    // The taker's side of the YES book: a YES buyer bids, a NO buyer sells YES (asks).
    taker_book_side: row.taker_side === "yes" ? "bid" : "ask",
    is_block_trade: false,
    created_time: new Date(row.created_time).toISOString(),
  };
}

/** Kalshi's distribution object: integer cents and their `_dollars` twins (null when unknown). */
function distribution(values: Record<string, number | null>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, bp] of Object.entries(values)) {
    out[name] = bp === null ? null : Math.round(bp / 100);
    out[`${name}_dollars`] = bp === null ? null : dollars(bp);
  }
  return out;
}

/** What one period's trades add up to: prices in basis points, volume in hundredths of a contract. */
export interface PeriodTrades {
  open: number;
  low: number;
  high: number;
  close: number;
  sum: number;
  trades: number;
  hundredths: number;
}

export function addTrade(period: PeriodTrades | undefined, price: number, count: number): PeriodTrades {
  const hundredths = Math.round(count * 100);
  if (!period)
    return { open: price, low: price, high: price, close: price, sum: price, trades: 1, hundredths };
  period.low = Math.min(period.low, price);
  period.high = Math.max(period.high, price);
  period.close = price;
  period.sum += price;
  period.trades++;
  period.hundredths += hundredths;
  return period;
}

/**
 * A candle of GetMarketCandlesticks: the period's trades as the price's OHLC, mean and the last price
 * before it (`previous`), their volume, and the market's open interest. The archive keeps no quotes
 * over time, so `yes_bid` and `yes_ask` are empty, as the simulator's are when it has no quote.
 */
export function kalshiCandle(
  endPeriodTs: number,
  traded: PeriodTrades | undefined,
  previous: number | null,
  openInterest: { count: number; fp: string },
): Record<string, unknown> {
  const volume = (traded?.hundredths ?? 0) / 100;
  return {
    end_period_ts: endPeriodTs,
    yes_bid: {},
    yes_ask: {},
    price: distribution({
      open: traded?.open ?? null,
      low: traded?.low ?? null,
      high: traded?.high ?? null,
      close: traded?.close ?? null,
      mean: traded ? Math.round(traded.sum / traded.trades) : null,
      previous,
    }),
    volume: Math.floor(volume),
    volume_fp: fixedPoint(volume),
    open_interest: openInterest.count,
    open_interest_fp: openInterest.fp,
  };
}

/**
 * The recorded periods holding every percentile asked for, in time order, as GetEventForecastPercentilesHistory
 * sends them: the points in the order asked. A period recorded twice (a restarted recorder reads it
 * again, with the same values) is served once.
 */
export function forecastPeriods(
  rows: readonly ArchiveRow<"forecasts">[],
  percentiles: readonly number[],
): Record<string, unknown>[] {
  const byEnd = new Map<number, Map<number, ArchiveRow<"forecasts">>>();
  for (const row of rows) {
    const points = byEnd.get(row.end_period_ts) ?? new Map<number, ArchiveRow<"forecasts">>();
    points.set(row.percentile, row);
    byEnd.set(row.end_period_ts, points);
  }
  const periods: Record<string, unknown>[] = [];
  for (const [endMs, points] of [...byEnd].sort(([a], [b]) => a - b)) {
    const chosen = percentiles.map((percentile) => points.get(percentile));
    if (!chosen.every((point): point is ArchiveRow<"forecasts"> => point !== undefined)) continue;
    const [first] = chosen as [ArchiveRow<"forecasts">];
    periods.push({
      event_ticker: first.event_ticker,
      end_period_ts: endMs / 1000,
      period_interval: first.period_interval,
      percentile_points: chosen.map((point) => ({
        percentile: point.percentile,
        raw_numerical_forecast: point.raw_numerical_forecast,
        numerical_forecast: point.numerical_forecast,
        formatted_forecast: point.formatted_forecast,
      })),
    });
  }
  return periods;
}

/** A milestone's recorded live data as GetLiveDatas lists it (`type` only when it was recorded). */
export function kalshiLiveData(row: ArchiveRow<"live_data">): Record<string, unknown> {
  return {
    ...(row.type ? { type: row.type } : {}),
    details: recordedJson(row.details, "live data"),
    milestone_id: row.milestone_id,
  };
}
