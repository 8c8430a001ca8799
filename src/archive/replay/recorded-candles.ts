/**
 * Candles of a market computed from the recorded trade tape, in Kalshi's GetMarketCandlesticks shape:
 * what the replay upstream serves for any range, and what the live venue serves for the part of a
 * range older than its upstream keeps.
 */
import type { ArchiveReader } from "../archive-reader.js";
import { InvalidArchiveQueryError } from "../errors.js";
import { addTrade, basisPointsOf, kalshiCandle, type PeriodTrades, recordedJson } from "./kalshi-answers.js";
import { lastRow, latest } from "./last-row.js";
import { newestTrade, tradesOldestFirst } from "./tape.js";

/** The most periods one candlestick request may cover, as Kalshi (and the simulator) limit them. */
export const MAX_CANDLE_PERIODS = 5_000;
/** Trades one candlestick request reads at most; a range holding more is refused. */
const MAX_CANDLE_TRADES = 1_000_000;
/** Trades read from the archive at once while computing candles. */
const CANDLE_BLOCK = 20_000;
const MINUTE = 60;

/** A candle range: periods of `periodMinutes` ending within [startTs, endTs] (Unix seconds). */
export interface CandleRange {
  startTs: number;
  endTs: number;
  periodMinutes: number;
  /** Put the period ending just before the first in front, as Kalshi's `include_latest_before_start` does. */
  includeLatestBeforeStart?: boolean;
  /**
   * Periods start at the market's first recorded trade rather than its listing: a venue that joins
   * recorded candles to an upstream's vouches only for what it saw.
   */
  sinceFirstTrade?: boolean;
}

/** What the archive's catalogue knew of a market by `now`: when it traded, and its open interest. */
interface MarketSpan {
  openTime: number;
  closeTime: number;
  openInterest: number;
  openInterestFp: string;
}

async function marketSpan(
  reader: ArchiveReader,
  ticker: string,
  now: number,
): Promise<MarketSpan | undefined> {
  const row = await lastRow(reader, "catalogue", { kind: "market", ticker }, now + 1);
  if (!row) return undefined;
  const record = recordedJson(row.record, "a catalogue record") as Record<string, unknown> | null;
  const { openTime, closeTime, openInterest, openInterestFp } = record ?? {};
  if (!Number.isSafeInteger(openTime) || !Number.isSafeInteger(closeTime)) return undefined;
  const interest = typeof openInterest === "number" && Number.isFinite(openInterest) ? openInterest : 0;
  return {
    openTime: openTime as number,
    closeTime: closeTime as number,
    openInterest: Math.floor(interest),
    openInterestFp: typeof openInterestFp === "string" ? openInterestFp : interest.toFixed(2),
  };
}

/** Ends of the periods of `seconds` that close within [start, end] and while `from ≤ t ≤ until` (the simulator's rule). */
function periodEnds(start: number, end: number, seconds: number, from: number, until: number): number[] {
  if (start > end) throw new InvalidArchiveQueryError("start_ts must not be after end_ts");
  const first = Math.ceil(Math.max(start, from) / seconds) * seconds;
  const last = Math.min(end, Math.ceil(until / seconds) * seconds);
  const count = first > last ? 0 : Math.floor((last - first) / seconds) + 1;
  if (count > MAX_CANDLE_PERIODS) {
    throw new InvalidArchiveQueryError(
      `the range covers ${count} periods; at most ${MAX_CANDLE_PERIODS} may be asked for at once`,
    );
  }
  return Array.from({ length: count }, (_, i) => first + i * seconds);
}

/**
 * A market's candles over [start, end] as of `now` (ms), from the recorded tape. Periods run from the
 * market's opening (the catalogue's record, or else its first recorded trade) to its close or `now`,
 * whichever comes first; a trade belongs to the period (end − interval, end]. A market the archive
 * neither lists nor saw trade by `now` has none: undefined.
 */
export async function recordedCandles(
  reader: ArchiveReader,
  ticker: string,
  q: CandleRange,
  now: number,
): Promise<Record<string, unknown>[] | undefined> {
  const periodSeconds = q.periodMinutes * MINUTE;
  const span = await marketSpan(reader, ticker, now);
  let opened: number;
  if (span && !q.sinceFirstTrade) {
    opened = span.openTime + 1;
  } else {
    const [first] = await reader.rows("trades", {
      to: now + 1,
      equals: { ticker },
      orderBy: "created_time",
      limit: 1,
    });
    if (!first) return undefined;
    opened = Math.ceil(first.created_time / 1000);
  }
  const until = Math.min(now / 1000, span?.closeTime ?? Number.POSITIVE_INFINITY);
  // With include_latest_before_start, the period ending just before the first is put in front, as Kalshi does.
  const start = q.includeLatestBeforeStart ? Math.max(0, q.startTs - periodSeconds) : q.startTs;
  const ends = periodEnds(start, q.endTs, periodSeconds, opened, until);
  const [firstEnd] = ends;
  const lastEnd = ends.at(-1);
  if (firstEnd === undefined || lastEnd === undefined) return [];
  const firstStartMs = (firstEnd - periodSeconds) * 1000;
  const before = await latest(firstStartMs + 1, (from) =>
    newestTrade(reader, { ticker, from, to: firstStartMs + 1 }),
  );
  const periods = new Map<number, PeriodTrades>();
  let read = 0;
  const window = { ticker, from: firstStartMs + 1, to: Math.min(lastEnd * 1000, now) + 1 };
  for await (const group of tradesOldestFirst(reader, window, CANDLE_BLOCK)) {
    read += group.length;
    if (read > MAX_CANDLE_TRADES) {
      throw new InvalidArchiveQueryError(
        `the range holds over ${MAX_CANDLE_TRADES} recorded trades; ask for a shorter one`,
      );
    }
    for (const trade of group) {
      const end = Math.ceil(trade.created_time / (periodSeconds * 1000)) * periodSeconds;
      periods.set(end, addTrade(periods.get(end), basisPointsOf(trade.yes_price), trade.count));
    }
  }
  const openInterest = { count: span?.openInterest ?? 0, fp: span?.openInterestFp ?? "0.00" };
  let previous = before ? basisPointsOf(before.yes_price) : null;
  return ends.map((end) => {
    const traded = periods.get(end);
    const candle = kalshiCandle(end, traded, previous, openInterest);
    if (traded) previous = traded.close;
    return candle;
  });
}
