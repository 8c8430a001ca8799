/**
 * History without a cutoff: an upstream that keeps an hour of forecasts, trades and candles (the
 * simulator with a one-hour live window and retention, and a clock the test moves) forgets a range the
 * venue read two hours ago, and the venue still answers it, from its archive, as it did then; a range
 * straddling the cutoff is the archive's part then the upstream's, each once, in order; one-minute
 * candles are computed from the recorded trades. `GET /orderbook/{ticker}?at=` answers the book the
 * venue recorded at or before a moment, and 404 before anything was recorded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { startTestServer, TEST_ANCHOR, type TestServer, testCatalogue } from "../support/server.js";

const HOUR = 3_600;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-history-"));
/** The simulator's clock (Unix seconds), moved by the tests. */
let clock = TEST_ANCHOR;
let simulator: RunningSimulator;
let t: TestServer;
let event: string;

interface Period {
  end_period_ts: number;
  percentile_points: { percentile: number; numerical_forecast: number }[];
}

beforeAll(async () => {
  simulator = await startSimulator({
    catalogue: await testCatalogue(),
    port: 0,
    now: () => clock,
    historyWindowSeconds: HOUR,
    retentionSeconds: HOUR,
  });
  t = await startTestServer({
    settings: {
      UPSTREAM_URL: simulator.url,
      ARCHIVE: "true",
      ARCHIVE_DIR: dir,
      ARCHIVE_FLUSH_SECONDS: "3600",
    },
  });
  const listed = await fetch(
    `${t.url}/api/v1/events?seriesTickers=KXHIGHNY&status=active&withNestedMarkets=true`,
  );
  const { events } = (await listed.json()) as { events: { ticker: string; markets?: unknown[] }[] };
  const found = events.find((e) => (e.markets?.length ?? 0) >= 5);
  if (!found) throw new Error("the test catalogue has no active KXHIGHNY event");
  event = found.ticker;
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await simulator?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const forecastQuery = (startTs: number, endTs: number) =>
  new URLSearchParams({
    percentiles: "1000,5000,9000",
    startTs: String(startTs),
    endTs: String(endTs),
    periodInterval: "1",
  });

/** The forecast periods the venue (or, with `direct`, the upstream itself) answers for a range. */
async function forecast(startTs: number, endTs: number, direct = false): Promise<Period[]> {
  const query = forecastQuery(startTs, endTs);
  const url = direct
    ? `${simulator.url}/series/KXHIGHNY/events/${event}/forecast_percentile_history?${query
        .toString()
        .replace(/startTs/, "start_ts")
        .replace(/endTs/, "end_ts")
        .replace(/periodInterval/, "period_interval")}`
    : `${t.url}/api/v1/event/KXHIGHNY/${event}/forecast_percentile_history?${query}`;
  const response = await fetch(url);
  const body = (await response.json()) as { forecast_history: Period[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.forecast_history;
}

describe("history older than the upstream keeps", () => {
  it("answers a forecast range the upstream has forgotten from the archive, as it was answered then", async () => {
    const [start, end] = [TEST_ANCHOR - HOUR / 2, TEST_ANCHOR];
    const then = await forecast(start, end);
    expect(then.length).toBeGreaterThanOrEqual(30);
    await t.server.archive?.flush();

    clock = TEST_ANCHOR + 2 * HOUR;
    expect(await forecast(start, end, true)).toEqual([]);
    expect(await forecast(start, end)).toEqual(then);
  });

  it("joins a range across the cutoff: the archive's periods, then the upstream's, each once", async () => {
    clock = TEST_ANCHOR + 2 * HOUR;
    const [start, end] = [TEST_ANCHOR - HOUR / 2, TEST_ANCHOR + 2 * HOUR];
    const upstream = await forecast(start, end, true);
    expect(upstream.length).toBeGreaterThan(0);
    expect(upstream[0]?.end_period_ts).toBeGreaterThanOrEqual(TEST_ANCHOR + HOUR);
    const joined = await forecast(start, end);
    const ends = joined.map((period) => period.end_period_ts);
    expect(ends).toEqual([...new Set(ends)].sort((a, b) => a - b));
    // What was read before the cutoff moved, then everything the upstream still has.
    expect(joined.slice(joined.length - upstream.length)).toEqual(upstream);
    expect(joined[0]?.end_period_ts).toBe(TEST_ANCHOR - HOUR / 2);
    expect(joined.length).toBeGreaterThan(upstream.length + 30);
  });

  it("asks the archive nothing when the upstream covers the range: the upstream's answer, unchanged", async () => {
    clock = TEST_ANCHOR + 2 * HOUR;
    const [start, end] = [TEST_ANCHOR + HOUR + 60, TEST_ANCHOR + 2 * HOUR];
    expect(await forecast(start, end)).toEqual(await forecast(start, end, true));
  });
});

interface ListedTrade {
  tradeId: string;
  ticker: string;
  createdTime: number;
}

/** Every trade the venue (or, with `direct`, the upstream) lists for a query, walking its cursors `limit` at a time. */
async function allTrades(
  query: Record<string, string>,
  limit: number,
  direct = false,
): Promise<ListedTrade[]> {
  const trades: ListedTrade[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const params = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
    if (direct) {
      for (const [ours, kalshi] of [
        ["minTs", "min_ts"],
        ["maxTs", "max_ts"],
      ] as const) {
        const value = params.get(ours);
        params.delete(ours);
        if (value !== null) params.set(kalshi, value);
      }
    }
    const response = await fetch(
      direct ? `${simulator.url}/markets/trades?${params}` : `${t.url}/api/v1/trades?${params}`,
    );
    const body = (await response.json()) as {
      trades: (ListedTrade & { trade_id: string; created_time: string })[];
      cursor: string | null;
    };
    expect(response.status, JSON.stringify(body)).toBe(200);
    for (const trade of body.trades) {
      trades.push(
        direct
          ? {
              tradeId: trade.trade_id,
              ticker: trade.ticker,
              createdTime: Date.parse(trade.created_time) / 1000,
            }
          : trade,
      );
    }
    cursor = body.cursor || null;
    if (!cursor) return trades;
  }
  throw new Error("the cursor never reached the end");
}

interface Candle {
  end_period_ts: number;
  volume: number;
  price: { open: number | null; high: number | null; low: number | null; close: number | null };
}

/** One-minute candles of `ticker` the venue (or, with `direct`, the upstream) answers for a range. */
async function candles(ticker: string, startTs: number, endTs: number, direct = false): Promise<Candle[]> {
  const url = direct
    ? `${simulator.url}/series/${seriesOf(ticker)}/markets/${ticker}/candlesticks?start_ts=${startTs}&end_ts=${endTs}&period_interval=1`
    : `${t.url}/api/v1/market/${ticker}/candlesticks?startTs=${startTs}&endTs=${endTs}&periodInterval=1`;
  const response = await fetch(url);
  const body = (await response.json()) as { candlesticks: Candle[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.candlesticks;
}

const seriesOf = (ticker: string) => {
  const catalog = t.server.catalog.require();
  const market = catalog.market(ticker);
  if (!market) throw new Error(`no market ${ticker}`);
  return catalog.seriesTickerOf(market);
};

/** What a candle says of the period's trades. */
const traded = (candle: Candle) => ({
  end: candle.end_period_ts,
  volume: candle.volume,
  open: candle.price.open,
  high: candle.price.high,
  low: candle.price.low,
  close: candle.price.close,
});

describe("trades and candles older than the upstream keeps", () => {
  /** The moment the venue reads the tape; two hours later the upstream has forgotten it. */
  const READ_AT = TEST_ANCHOR + 5 * HOUR;
  const range = { minTs: String(READ_AT - HOUR / 2), maxTs: String(READ_AT) };
  let ticker: string;
  let readThen: ListedTrade[];
  let candlesThen: Candle[];
  /** Every market the venue saw trade in the half hour. */
  let tradedMarkets: Set<string>;

  beforeAll(async () => {
    clock = READ_AT;
    // The market that traded most in the half hour.
    const counts = new Map<string, number>();
    for (const trade of await allTrades(range, 1000))
      counts.set(trade.ticker, (counts.get(trade.ticker) ?? 0) + 1);
    ticker = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] as string;
    tradedMarkets = new Set(counts.keys());
    readThen = await allTrades({ ...range, ticker }, 1000);
    // Asked of the upstream itself: the venue keeps a past range's answer, and would serve that later.
    candlesThen = await candles(ticker, READ_AT - HOUR / 2, READ_AT, true);
    await t.server.archive?.flush();
    clock = READ_AT + 2 * HOUR;
  });

  it("lists a range the upstream has forgotten from the archive, page by page, each trade once", async () => {
    expect(readThen.length).toBeGreaterThanOrEqual(10);
    expect(await allTrades({ ...range, ticker }, 1000, true)).toEqual([]);
    for (const limit of [1000, 7]) {
      const now = await allTrades({ ...range, ticker }, limit);
      expect(now.map((trade) => trade.tradeId)).toEqual(readThen.map((trade) => trade.tradeId));
      expect(now).toEqual(readThen);
    }
  });

  it("goes on past the upstream's last trade with the recorded ones older than it, newest first", async () => {
    const upstream = await allTrades({ minTs: range.minTs, ticker }, 1000, true);
    expect(upstream.length).toBeGreaterThan(0);
    for (const limit of [1000, 9]) {
      const joined = await allTrades({ minTs: range.minTs, ticker }, limit);
      expect(joined.map((trade) => trade.tradeId)).toEqual([
        ...upstream.map((trade) => trade.tradeId),
        ...readThen.map((trade) => trade.tradeId),
      ]);
    }
  });

  it("refuses a cursor of the archive's it did not hand out", async () => {
    const response = await fetch(`${t.url}/api/v1/trades?ticker=${ticker}&cursor=a:${"x".repeat(40)}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("bad_request");
  });

  it("computes one-minute candles of the forgotten range from the recorded trades", async () => {
    expect(await candles(ticker, READ_AT - HOUR / 2, READ_AT, true)).toEqual([]);
    const now = await candles(ticker, READ_AT - HOUR / 2, READ_AT);
    const firstTrade = Math.min(...readThen.map((trade) => trade.createdTime));
    // Periods from the one holding the first recorded trade, each minute once, to the range's end.
    const ends = now.map((candle) => candle.end_period_ts);
    expect(ends[0]).toBe(Math.ceil(firstTrade / 60) * 60);
    expect(ends).toEqual(ends.map((_, i) => (ends[0] as number) + 60 * i));
    expect(ends.at(-1)).toBe(Math.floor(READ_AT / 60) * 60);
    // Each whole minute of the read range says what the upstream said of its trades then.
    const whole = (candle: Candle) => candle.end_period_ts - 60 >= READ_AT - HOUR / 2;
    const then = new Map(candlesThen.filter(whole).map((candle) => [candle.end_period_ts, traded(candle)]));
    const compared = now.filter(whole);
    expect(compared.length).toBeGreaterThanOrEqual(25);
    for (const candle of compared) expect(traded(candle)).toEqual(then.get(candle.end_period_ts));
    expect(compared.some((candle) => candle.volume > 0)).toBe(true);
  });

  it("answers the candles of a market the upstream no longer knows from the archive, and 404 for one it never saw trade", async () => {
    const recorded = await candles(ticker, READ_AT - HOUR / 2, READ_AT);
    simulator.faults.set({ kind: "status", status: 404, match: "/candlesticks" });
    try {
      expect(await candles(ticker, READ_AT - HOUR / 2, READ_AT - 60)).toEqual(recorded.slice(0, -1));
      const untraded = t.server.catalog.require().markets.find((m) => !tradedMarkets.has(m.record.ticker));
      const response = await fetch(
        `${t.url}/api/v1/market/${untraded?.record.ticker}/candlesticks?startTs=${READ_AT - HOUR / 2}&endTs=${READ_AT}&periodInterval=1`,
      );
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe("market_not_found");
    } finally {
      simulator.faults.clear();
    }
  });

  it("puts the archive's candles before the upstream's, each minute once, across the cutoff", async () => {
    const [start, end] = [READ_AT - HOUR / 2, READ_AT + 2 * HOUR];
    const upstream = await candles(ticker, start, end, true);
    expect(upstream[0]?.end_period_ts).toBeGreaterThanOrEqual(READ_AT + HOUR);
    const joined = await candles(ticker, start, end);
    const ends = joined.map((candle) => candle.end_period_ts);
    expect(ends).toEqual([...new Set(ends)].sort((a, b) => a - b));
    expect(joined.slice(joined.length - upstream.length)).toEqual(upstream);
    expect(joined.length).toBeGreaterThan(upstream.length + 25);
  });
});

describe("GET /orderbook/{ticker}?at=", () => {
  const ticker = () =>
    t.server.catalog.require().markets.find((m) => m.record.status === "active")?.record.ticker as string;

  it("answers the book recorded at or before a moment, with depth, and 404 before any", async () => {
    const before = new Date(Date.now() - 1_000).toISOString();
    const now = (await (await fetch(`${t.url}/api/v1/orderbook/${ticker()}`)).json()) as {
      yes_bids: object;
      no_bids: object;
    };
    const recordedBy = new Date(Date.now() + 1).toISOString();
    await t.server.archive?.flush();

    const at = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${recordedBy}`);
    const book = (await at.json()) as { yes_bids: object; no_bids: object; sequence: number };
    expect(at.status, JSON.stringify(book)).toBe(200);
    expect({ yes_bids: book.yes_bids, no_bids: book.no_bids }).toEqual({
      yes_bids: now.yes_bids,
      no_bids: now.no_bids,
    });
    expect(book.sequence).toBeLessThanOrEqual(Date.parse(recordedBy));

    const shallow = (await (
      await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${recordedBy}&depth=1`)
    ).json()) as {
      yes_bids: object;
    };
    expect(Object.keys(shallow.yes_bids).length).toBeLessThanOrEqual(1);

    const early = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${before}`);
    expect(early.status).toBe(404);
    expect(((await early.json()) as { code: string }).code).toBe("orderbook_not_found");
  });

  it("refuses a moment that is no RFC 3339 time with 400", async () => {
    for (const at of ["yesterday", "2026-13-01T00:00:00Z", "1764800000", "x".repeat(100)]) {
      const response = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${encodeURIComponent(at)}`);
      expect(response.status, at).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("bad_request");
    }
  });
});
