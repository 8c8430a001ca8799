/**
 * History past what the upstream keeps, from the archive, joined to the upstream's answer without a
 * gap or a duplicate:
 *   - an event's forecast periods and a market's candles older than the upstream's first are put in
 *     front of its answer (candles computed from the recorded trades, one-minute ones included);
 *   - a trade listing goes on, once the upstream's has run out, with the recorded trades older than
 *     its last, paged by a cursor of ours (`a:`);
 *   - a market's order book is answered as the venue recorded it at a moment (`?at=`).
 * The archive's files are opened, with DuckDB, at the first read that needs them.
 */
import { LRUCache } from "lru-cache";
import type { ForecastHistory } from "../contract/markets.js";
import type { UpstreamAnswer } from "../upstream/client.js";
import { UpstreamNotFoundError } from "../upstream/errors.js";
import {
  bestBids,
  type CandleQuery,
  type ForecastQuery,
  type ReferenceBook,
  type TradesQuery,
  toReferenceTrades,
} from "../upstream/relay.js";
import { candlesOf, jsonAnswer, parseBody } from "../upstream/tiers.js";
import type { ArchiveReader } from "./archive-reader.js";
import { InvalidTradeCursorError } from "./errors.js";
import { dayOf, listDays } from "./layout.js";
import { kalshiTrade } from "./replay/kalshi-answers.js";
import { recordedCandles } from "./replay/recorded-candles.js";
import {
  decodeCursor,
  encodeCursor,
  type TapeWindow,
  type TradeRow,
  tradesNewestFirst,
} from "./replay/tape.js";
import type { ArchiveRow, ArchiveTable } from "./tables.js";

/** The upstream's answer for a market it does not know (the relay throws it as UpstreamNotFoundError). */
const NOT_FOUND: UpstreamAnswer = { status: 404, contentType: "application/json", body: Buffer.alloc(0) };

/** A span of archive time, [from, to) in Unix ms. */
interface TimeRange {
  from: number;
  to: number;
}

/** How long a range found empty is not read again. */
const EMPTY_RANGE_TTL_MS = 60_000;
/** How long the first day of a table is taken as read: a new earliest day appears only by an import or a restore. */
const FIRST_DAY_MAX_AGE_MS = 60_000;
/** How a trade cursor of ours begins: the listing goes on in the archive, after the trade it names. */
const ARCHIVE_CURSOR = "a:";
const MINUTE = 60;

/** A reference trade, as the relay lists them. */
interface ListedTrade {
  tradeId: string;
  createdTime: number;
}

type ForecastPeriod = ForecastHistory["forecast_history"][number];

export class ArchiveHistory {
  private reader: Promise<ArchiveReader> | undefined;
  /**
   * The answer joined to each cached upstream answer: a settled range is joined once, not at every
   * hit (a hit is the upstream client's same object), and the joined bytes are compressed once too.
   */
  private readonly joined = new WeakMap<UpstreamAnswer, Promise<UpstreamAnswer>>();
  /**
   * Ranges found empty of an event's forecasts or a market's trades. Older than the upstream's first,
   * nothing is recorded after the fact (the recorder hears the upstream, which no longer serves them),
   * so a miss is not read again; for a minute only, as another instance's rows reach the files within
   * a flush.
   */
  private readonly empty = new LRUCache<string, TimeRange>({ max: 10_000, ttl: EMPTY_RANGE_TTL_MS });
  /** The first day each table holds, read from the archive's folders at most once a minute. */
  private readonly firstDays = new Map<ArchiveTable, { day: string; readAt: number }>();

  constructor(private readonly dir: string) {}

  /**
   * The upstream's forecast answer with the archived periods it no longer serves in front: those of
   * the range before its first period that hold every percentile asked for. Unchanged (the same
   * bytes) when the upstream covers the range's start or the archive has nothing older.
   */
  forecastHistory(eventTicker: string, q: ForecastQuery, upstream: UpstreamAnswer): Promise<UpstreamAnswer> {
    return this.once(upstream, () => this.joinForecasts(eventTicker, q, upstream));
  }

  private async joinForecasts(
    eventTicker: string,
    q: ForecastQuery,
    upstream: UpstreamAnswer,
  ): Promise<UpstreamAnswer> {
    if (upstream.status !== 200) return upstream;
    const body = parseBody(upstream) as { forecast_history?: unknown };
    if (!Array.isArray(body.forecast_history)) return upstream;
    const periodSeconds = q.periodInterval === 0 ? 5 : q.periodInterval * 60;
    const served = (body.forecast_history as { end_period_ts?: unknown }[])
      .map((period) => Number(period?.end_period_ts))
      .filter(Number.isSafeInteger);
    const firstServed = served.length > 0 ? Math.min(...served) : q.endTs + periodSeconds;
    // The upstream answers from the range's first period: nothing is missing, and the archive is not read.
    if (firstServed - periodSeconds < q.startTs) return upstream;
    if (!(await this.holdsBefore("forecasts", firstServed * 1000))) return upstream;
    const range = { from: q.startTs * 1000, to: Math.min(firstServed, q.endTs + 1) * 1000 };
    const gap = `forecasts ${eventTicker} ${q.periodInterval}`;
    if (this.knownEmpty(gap, range)) return upstream;
    const rows = await (await this.open()).rows("forecasts", {
      ...range,
      equals: { event_ticker: eventTicker, period_interval: q.periodInterval },
      orderBy: "end_period_ts",
    });
    if (rows.length === 0) this.noteEmpty(gap, range);
    const archived = completePeriods(rows, q.percentiles);
    if (archived.length === 0) return upstream;
    return jsonAnswer({ ...body, forecast_history: [...archived, ...body.forecast_history] });
  }

  /**
   * The upstream's candles of a market with the archived ones it no longer serves in front: every
   * period of the range before the upstream's first, from the market's first recorded trade on. A
   * market the upstream does not know (404) is answered from the archive when it recorded trades of it.
   * Unchanged when the upstream covers the range's start or the archive has nothing older.
   */
  async marketCandlesticks(
    ticker: string,
    q: CandleQuery,
    fromUpstream: () => Promise<UpstreamAnswer>,
  ): Promise<UpstreamAnswer> {
    let upstream: UpstreamAnswer;
    try {
      upstream = await fromUpstream();
    } catch (error) {
      if (!(error instanceof UpstreamNotFoundError)) throw error;
      const archived = await this.joinCandles(ticker, q, NOT_FOUND);
      if (archived === NOT_FOUND) throw error;
      return archived;
    }
    return this.once(upstream, () => this.joinCandles(ticker, q, upstream));
  }

  private async joinCandles(
    ticker: string,
    q: CandleQuery,
    upstream: UpstreamAnswer,
  ): Promise<UpstreamAnswer> {
    if (upstream.status !== 200 && upstream.status !== 404) return upstream;
    const body = upstream.status === 200 ? (parseBody(upstream) as Record<string, unknown>) : { ticker };
    const served = upstream.status === 200 ? candlesOf(body) : [];
    const periodSeconds = q.periodInterval * MINUTE;
    const ends = served
      .map((candle) => Number((candle as { end_period_ts?: unknown } | null)?.end_period_ts))
      .filter(Number.isSafeInteger);
    const firstServed = ends.length > 0 ? Math.min(...ends) : q.endTs + periodSeconds;
    if (firstServed - periodSeconds < q.startTs) return upstream;
    if (!(await this.holdsBefore("trades", firstServed * 1000))) return upstream;
    const lastArchived = Math.min(firstServed - periodSeconds, q.endTs);
    const range = { from: q.startTs * 1000, to: (lastArchived + 1) * 1000 };
    const gap = `candles ${ticker} ${q.periodInterval}`;
    if (this.knownEmpty(gap, range)) return upstream;
    const archived = await recordedCandles(
      await this.open(),
      ticker,
      { startTs: q.startTs, endTs: lastArchived, periodMinutes: q.periodInterval, sinceFirstTrade: true },
      range.to,
    );
    if (archived === undefined || archived.length === 0) {
      this.noteEmpty(gap, range);
      return upstream;
    }
    return jsonAnswer({ ...body, ticker, candlesticks: [...archived, ...served] });
  }

  /**
   * Trades newest first: the upstream's listing (`upstream`), then, once it has run out, the recorded
   * trades older than its last. A cursor of ours (`a:`) goes on in the archive alone.
   */
  async trades(q: TradesQuery, upstream: (q: TradesQuery) => Promise<Buffer>): Promise<Buffer> {
    if (q.cursor?.startsWith(ARCHIVE_CURSOR)) {
      const after = decodeCursor(q.cursor.slice(ARCHIVE_CURSOR.length));
      if (!after) throw new InvalidTradeCursorError();
      return tradesBody([], await this.recordedTrades(q, this.tradeWindow(q, undefined), q.limit, after));
    }
    const relayed = await upstream(q);
    const page = JSON.parse(relayed.toString("utf8")) as { trades: ListedTrade[]; cursor: string | null };
    const room = q.limit - page.trades.length;
    if (page.cursor !== null || room <= 0) return relayed;
    const oldest = page.trades.at(-1);
    // An empty page that continues an upstream cursor: where that listing ended is not known here.
    if (!oldest && q.cursor !== undefined) return relayed;
    const onPage = new Set(page.trades.map((trade) => trade.tradeId));
    // When the page reaches past its oldest trade's second, every trade the upstream has of that second
    // is on it, and the archive's others of that second are older still; otherwise they may have
    // been on the page before, and the archive goes on from the second before.
    const wholeSecond = oldest !== undefined && (page.trades[0]?.createdTime ?? 0) > oldest.createdTime;
    const before = oldest === undefined ? undefined : (oldest.createdTime + (wholeSecond ? 1 : 0)) * 1000;
    const found = await this.recordedTrades(q, this.tradeWindow(q, before), room, undefined, onPage);
    return tradesBody(page.trades, found);
  }

  /** The last book of `ticker` recorded at or before `atMs`, with at most `depth` levels a side (0: all). */
  async orderbookAt(ticker: string, atMs: number, depth = 0): Promise<ReferenceBook | undefined> {
    const [row] = await (await this.open()).rows("orderbooks", {
      to: atMs + 1,
      equals: { ticker },
      orderBy: "ts",
      descending: true,
      limit: 1,
    });
    if (!row) return undefined;
    const yes = JSON.parse(row.yes_bids) as Record<string, number>;
    const no = JSON.parse(row.no_bids) as Record<string, number>;
    return {
      yes_bids: depth > 0 ? bestBids(yes, depth) : yes,
      no_bids: depth > 0 ? bestBids(no, depth) : no,
      // Recorded books are ordered by when the venue read them, as the relay's own are.
      sequence: row.ts,
    };
  }

  /** The recorded trades a listing covers: within minTs and maxTs (whole seconds, both kept), before `beforeMs`. */
  private tradeWindow(q: TradesQuery, beforeMs: number | undefined): TapeWindow {
    const maxMs = q.maxTs === undefined ? Number.MAX_SAFE_INTEGER : (q.maxTs + 1) * 1000;
    return {
      ticker: q.ticker,
      from: q.minTs === undefined ? undefined : q.minTs * 1000,
      to: Math.min(maxMs, beforeMs ?? Number.MAX_SAFE_INTEGER),
    };
  }

  /** Up to `limit` recorded trades of `window`, newest first after `after`, leaving out `skip`; and whether more follow. */
  private async recordedTrades(
    q: TradesQuery,
    window: TapeWindow,
    limit: number,
    after?: { ms: number; id: string },
    skip: ReadonlySet<string> = new Set(),
  ): Promise<{ rows: TradeRow[]; more: boolean }> {
    const rows: TradeRow[] = [];
    if (window.from !== undefined && window.from >= window.to) return { rows, more: false };
    for await (const group of tradesNewestFirst(await this.open(), window, q.limit + 1, after)) {
      for (const row of group) if (!skip.has(row.trade_id)) rows.push(row);
      if (rows.length > limit) break;
    }
    return { rows: rows.slice(0, limit), more: rows.length > limit };
  }

  /** `join()` of an uncached answer; of a cached one, the first join's answer, kept as long as it is. */
  private once(upstream: UpstreamAnswer, join: () => Promise<UpstreamAnswer>): Promise<UpstreamAnswer> {
    if (!upstream.cached) return join();
    let answer = this.joined.get(upstream);
    if (!answer) {
      answer = join().then((joined) =>
        joined === upstream ? upstream : { ...joined, cached: true as const },
      );
      // A failed join is tried again at the next hit.
      answer.catch(() => this.joined.delete(upstream));
      this.joined.set(upstream, answer);
    }
    return answer;
  }

  /** Whether the archive was found, within the last minute, to hold nothing of `range` under `key`. */
  private knownEmpty(key: string, range: TimeRange): boolean {
    const empty = this.empty.get(key);
    return empty !== undefined && empty.from <= range.from && range.to <= empty.to;
  }

  /** Notes that the archive holds nothing of `range` under `key`, joined to what was noted if they touch. */
  private noteEmpty(key: string, range: TimeRange): void {
    const known = this.empty.get(key);
    const touches = known !== undefined && known.from <= range.to && range.from <= known.to;
    this.empty.set(
      key,
      touches ? { from: Math.min(known.from, range.from), to: Math.max(known.to, range.to) } : range,
    );
  }

  /** Whether `table` may hold rows dated before `beforeMs`: it has a day folder that early. */
  private async holdsBefore(table: ArchiveTable, beforeMs: number): Promise<boolean> {
    const now = Date.now();
    let first = this.firstDays.get(table);
    // A table with no day yet is listed again at the next ask: its first flush may have come since.
    if (!first || now - first.readAt > FIRST_DAY_MAX_AGE_MS) {
      const [day] = (await listDays(this.dir, table)).map((listed) => listed.day).sort();
      if (day === undefined) return false;
      first = { day, readAt: now };
      this.firstDays.set(table, first);
    }
    return first.day <= dayOf(beforeMs);
  }

  async close(): Promise<void> {
    const reader = await this.reader?.catch(() => undefined);
    reader?.close();
  }

  private open(): Promise<ArchiveReader> {
    this.reader ??= import("./archive-reader.js").then(({ ArchiveReader }) => ArchiveReader.open(this.dir));
    return this.reader;
  }
}

/** A page of the upstream's trades followed by recorded ones, with a cursor of ours when more are recorded. */
function tradesBody(listed: readonly unknown[], recorded: { rows: TradeRow[]; more: boolean }): Buffer {
  const last = recorded.rows.at(-1);
  const cursor =
    recorded.more && last
      ? `${ARCHIVE_CURSOR}${encodeCursor({ ms: last.created_time, id: last.trade_id })}`
      : null;
  const { trades } = toReferenceTrades({ trades: recorded.rows.map(kalshiTrade) });
  return Buffer.from(JSON.stringify({ trades: [...listed, ...trades], cursor }));
}

/** The archived periods holding every percentile asked for, in time order, in the upstream's shape. */
function completePeriods(
  rows: readonly ArchiveRow<"forecasts">[],
  percentiles: readonly number[],
): ForecastPeriod[] {
  const byEnd = new Map<number, Map<number, ArchiveRow<"forecasts">>>();
  for (const row of rows) {
    const points = byEnd.get(row.end_period_ts) ?? new Map<number, ArchiveRow<"forecasts">>();
    points.set(row.percentile, row);
    byEnd.set(row.end_period_ts, points);
  }
  const periods: ForecastPeriod[] = [];
  for (const [endMs, points] of [...byEnd].sort(([a], [b]) => a - b)) {
    const chosen = percentiles.map((percentile) => points.get(percentile));
    if (chosen.some((point) => point === undefined)) continue;
    const first = chosen[0] as ArchiveRow<"forecasts">;
    periods.push({
      event_ticker: first.event_ticker,
      end_period_ts: endMs / 1000,
      period_interval: first.period_interval,
      percentile_points: (chosen as ArchiveRow<"forecasts">[]).map((point) => ({
        percentile: point.percentile,
        raw_numerical_forecast: point.raw_numerical_forecast,
        numerical_forecast: point.numerical_forecast,
        formatted_forecast: point.formatted_forecast,
      })),
    });
  }
  return periods;
}
