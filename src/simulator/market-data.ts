/**
 * The simulator's time series: trades, candlesticks and forecast percentile history, each computed
 * from the markets' seeded motion for exactly the range asked, never past the exchange's `now`.
 */
import { ONE_DOLLAR, type SimulatedTrade } from "./dynamics.js";
import type { SimulatedEvent, SimulatedMarket } from "./exchange.js";
import { formatForecast, impliedCdf, quantileOf } from "./forecast.js";
import { contracts, dollars, kalshiTrade } from "./kalshi-json.js";
import type { TradePrints } from "./trade-prints.js";

const MINUTE = 60;
/** The most periods one candlestick or forecast request may cover, as Kalshi limits them. */
export const MAX_PERIODS = 5_000;
/** How far back a trade listing across every market looks before it stops. */
const ALL_MARKETS_LOOKBACK_MINUTES = 7 * 24 * 60;

/** A request the exchange refuses, with Kalshi's status and code. */
export class ExchangeRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** What Kalshi puts in `details` when it says more than the message (the message itself otherwise). */
    readonly details?: string,
  ) {
    super(message);
  }
}

export interface TradesRequest {
  markets: readonly SimulatedMarket[];
  limit: number;
  cursor?: string | undefined;
  minTs?: number | undefined;
  maxTs?: number | undefined;
  /** The accounts' trades, printed beside the seeded ones. */
  prints?: TradePrints | undefined;
}

/** `market`'s trades in Unix minute `minute`: the seeded one of its dynamics, and the accounts' prints. */
export function tradesInMinute(
  market: SimulatedMarket,
  minute: number,
  prints: TradePrints | undefined,
): SimulatedTrade[] {
  const seeded = market.dynamics.tradeInMinute(minute);
  const printed = prints?.inMinute(market.record.ticker, minute) ?? [];
  return seeded ? [seeded, ...printed] : printed;
}

/** Trades newest first, `limit` at a time; the cursor names the last trade returned. */
export function listTrades(request: TradesRequest, now: number): { trades: unknown[]; cursor: string } {
  let until = Math.min(request.maxTs ?? now, now);
  let after: { time: number; id: string } | undefined;
  if (request.cursor) {
    const [time, id] = request.cursor.split("_");
    if (!/^\d+$/.test(time ?? "") || !id)
      throw new ExchangeRequestError(400, "bad_request", "invalid cursor");
    after = { time: Number(time), id };
    until = Math.min(until, after.time);
  }
  const single = request.markets.length === 1;
  const earliestOpen = Math.min(...request.markets.map((m) => m.record.openTime));
  const since = Math.max(
    request.minTs ?? 0,
    earliestOpen,
    single ? 0 : until - ALL_MARKETS_LOOKBACK_MINUTES * MINUTE,
  );
  const live = request.markets.filter((m) => m.record.openTime <= until && m.record.closeTime > since);
  const trades: SimulatedTrade[] = [];
  for (let minute = Math.floor(until / MINUTE); minute * MINUTE + MINUTE > since; minute--) {
    const found: SimulatedTrade[] = [];
    for (const market of live) {
      for (const trade of tradesInMinute(market, minute, request.prints)) {
        if (trade.time > until || trade.time < since) continue;
        if (after && (trade.time > after.time || (trade.time === after.time && trade.tradeId >= after.id)))
          continue;
        found.push(trade);
      }
    }
    found.sort((a, b) => b.time - a.time || (a.tradeId < b.tradeId ? 1 : -1));
    trades.push(...found);
    if (trades.length >= request.limit) break;
  }
  const page = trades.slice(0, request.limit);
  const last = page[page.length - 1];
  return {
    trades: page.map(kalshiTrade),
    cursor: page.length === request.limit && last ? `${last.time}_${last.tradeId}` : "",
  };
}

/** Ends of the periods of `seconds` that close within [start, end] and while `from ≤ t ≤ until`. */
function periodEnds(start: number, end: number, seconds: number, from: number, until: number): number[] {
  if (start > end) throw new ExchangeRequestError(400, "bad_request", "start_ts must not be after end_ts");
  const first = Math.ceil(Math.max(start, from) / seconds) * seconds;
  const last = Math.min(end, Math.ceil(until / seconds) * seconds);
  const count = first > last ? 0 : Math.floor((last - first) / seconds) + 1;
  if (count > MAX_PERIODS) {
    throw new ExchangeRequestError(
      400,
      "bad_request",
      `the range covers ${count} periods; at most ${MAX_PERIODS} may be asked for at once`,
    );
  }
  return Array.from({ length: count }, (_, i) => first + i * seconds);
}

interface Ohlc {
  open: number;
  low: number;
  high: number;
  close: number;
}

function ohlc(values: readonly number[]): Ohlc {
  return {
    open: values[0] as number,
    low: Math.min(...values),
    high: Math.max(...values),
    close: values[values.length - 1] as number,
  };
}

/** Kalshi's distribution object: integer cents and their `_dollars` twins. */
function distribution(values: Partial<Record<string, number | null>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, bp] of Object.entries(values)) {
    out[name] = bp == null ? null : Math.round(bp / 100);
    out[`${name}_dollars`] = bp == null ? null : dollars(bp);
  }
  return out;
}

/** One market's candlesticks of `intervalMinutes` over [start, end]. */
export function candlesticks(
  market: SimulatedMarket,
  start: number,
  end: number,
  intervalMinutes: number,
  now: number,
  prints?: TradePrints,
): Record<string, unknown>[] {
  const seconds = intervalMinutes * MINUTE;
  const { record, dynamics } = market;
  const tradingUntil = Math.min(now, record.closeTime);
  const ends = periodEnds(start, end, seconds, record.openTime + 1, tradingUntil);
  // Quotes are sampled at most 60 times a period; trades are read minute by minute.
  const step = Math.max(MINUTE, seconds / 60);
  let previous: number | null = null;
  return ends.map((periodEnd) => {
    const periodStart = periodEnd - seconds;
    const bids: number[] = [];
    const asks: number[] = [];
    for (let t = Math.max(periodStart, record.openTime); t <= Math.min(periodEnd, tradingUntil); t += step) {
      const quote = dynamics.quoteAt(t, "active");
      if (quote) {
        bids.push(quote.yesBid);
        asks.push(quote.yesAsk);
      }
    }
    const prices: number[] = [];
    let volume = 0;
    // A period is (start, end]: a trade at its very end is its last, in the minute that end begins.
    for (let minute = Math.floor(periodStart / MINUTE); minute <= Math.floor(periodEnd / MINUTE); minute++) {
      for (const trade of tradesInMinute(market, minute, prints)) {
        if (trade.time > periodStart && trade.time <= Math.min(periodEnd, now)) {
          prices.push(trade.yesPrice);
          volume += trade.count;
        }
      }
    }
    const traded = prices.length > 0 ? ohlc(prices) : null;
    const candle = {
      end_period_ts: periodEnd,
      yes_bid: distribution({ ...(bids.length > 0 ? ohlc(bids) : {}) }),
      yes_ask: distribution({ ...(asks.length > 0 ? ohlc(asks) : {}) }),
      price: distribution({
        open: traded?.open ?? null,
        low: traded?.low ?? null,
        high: traded?.high ?? null,
        close: traded?.close ?? null,
        mean: traded ? Math.round(prices.reduce((a, b) => a + b, 0) / prices.length) : null,
        previous,
      }),
      volume,
      volume_fp: contracts(volume),
      open_interest: record.openInterest,
      open_interest_fp: contracts(record.openInterest),
    };
    if (traded) previous = traded.close;
    return candle;
  });
}

/** The forecast percentile history of an event, or a 400 when its markets have no numeric strikes. */
export function forecastHistory(
  event: SimulatedEvent,
  percentiles: readonly number[],
  start: number,
  end: number,
  intervalMinutes: number,
  now: number,
): { forecast_history: unknown[] } {
  const { strikes } = event;
  if (!strikes) {
    throw new ExchangeRequestError(
      400,
      "bad_request",
      `event ${event.record.ticker} has no numeric strikes, so it has no forecast`,
    );
  }
  // Interval 0 asks for five-second periods.
  const seconds = intervalMinutes === 0 ? 5 : intervalMinutes * MINUTE;
  const markets = event.markets.filter((m) => strikes.byTicker.has(m.record.ticker));
  const opened = Math.min(...markets.map((m) => m.record.openTime));
  const closed = Math.max(...markets.map((m) => m.record.closeTime));
  const ends = periodEnds(start, end, seconds, opened + 1, Math.min(now, closed));
  const history = ends.map((periodEnd) => {
    const beliefs = new Map(markets.map((m) => [m.record.ticker, m.dynamics.probabilityAt(periodEnd)]));
    const knots = impliedCdf(strikes, beliefs);
    return {
      event_ticker: event.record.ticker,
      end_period_ts: periodEnd,
      period_interval: intervalMinutes,
      percentile_points: percentiles.map((percentile) => {
        const raw = quantileOf(knots, percentile / ONE_DOLLAR);
        const rounded = Number(raw.toFixed(strikes.digits));
        return {
          percentile,
          raw_numerical_forecast: raw,
          numerical_forecast: rounded,
          formatted_forecast: formatForecast(rounded, strikes),
        };
      }),
    };
  });
  return { forecast_history: history };
}

/**
 * A candle as GetMarketCandlesticksHistorical sends it: dollar strings in place of cents and their
 * `_dollars` twins, fixed-point counts in place of integers.
 */
export function historicalCandle(candle: Record<string, unknown>): Record<string, unknown> {
  const dollarsOnly = (distribution: unknown) =>
    Object.fromEntries(
      Object.entries(distribution as Record<string, unknown>)
        .filter(([name]) => name.endsWith("_dollars"))
        .map(([name, value]) => [name.slice(0, -"_dollars".length), value]),
    );
  return {
    end_period_ts: candle.end_period_ts,
    yes_bid: dollarsOnly(candle.yes_bid),
    yes_ask: dollarsOnly(candle.yes_ask),
    price: dollarsOnly(candle.price),
    volume: candle.volume_fp,
    open_interest: candle.open_interest_fp,
  };
}
