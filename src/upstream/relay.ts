/**
 * Relay policy (contract §5): which upstream call each relayed operation makes, what may be cached,
 * and how upstream answers become ours. Forecast history and candlesticks pass the upstream's 200 body
 * through byte for byte; order books and trades are reshaped into the reference's camelCase/bids form.
 * Candlesticks and trades reaching back before Kalshi's historical cutoff are read from both tiers and
 * joined (tiers.ts).
 */
import { answerJson, type Upstream, type UpstreamAnswer } from "./client.js";
import { UpstreamError, UpstreamNotFoundError, type UpstreamSubject } from "./errors.js";
import { type Cutoffs, candlesOf, jsonAnswer, liveCandle, parseBody, readCutoffs } from "./tiers.js";

/** An answer younger than this may still gain late data upstream, so it is never cached. */
const SETTLE_SECONDS = 60;
/** The most candles one relayed candlestick request may ask for (the reference refuses more). */
export const MAX_CANDLES = 5_000;

export interface ForecastQuery {
  percentiles: readonly number[];
  startTs: number;
  endTs: number;
  /** Minutes; 0 means 5-second buckets. */
  periodInterval: number;
}

/** The most milestone ids one live-data request takes (the reference's bound, and Kalshi's). */
export const MAX_MILESTONE_IDS = 100;
/**
 * How long an event's milestones are kept: they are scheduled well ahead and seldom change, while
 * every by-event or by-mint call needs them before its live data (which has its own, stricter rule).
 */
const MILESTONES_MAX_AGE_MS = 30_000;
/** Milestones of one event taken at most (a game has a handful): past it the upstream is not believed. */
const MAX_EVENT_MILESTONES = 1_000;
/** Live-data batches of one event asked for at once. */
const BATCHES_AT_ONCE = 4;
/** The most bytes of live data joined into one by-event answer. */
const MAX_JOINED_LIVE_DATA_BYTES = 8 * 1024 * 1024;
/** A milestone id as the upstream writes them (Kalshi's are UUIDs): URL-safe, at most 128 characters. */
export const MILESTONE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Pages of an event's milestones read at most: far more than any event has. */
/** Historical markets of one event joined into its candlesticks at most (Kalshi's events have dozens). */
const MAX_EVENT_HISTORICAL_MARKETS = 200;
/** A trade cursor of ours that continues a listing in the historical tier: the prefix, then Kalshi's cursor. */
const HISTORICAL_CURSOR = "h:";
const MAX_MILESTONE_PAGES = 5;
/** Live-data statuses after which nothing changes any more: a finished game, a final reading. */
const FINAL_LIVE_STATUSES = new Set([
  "closed",
  "complete",
  "completed",
  "final",
  "finished",
  "ended",
  "released",
]);

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** Unix seconds of an RFC 3339 timestamp (`minimumStartDate`'s format), or undefined when it names no real moment. */
export function rfc3339Seconds(value: string): number | undefined {
  const match = value.length <= 40 ? RFC3339.exec(value) : null;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  const [offsetHours, offsetMinutes] = [Number(match[9] ?? 0), Number(match[10] ?? 0)];
  // Date.parse would roll 31 April over into May: a real date reads back the same day.
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day as number));
  if (
    date.getUTCMonth() !== (month as number) - 1 ||
    date.getUTCDate() !== day ||
    (hour as number) > 23 ||
    (minute as number) > 59 ||
    (second as number) > 59 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return undefined;
  }
  const ms = Date.parse(value.toUpperCase());
  // In UTC still a four-digit year (an offset can push 0001-01-01 or 9999-12-31 past it), as RFC 3339 writes it.
  if (!Number.isFinite(ms) || ms < FIRST_RFC3339_MS || ms > LAST_RFC3339_MS) return undefined;
  return Math.floor(ms / 1000);
}

const FIRST_RFC3339_MS = new Date("0001-01-01T00:00:00Z").getTime();
const LAST_RFC3339_MS = new Date("9999-12-31T23:59:59Z").getTime();

/** The reference's filters of an event's milestones (Kalshi's GetMilestones filters). */
export interface MilestoneFilters {
  /** RFC 3339. */
  minimumStartDate?: string | undefined;
  category?: string | undefined;
  competition?: string | undefined;
  sourceId?: string | undefined;
  type?: string | undefined;
}

export interface CandleQuery {
  startTs: number;
  endTs: number;
  /** Minutes: 1, 60 or 1440. */
  periodInterval: number;
}

export interface TradesQuery {
  ticker?: string | undefined;
  limit: number;
  cursor?: string | undefined;
  minTs?: number | undefined;
  maxTs?: number | undefined;
}

/** The relayed operations, independent of HTTP routing. */
export class MarketRelay {
  /** The cutoffs last read from the upstream (undefined before the first reading). */
  private lastCutoffs: Cutoffs | null | undefined;

  constructor(
    private readonly upstream: Upstream,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** The upstream's forecast percentile history for an event, as the upstream sent it. */
  async forecastHistory(
    seriesTicker: string,
    eventTicker: string,
    q: ForecastQuery,
  ): Promise<UpstreamAnswer> {
    const query = new URLSearchParams();
    // Kalshi's own client sends an array parameter as repeated keys.
    for (const percentile of q.percentiles) query.append("percentiles", String(percentile));
    query.set("start_ts", String(q.startTs));
    query.set("end_ts", String(q.endTs));
    query.set("period_interval", String(q.periodInterval));
    const path = `series/${encodeURIComponent(seriesTicker)}/events/${encodeURIComponent(eventTicker)}/forecast_percentile_history`;
    const answer = await this.upstream.get(path, query, { cacheable: this.isSettled(q.endTs) });
    return passThrough(answer, "event", `event ${eventTicker} has no forecast history upstream`);
  }

  /**
   * The upstream's candlesticks of one market, as the upstream sent them; a market the live tier no
   * longer has (settled before the cutoff) is read from the historical tier, in the live shape.
   */
  async marketCandlesticks(seriesTicker: string, ticker: string, q: CandleQuery): Promise<UpstreamAnswer> {
    const path = `series/${encodeURIComponent(seriesTicker)}/markets/${encodeURIComponent(ticker)}/candlesticks`;
    const { live, joinable } = await this.liveCandles(path, q);
    const notFound = `market ${ticker} has no candlesticks upstream`;
    if (!joinable) return passThrough(live, "market", notFound);
    // A market is wholly in one tier: live candles, when there are any, are all of them.
    if (live.status === 200 && candlesOf(parseBody(live)).length > 0) return live;
    const historical = await this.historicalCandles(ticker, q);
    return historical === null
      ? passThrough(live, "market", notFound)
      : jsonAnswer({ ticker, candlesticks: historical });
  }

  /**
   * The upstream's candlesticks of every market of an event, as the upstream sent them; when the range
   * reaches before the cutoff, the event's historical markets follow the live ones, in the live shape.
   */
  async eventCandlesticks(
    seriesTicker: string,
    eventTicker: string,
    q: CandleQuery,
  ): Promise<UpstreamAnswer> {
    const path = `series/${encodeURIComponent(seriesTicker)}/events/${encodeURIComponent(eventTicker)}/candlesticks`;
    const { live, joinable } = await this.liveCandles(path, q);
    const notFound = `event ${eventTicker} has no candlesticks upstream`;
    if (!joinable) return passThrough(live, "event", notFound);
    const liveBody = (live.status === 200 ? parseBody(live) : {}) as Record<string, unknown>;
    const liveTickers = Array.isArray(liveBody.market_tickers) ? (liveBody.market_tickers as unknown[]) : [];
    const liveCandles = Array.isArray(liveBody.market_candlesticks) ? liveBody.market_candlesticks : [];
    const missing = (await this.historicalMarketsOf(eventTicker)).filter((t) => !liveTickers.includes(t));
    if (missing.length === 0) return passThrough(live, "event", notFound);
    const historical: unknown[][] = [];
    for (let i = 0; i < missing.length; i += BATCHES_AT_ONCE) {
      const batch = missing.slice(i, i + BATCHES_AT_ONCE);
      for (const candles of await Promise.all(batch.map((t) => this.historicalCandles(t, q)))) {
        historical.push(candles ?? []);
      }
    }
    return jsonAnswer({
      market_tickers: [...liveTickers, ...missing],
      market_candlesticks: [...liveCandles, ...historical],
      adjusted_end_ts: liveBody.adjusted_end_ts ?? Math.min(q.endTs, this.nowSeconds()),
    });
  }

  /**
   * The live tier's answer for a candle range, and whether the historical tier may hold more of it:
   * when the range reaches before the cutoff and the live tier found nothing wrong but the market.
   */
  private async liveCandles(
    path: string,
    q: CandleQuery,
  ): Promise<{ live: UpstreamAnswer; joinable: boolean }> {
    const [cutoffs, live] = await Promise.all([
      this.cutoffs(),
      this.upstream.get(path, candleQuery(q), { cacheable: this.isSettled(q.endTs) }),
    ]);
    return { live, joinable: reachesBefore(q, cutoffs) && (live.status === 404 || live.status === 200) };
  }

  /** A historical market's candles in the live shape, or null when the historical tier has no such market. */
  private async historicalCandles(ticker: string, q: CandleQuery): Promise<unknown[] | null> {
    const answer = await this.upstream.get(
      `historical/markets/${encodeURIComponent(ticker)}/candlesticks`,
      candleQuery(q),
      // Historical candles never change once served.
      { cacheable: true },
    );
    if (answer.status === 404) return null;
    const body = parseBody(passThrough(answer, "market", `market ${ticker} has no candlesticks upstream`));
    return candlesOf(body).map(liveCandle);
  }

  /** The tickers of an event's markets that only the historical tier serves. */
  private async historicalMarketsOf(eventTicker: string): Promise<string[]> {
    const query = new URLSearchParams({
      event_ticker: eventTicker,
      limit: String(MAX_EVENT_HISTORICAL_MARKETS),
    });
    const answer = await this.upstream.get("historical/markets", query, { maxAgeMs: MILESTONES_MAX_AGE_MS });
    if (answer.status === 404) return [];
    const { markets } = (parseBody(
      passThrough(answer, "event", `event ${eventTicker} has no markets upstream`),
    ) ?? {}) as { markets?: unknown };
    if (!Array.isArray(markets)) {
      throw new UpstreamError(
        "unavailable",
        "the upstream exchange sent historical markets without a markets list",
      );
    }
    const tickers = markets.map((m) => (m as { ticker?: unknown } | null)?.ticker);
    if (!tickers.every((t): t is string => typeof t === "string" && t.length > 0 && t.length <= 128)) {
      throw new UpstreamError(
        "unavailable",
        "the upstream exchange sent a historical market without a ticker",
      );
    }
    return tickers;
  }

  /**
   * The upstream's cutoffs (kept a minute), or null when it has no historical tier. While the upstream
   * fails to say, the last cutoffs it did say stand in: they only move forward, and slowly.
   */
  private async cutoffs(): Promise<Cutoffs | null> {
    try {
      this.lastCutoffs = await readCutoffs(this.upstream);
    } catch (error) {
      if (this.lastCutoffs === undefined) throw error;
    }
    return this.lastCutoffs;
  }

  /**
   * A market's order book as `{yes_bids, no_bids, sequence}` (price string → whole contracts), with at
   * most `depth` best price levels a side (0 or none: every level).
   */
  async orderbook(ticker: string, depth = 0): Promise<Buffer> {
    return Buffer.from(JSON.stringify(await this.orderbookLevels(ticker, depth)));
  }

  /** A market's order book, parsed: what the prediction venue prices from. `depth` as `orderbook`'s. */
  async orderbookLevels(ticker: string, depth = 0): Promise<ReferenceBook> {
    // Kalshi's own `depth`; the book is cut here too, as levels merge once read as 4-digit prices.
    const query = depth > 0 ? new URLSearchParams({ depth: String(depth) }) : undefined;
    const answer = await this.upstream.get(`markets/${encodeURIComponent(ticker)}/orderbook`, query);
    const body = parseBody(passThrough(answer, "orderbook", `market ${ticker} has no order book`));
    const book = reshaped(() => toReferenceBook(body));
    return depth > 0
      ? { ...book, yes_bids: bestBids(book.yes_bids, depth), no_bids: bestBids(book.no_bids, depth) }
      : book;
  }

  /**
   * Trades, newest first, as `{trades, cursor}` in the reference's camelCase shape. The live tape is
   * read first; once it runs out, a listing reaching before the trades cutoff goes on into the
   * historical tape, and a page that ends there carries a cursor of ours (`h:` and Kalshi's cursor).
   */
  async trades(q: TradesQuery): Promise<Buffer> {
    const notFound = `market ${q.ticker ?? ""} has no trades upstream`;
    if (q.cursor?.startsWith(HISTORICAL_CURSOR)) {
      const cursor = q.cursor.slice(HISTORICAL_CURSOR.length);
      const page = await this.tradePage("historical/trades", { ...q, cursor: cursor || undefined }, notFound);
      return tradesBody(page.trades, historicalCursor(page.cursor));
    }
    const [cutoffs, live] = await Promise.all([
      this.cutoffs(),
      this.tradePage("markets/trades", q, notFound),
    ]);
    if (live.cursor !== null || cutoffs === null || (q.minTs ?? 0) >= cutoffs.tradesCreated) {
      return tradesBody(live.trades, live.cursor);
    }
    // Each trade is in one tier: the historical tape ends within the cutoff's second, the live one starts in it.
    const maxTs = Math.min(q.maxTs ?? Number.POSITIVE_INFINITY, Math.floor(cutoffs.tradesCreated));
    const room = q.limit - live.trades.length;
    // With the page full, one historical trade is enough to tell whether a next page exists.
    const older = await this.tradePage(
      "historical/trades",
      { ...q, cursor: undefined, maxTs, limit: Math.max(room, 1) },
      notFound,
    );
    if (room === 0) return tradesBody(live.trades, older.trades.length > 0 ? HISTORICAL_CURSOR : null);
    const seen = new Set(live.trades.map((t) => (t as { tradeId: string }).tradeId));
    const joined = [
      ...live.trades,
      ...older.trades.filter((t) => !seen.has((t as { tradeId: string }).tradeId)),
    ];
    return tradesBody(joined, historicalCursor(older.cursor));
  }

  /** One page of a tape (`markets/trades` or `historical/trades`), reshaped. */
  private async tradePage(
    path: string,
    q: TradesQuery,
    notFound: string,
  ): Promise<{ trades: unknown[]; cursor: string | null }> {
    const query = new URLSearchParams({ limit: String(q.limit) });
    if (q.ticker) query.set("ticker", q.ticker);
    if (q.cursor) query.set("cursor", q.cursor);
    if (q.minTs !== undefined) query.set("min_ts", String(q.minTs));
    if (q.maxTs !== undefined) query.set("max_ts", String(q.maxTs));
    const answer = await this.upstream.get(path, query);
    const page = parseBody(passThrough(answer, "market", notFound));
    return reshaped(() => toReferenceTrades(page));
  }

  /** Live data of milestones by id (at most 100), as the upstream sent it; kept once every one is final. */
  async liveData(milestoneIds: readonly string[]): Promise<UpstreamAnswer> {
    const query = new URLSearchParams();
    // Kalshi reads the ids as repeated keys (a comma-joined list matches nothing).
    for (const id of milestoneIds) query.append("milestone_ids", id);
    const answer = await this.upstream.get("live_data/batch", query, { cacheableIf: allLiveDataFinal });
    return passThrough(answer, "event", "the upstream exchange has no such milestones");
  }

  /**
   * Live data of every milestone of an event that passes `filters`, asked for 100 milestones at a time;
   * one batch is passed through unchanged, several are joined into one `live_datas` list.
   */
  async liveDataByEvent(eventTicker: string, filters: MilestoneFilters): Promise<UpstreamAnswer> {
    const ids = await this.milestoneIdsOf(eventTicker, filters);
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += MAX_MILESTONE_IDS) batches.push(ids.slice(i, i + MAX_MILESTONE_IDS));
    // A few batches at a time, and no more bytes joined than a client should get at once.
    const answers: UpstreamAnswer[] = [];
    let bytes = 0;
    for (let i = 0; i < batches.length; i += BATCHES_AT_ONCE) {
      for (const answer of await Promise.all(
        batches.slice(i, i + BATCHES_AT_ONCE).map((b) => this.liveData(b)),
      )) {
        bytes += answer.body.length;
        if (bytes > MAX_JOINED_LIVE_DATA_BYTES)
          throw new UpstreamError(
            "unavailable",
            `the upstream exchange sent over ${MAX_JOINED_LIVE_DATA_BYTES} bytes of live data for event ${eventTicker}`,
          );
        answers.push(answer);
      }
    }
    if (answers.length === 1) return answers[0] as UpstreamAnswer;
    const liveDatas = answers.flatMap((answer) => liveDatasOf(parseBody(answer)));
    return {
      status: 200,
      contentType: "application/json; charset=utf-8",
      body: Buffer.from(JSON.stringify({ live_datas: liveDatas })),
    };
  }

  /** The ids of the upstream's milestones related to an event, with the filters applied upstream. */
  private async milestoneIdsOf(eventTicker: string, filters: MilestoneFilters): Promise<string[]> {
    const query = new URLSearchParams({
      limit: String(MAX_MILESTONE_IDS),
      related_event_ticker: eventTicker,
    });
    if (filters.minimumStartDate !== undefined) query.set("minimum_start_date", filters.minimumStartDate);
    if (filters.category !== undefined) query.set("category", filters.category);
    if (filters.competition !== undefined) query.set("competition", filters.competition);
    if (filters.sourceId !== undefined) query.set("source_id", filters.sourceId);
    if (filters.type !== undefined) query.set("type", filters.type);
    const ids = new Set<string>();
    for (let page = 0; page < MAX_MILESTONE_PAGES; page++) {
      const answer = await this.upstream.get("milestones", query, { maxAgeMs: MILESTONES_MAX_AGE_MS });
      const { ids: pageIds, cursor } = milestonePage(
        passThrough(answer, "event", `event ${eventTicker} has no milestones upstream`),
        eventTicker,
      );
      for (const id of pageIds) ids.add(id);
      if (ids.size > MAX_EVENT_MILESTONES)
        throw new UpstreamError(
          "unavailable",
          `the upstream exchange lists over ${MAX_EVENT_MILESTONES} milestones for event ${eventTicker}`,
        );
      if (cursor === undefined) break;
      query.set("cursor", cursor);
    }
    return [...ids];
  }

  private isSettled(endTs: number): boolean {
    return endTs + SETTLE_SECONDS <= this.nowSeconds();
  }
}

/** Whether a candle range may hold candles of markets settled before the cutoff: a period ends after its market settles. */
function reachesBefore(q: CandleQuery, cutoffs: Cutoffs | null): boolean {
  return cutoffs !== null && q.startTs < cutoffs.marketSettled + q.periodInterval * 60;
}

function tradesBody(trades: unknown[], cursor: string | null): Buffer {
  return Buffer.from(JSON.stringify({ trades, cursor }));
}

/** Our cursor for a historical page's `cursor`: null at the end of the tape. */
function historicalCursor(cursor: string | null): string | null {
  return cursor === null ? null : `${HISTORICAL_CURSOR}${cursor}`;
}

function candleQuery(q: CandleQuery): URLSearchParams {
  return new URLSearchParams({
    start_ts: String(q.startTs),
    end_ts: String(q.endTs),
    period_interval: String(q.periodInterval),
  });
}

/** Returns a 2xx answer; a 404 means the upstream has no such `subject`, a 400 that it refused the request. */
function passThrough(
  answer: UpstreamAnswer,
  subject: UpstreamSubject,
  notFoundMessage: string,
): UpstreamAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  if (answer.status === 404) throw new UpstreamNotFoundError(subject, notFoundMessage);
  if (answer.status === 400 || answer.status === 422) {
    throw new UpstreamError(
      "rejected",
      `the upstream exchange refused the request: ${upstreamMessage(answer)}`,
    );
  }
  // 401/403: our credentials, not the caller's request, are at fault.
  throw new UpstreamError(
    "unavailable",
    `the upstream exchange answered ${answer.status}: ${upstreamMessage(answer)}`,
  );
}

/** The message of a Kalshi error body (`{error: {code, message}}` or `{error: "..."}`), else its text. */
function upstreamMessage(answer: UpstreamAnswer): string {
  const text = answer.body.toString("utf8").slice(0, 500);
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error;
    if (typeof error === "string") return error;
    if (error && typeof error === "object") {
      const { message, code, details } = error as Record<string, unknown>;
      return [message ?? code, details].filter((part) => typeof part === "string" && part).join(": ");
    }
    if (typeof body.message === "string") return body.message;
  } catch {
    // Not JSON: the text itself is the best description there is.
  }
  return text || "no reason given";
}

/** Each milestones answer read once: a kept answer is the same object on every call that hits it. */
const milestonePages = new WeakMap<UpstreamAnswer, { ids: string[]; cursor: string | undefined }>();

/** The ids of `eventTicker`'s milestones on one page of the upstream's answer, and the next page's cursor. */
function milestonePage(
  answer: UpstreamAnswer,
  eventTicker: string,
): { ids: string[]; cursor: string | undefined } {
  const read = milestonePages.get(answer);
  if (read) return read;
  const body = parseBody(answer);
  const { milestones, cursor } = (body ?? {}) as { milestones?: unknown; cursor?: unknown };
  if (!Array.isArray(milestones)) {
    throw new UpstreamError("unavailable", "the upstream exchange sent milestones without a milestones list");
  }
  const ids: string[] = [];
  for (const milestone of milestones) {
    const { id, related_event_tickers: related } = (milestone ?? {}) as Record<string, unknown>;
    if (typeof id !== "string" || !MILESTONE_ID.test(id)) {
      throw new UpstreamError("unavailable", "the upstream exchange sent a milestone without a valid id");
    }
    // A milestone that does not name the event among its related ones is not the event's.
    if (Array.isArray(related) && !related.includes(eventTicker)) continue;
    ids.push(id);
  }
  const page = { ids, cursor: typeof cursor === "string" && cursor !== "" ? cursor : undefined };
  milestonePages.set(answer, page);
  return page;
}

/**
 * What `reshape` makes of an upstream body. Reading a value nested thousands deep as a string (a
 * trade's id, say) overflows the stack: that body is the upstream's fault, not ours.
 */
function reshaped<T>(reshape: () => T): T {
  try {
    return reshape();
  } catch (error) {
    if (error instanceof RangeError) {
      throw new UpstreamError("unavailable", "the upstream exchange sent a body nested too deeply to read");
    }
    throw error;
  }
}

/** The `live_datas` of a batch answer (Kalshi sends null for none). */
function liveDatasOf(body: unknown): unknown[] {
  const list = ((body ?? {}) as { live_datas?: unknown }).live_datas;
  if (list === null) return [];
  if (!Array.isArray(list)) {
    throw new UpstreamError("unavailable", "the upstream exchange sent live data without a live_datas list");
  }
  return list;
}

/** Whether a batch answer holds live data and all of it is final (so the answer can no longer change). */
function allLiveDataFinal(answer: UpstreamAnswer): boolean {
  try {
    const list = liveDatasOf(answerJson(answer));
    return (
      list.length > 0 &&
      list.every((entry) => {
        const status = (entry as { details?: { status?: unknown } } | null)?.details?.status;
        return typeof status === "string" && FINAL_LIVE_STATUSES.has(status.toLowerCase());
      })
    );
  } catch {
    return false;
  }
}

/** A book level as Kalshi writes it: [price, size], each a number or a decimal string. */
type Level = readonly [number | string, number | string, ...unknown[]];

function isLevel(value: unknown): value is Level {
  if (!Array.isArray(value) || value.length < 2) return false;
  const [price, size] = value as unknown[];
  return isLevelScalar(price) && isLevelScalar(size);
}

/** A number, or a string to read as one (what Number() reads without walking a structure). */
function isLevelScalar(value: unknown): value is number | string {
  return typeof value === "number" || typeof value === "string";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Kalshi books list bids per side as [price, size] levels: `orderbook.yes_dollars` ("0.4200"),
 * `orderbook_fp.yes_dollars` (fixed-point sizes) or legacy `orderbook.yes` (cents). The reference
 * shape maps a 4-digit dollar price to whole contracts.
 */
export interface ReferenceBook {
  /** Dollar price with 4 decimals → whole contracts bid at it. */
  yes_bids: Record<string, number>;
  no_bids: Record<string, number>;
  sequence: number;
}

/**
 * Any of Kalshi's book shapes as a ReferenceBook. Anything else fails as an unavailable upstream: a
 * body without `orderbook` or `orderbook_fp` (say, 100,000 nested arrays) is no empty book, and a
 * level that is not [price, size] or out of range is no level.
 */
export function toReferenceBook(body: unknown): ReferenceBook {
  const notABook = (what: string) => new UpstreamError("unavailable", `the upstream exchange sent ${what}`);
  if (!isRecord(body)) throw notABook("an order book that is not an object");
  const { orderbook_fp: fp = null, orderbook: legacy = null } = body;
  if ((fp !== null && !isRecord(fp)) || (legacy !== null && !isRecord(legacy)) || (!fp && !legacy)) {
    throw notABook("an order book without an orderbook or orderbook_fp object");
  }
  const list = (value: unknown): readonly unknown[] | undefined => {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) throw notABook("an order book side that is not a list of levels");
    return value;
  };
  const side = (name: "yes" | "no"): Record<string, number> => {
    const dollars = list(fp?.[`${name}_dollars`]) ?? list(legacy?.[`${name}_dollars`]);
    const cents = list(legacy?.[name]);
    const levels: Record<string, number> = {};
    const add = (level: unknown, scale: number) => {
      const [price, size] = isLevel(level) ? [Number(level[0]) / scale, Number(level[1])] : [Number.NaN, 0];
      if (!Number.isFinite(price) || price < 0 || price > 1 || !Number.isFinite(size) || size <= 0) {
        throw notABook("an order book level out of range");
      }
      const key = price.toFixed(4);
      levels[key] = (levels[key] ?? 0) + Math.floor(size);
    };
    if (dollars) for (const level of dollars) add(level, 1);
    else if (cents) for (const level of cents) add(level, 100);
    return levels;
  };
  const sequence = isLevelScalar(body.sequence) ? Number(body.sequence) : Number.NaN;
  return {
    yes_bids: side("yes"),
    no_bids: side("no"),
    // Kalshi's REST book has no sequence; the time we read it orders snapshots just as well.
    sequence: Number.isSafeInteger(sequence) ? sequence : Date.now(),
  };
}

/** The `depth` highest-priced levels of one side, best first. */
export function bestBids(levels: Record<string, number>, depth: number): Record<string, number> {
  const prices = Object.keys(levels).sort((a, b) => Number(b) - Number(a));
  return Object.fromEntries(prices.slice(0, depth).map((price) => [price, levels[price] as number]));
}

interface KalshiTrade {
  trade_id?: unknown;
  ticker?: unknown;
  price?: unknown;
  count?: unknown;
  count_fp?: unknown;
  yes_price?: unknown;
  no_price?: unknown;
  yes_price_dollars?: unknown;
  no_price_dollars?: unknown;
  taker_side?: unknown;
  created_time?: unknown;
}

/** Kalshi's `{trades, cursor}` in the reference's camelCase form (prices in cents, time in seconds). */
export function toReferenceTrades(body: unknown): { trades: unknown[]; cursor: string | null } {
  const page = (body ?? {}) as { trades?: unknown; cursor?: unknown };
  if (!Array.isArray(page.trades)) {
    throw new UpstreamError("unavailable", "the upstream exchange sent trades without a trades list");
  }
  const trades = (page.trades as KalshiTrade[]).map((t) => {
    const yesCents = cents(t.yes_price, t.yes_price_dollars);
    const noCents = cents(t.no_price, t.no_price_dollars) ?? (yesCents === null ? null : 100 - yesCents);
    const count = Number(t.count ?? t.count_fp);
    const created = typeof t.created_time === "number" ? t.created_time : Date.parse(String(t.created_time));
    if (yesCents === null || noCents === null || !Number.isFinite(count) || !Number.isFinite(created)) {
      throw new UpstreamError(
        "unavailable",
        "the upstream exchange sent a trade without price, count or time",
      );
    }
    return {
      tradeId: String(t.trade_id),
      ticker: String(t.ticker),
      price: typeof t.price === "number" ? t.price : yesCents,
      count: Math.floor(count),
      countFp: typeof t.count_fp === "string" ? Number(t.count_fp).toFixed(2) : count.toFixed(2),
      yesPrice: yesCents,
      noPrice: noCents,
      yesPriceDollars: (yesCents / 100).toFixed(4),
      noPriceDollars: (noCents / 100).toFixed(4),
      takerSide: t.taker_side === "no" ? "no" : "yes",
      // Kalshi sends ISO strings; numbers above 10^11 are milliseconds.
      createdTime: Math.floor(
        typeof t.created_time === "number" && created < 1e11 ? created : created / 1000,
      ),
    };
  });
  const cursor = typeof page.cursor === "string" && page.cursor !== "" ? page.cursor : null;
  return { trades, cursor };
}

/** A trade's time in milliseconds: Kalshi's ISO string keeps them; a number is seconds below 10^11. */
export function tradeTimeMs(raw: unknown, seconds: number): number {
  if (typeof raw === "number") return raw < 1e11 ? raw * 1000 : Math.floor(raw);
  const parsed = Date.parse(String(raw));
  return Number.isFinite(parsed) ? parsed : seconds * 1000;
}

/** A price in whole cents from Kalshi's integer cents or its `*_dollars` string. */
function cents(integer: unknown, dollars: unknown): number | null {
  if (typeof dollars === "string" && dollars !== "") {
    const value = Math.round(Number(dollars) * 100);
    if (Number.isFinite(value) && value >= 0 && value <= 100) return value;
  }
  if (typeof integer === "number" && integer >= 0 && integer <= 100) return integer;
  return null;
}
