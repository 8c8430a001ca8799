/**
 * The replay upstream answers, from the archive, what the recorded upstream answered as of the replay
 * clock's moment, and the venue's own upstream code reads it back to exactly what was recorded: the
 * last book recorded by then (a later one once the clock passes it), the trades created by then,
 * newest first and paged without a gap or a repeat (ties of one millisecond, a trade recorded twice,
 * a day boundary), forecast periods holding every percentile asked, each milestone's last live data,
 * and candles computed from the tape. It has no historical tier, so the relay never asks one; what it
 * does not serve, and every query out of bounds, is answered in Kalshi's error shape.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { ParquetArchive } from "../../src/archive/parquet-archive.js";
import { ReplayClock } from "../../src/archive/replay/clock.js";
import { type RunningReplayUpstream, startReplayUpstream } from "../../src/archive/replay/replay-upstream.js";
import type { ArchiveRow } from "../../src/archive/tables.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { UpstreamError, UpstreamNotFoundError } from "../../src/upstream/errors.js";
import { MarketRelay, toReferenceTrades, tradeTimeMs } from "../../src/upstream/relay.js";
import { readCutoffs } from "../../src/upstream/tiers.js";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Noon of a recorded day (UTC): a multiple of every candle and forecast period. */
const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);
const A = "KXA-26MAR10-B42";
const B = "KXB-26MAR10-T50";
const SERIES = "KXHIGHNY";
const EVENT = "KXHIGHNY-26MAR10";

type TradeRow = ArchiveRow<"trades">;

const trade = (id: string, ms: number, yesCents: number, count: number, ticker = A): TradeRow => ({
  trade_id: id,
  ticker,
  created_time: ms,
  count,
  yes_price: yesCents / 100,
  no_price: (100 - yesCents) / 100,
  taker_side: yesCents % 2 === 0 ? "yes" : "no",
});

/** A's tape: one trade the day before, then one every 10 s (three in one millisecond at 50 s), one recorded twice. */
const TRADES: TradeRow[] = [
  trade("a-prev", T0 - 13 * HOUR, 30, 4),
  ...Array.from({ length: 24 }, (_, i) =>
    trade(
      `a-${String(i).padStart(2, "0")}`,
      T0 + i * 10 * SECOND + (i % 3) * 7,
      40 + (i % 7),
      i === 7 ? 2.5 : 1 + (i % 4),
    ),
  ),
  trade("a-05b", T0 + 50 * SECOND + 14, 47, 3),
  trade("a-05c", T0 + 50 * SECOND + 14, 39, 1),
  trade("b-1", T0 + 5 * SECOND, 61, 10, B),
  trade("b-2", T0 + 15 * SECOND + 500, 63, 12, B),
];
/** The same trade read on two pages by a restarted recorder. */
const DUPLICATE = TRADES.find((t) => t.trade_id === "a-03") as TradeRow;

const book = (ms: number, ticker: string, yes: Record<string, number>, no: Record<string, number>) => ({
  ts: ms,
  ticker,
  yes_bids: JSON.stringify(yes),
  no_bids: JSON.stringify(no),
});
const BOOKS: ArchiveRow<"orderbooks">[] = [
  book(T0 - 13 * HOUR, A, { "0.3000": 5 }, { "0.6500": 7 }),
  book(T0, A, { "0.4200": 120, "0.4100": 50, "0.3900": 10 }, { "0.5500": 80, "0.5400": 30 }),
  book(T0 + MINUTE, A, { "0.4300": 100 }, {}),
  book(T0 + 2 * MINUTE + 500, A, { "0.0100": 999, "0.4400": 1 }, { "0.5000": 2 }),
  book(T0 + 30 * SECOND, B, { "0.6000": 15 }, { "0.3800": 25 }),
];

const point = (
  end: number,
  interval: number,
  percentile: number,
  value: number,
): ArchiveRow<"forecasts"> => ({
  series_ticker: SERIES,
  event_ticker: EVENT,
  end_period_ts: end,
  period_interval: interval,
  percentile,
  raw_numerical_forecast: value + 0.0123,
  numerical_forecast: value,
  formatted_forecast: `${value}°`,
});
const FORECAST_ENDS = [T0 - 3 * HOUR, T0 - 2 * HOUR, T0 - HOUR, T0, T0 + HOUR];
const FORECASTS: ArchiveRow<"forecasts">[] = [
  ...FORECAST_ENDS.flatMap((end, i) =>
    [1000, 5000, 9000]
      // The period two hours before misses its 90th percentile.
      .filter((p) => !(end === T0 - 2 * HOUR && p === 9000))
      .map((p) => point(end, 60, p, 40 + i + p / 1000)),
  ),
  // Another interval of the same event is another series of periods.
  point(T0 - MINUTE, 1, 5000, 99),
  // A period read twice (a restarted recorder reads it again).
  point(T0 - HOUR, 60, 1000, 40 + 2 + 1),
];

const live = (ms: number, milestone: string, details: object): ArchiveRow<"live_data"> => ({
  ts: ms,
  milestone_id: milestone,
  type: "football_game",
  status: String((details as { status?: unknown }).status ?? ""),
  details: JSON.stringify(details),
});
const LIVE: ArchiveRow<"live_data">[] = [
  live(T0 - 10 * MINUTE, "m-1", { status: "live", home: 1, away: 0 }),
  live(T0 + 5 * MINUTE, "m-1", { status: "live", home: 2, away: 0 }),
  live(T0 + 20 * MINUTE, "m-1", { status: "final", home: 2, away: 1 }),
  live(T0 - MINUTE, "m-2", { status: "live", reading: 71.5 }),
];

/** B is in the catalogue: it opened ten days before, with an open interest. */
const B_OPEN = T0 / SECOND - 10 * 86_400;
const CATALOGUE = [
  {
    ts: T0 - DAY + 1,
    change: "snapshot",
    kind: "market",
    ticker: B,
    status: "active",
    record: JSON.stringify({
      ticker: B,
      openTime: B_OPEN,
      closeTime: T0 / SECOND + 86_400,
      openInterest: 321,
      openInterestFp: "321.00",
    }),
  },
] as unknown as ArchiveRow<"catalogue">[];

const root = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-replay-upstream-"));
const dir = path.join(root, "archive");
/** The wall clock the replay clock reads, moved by the tests. */
let wall = 0;
const clock = new ReplayClock(T0 - DAY, T0 + DAY, 1, () => wall);
/** Moves the replay to the recording's moment `ms`. */
const replayAt = (ms: number) => {
  wall = ms - clock.from;
};
let reader: ArchiveReader;
let upstream: RunningReplayUpstream;
let client: UpstreamClient;
let relay: MarketRelay;

beforeAll(async () => {
  const archive = await ParquetArchive.open({ dir, flushMs: 3_600_000 });
  archive.append("trades", [...TRADES, DUPLICATE]);
  archive.append("orderbooks", BOOKS);
  archive.append("forecasts", FORECASTS);
  archive.append("live_data", LIVE);
  archive.append("catalogue", CATALOGUE);
  await archive.close();
  reader = await ArchiveReader.open(dir);
  clock.start();
  upstream = await startReplayUpstream({ reader, clock });
  client = new UpstreamClient({ baseUrl: upstream.url, timeoutMs: 10_000 });
  // The relay's clock is the replay's: what it caches as settled is settled in the recording.
  relay = new MarketRelay(client, () => Math.floor(clock.now() / SECOND));
});

afterAll(async () => {
  await client?.close();
  await upstream?.close();
  reader?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A raw GET of the replay upstream: status and JSON body. */
async function get(pathAndQuery: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${upstream.url}${pathAndQuery}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Expects Kalshi's error shape with `status` and `code`. */
async function expectError(pathAndQuery: string, status: number, code: string): Promise<string> {
  const { status: got, body } = await get(pathAndQuery);
  expect(got, JSON.stringify(body)).toBe(status);
  const error = body.error as { code: string; message: string; details: string };
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe("string");
  expect(error.details).toBe(error.message);
  return error.message;
}

/** A recorded trade as the relay's reference shape reads it. */
function reference(row: TradeRow) {
  const yes = Math.round(row.yes_price * 100);
  const no = Math.round(row.no_price * 100);
  return {
    tradeId: row.trade_id,
    ticker: row.ticker,
    price: yes,
    count: Math.floor(row.count),
    countFp: row.count.toFixed(2),
    yesPrice: yes,
    noPrice: no,
    yesPriceDollars: (yes / 100).toFixed(4),
    noPriceDollars: (no / 100).toFixed(4),
    takerSide: row.taker_side,
    createdTime: Math.floor(row.created_time / SECOND),
  };
}

/** The recorded trades a listing holds, newest first (ties by id, descending). */
function expectedTrades(filter: (row: TradeRow) => boolean) {
  return TRADES.filter(filter)
    .sort((a, b) => b.created_time - a.created_time || (a.trade_id < b.trade_id ? 1 : -1))
    .map(reference);
}

/** Every page of a relayed listing, and the number of pages. */
async function allPages(q: Parameters<MarketRelay["trades"]>[0]) {
  const trades: unknown[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = JSON.parse((await relay.trades({ ...q, cursor })).toString()) as {
      trades: unknown[];
      cursor: string | null;
    };
    expect(page.trades.length).toBeLessThanOrEqual(q.limit);
    trades.push(...page.trades);
    cursor = page.cursor ?? undefined;
    pages++;
  } while (cursor && pages < 50);
  return { trades, pages };
}

describe("order books", () => {
  it("are the last recorded by the replay's moment, read back to the recorded levels", async () => {
    replayAt(T0 + 30 * SECOND);
    const book = await relay.orderbookLevels(A);
    expect(book.yes_bids).toEqual({ "0.4200": 120, "0.4100": 50, "0.3900": 10 });
    expect(book.no_bids).toEqual({ "0.5500": 80, "0.5400": 30 });
    expect((await relay.orderbookLevels(B)).yes_bids).toEqual({ "0.6000": 15 });

    // Kalshi's shape, best level first, as the simulator writes it.
    const { status, body } = await get(`/markets/${A}/orderbook`);
    expect(status).toBe(200);
    expect(body).toEqual({
      orderbook_fp: {
        yes_dollars: [
          ["0.4200", "120.00"],
          ["0.4100", "50.00"],
          ["0.3900", "10.00"],
        ],
        no_dollars: [
          ["0.5500", "80.00"],
          ["0.5400", "30.00"],
        ],
      },
    });
  });

  it("change as the clock passes the moment a later book was recorded, to the millisecond", async () => {
    replayAt(T0 + 2 * MINUTE + 499);
    expect(await relay.orderbookLevels(A)).toMatchObject({ yes_bids: { "0.4300": 100 }, no_bids: {} });
    replayAt(T0 + 2 * MINUTE + 500);
    expect(await relay.orderbookLevels(A)).toMatchObject({
      yes_bids: { "0.4400": 1, "0.0100": 999 },
      no_bids: { "0.5000": 2 },
    });
    // A book of the day before, still the last one an hour before noon.
    replayAt(T0 - HOUR);
    expect(await relay.orderbookLevels(A)).toMatchObject({
      yes_bids: { "0.3000": 5 },
      no_bids: { "0.6500": 7 },
    });
  });

  it("keep `depth` best levels a side", async () => {
    replayAt(T0 + 30 * SECOND);
    const book = await relay.orderbookLevels(A, 2);
    expect(book.yes_bids).toEqual({ "0.4200": 120, "0.4100": 50 });
    expect(book.no_bids).toEqual({ "0.5500": 80, "0.5400": 30 });
    const { body } = await get(`/markets/${A}/orderbook?depth=1`);
    expect(body).toEqual({
      orderbook_fp: { yes_dollars: [["0.4200", "120.00"]], no_dollars: [["0.5500", "80.00"]] },
    });
  });

  it("are not found before anything was recorded, nor for a market never recorded", async () => {
    replayAt(T0 - 20 * HOUR);
    await expect(relay.orderbookLevels(A)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    replayAt(T0 + HOUR);
    await expect(relay.orderbookLevels("KXNEVER-1")).rejects.toBeInstanceOf(UpstreamNotFoundError);
    await expectError("/markets/KXNEVER-1/orderbook", 404, "not_found");
  });
});

describe("trades", () => {
  it("are those created by the replay's moment, newest first, each once, paged by a cursor", async () => {
    const now = T0 + 150 * SECOND;
    replayAt(now);
    const expected = expectedTrades((t) => t.ticker === A && t.created_time <= now);
    // The trade at exactly the replay's moment is in; three share a millisecond; one was recorded twice.
    expect(expected[0]?.tradeId).toBe("a-15");
    expect(expected).toHaveLength(19);
    const { trades, pages } = await allPages({ ticker: A, limit: 4 });
    expect(trades).toEqual(expected);
    expect(pages).toBe(5);
    // One page holding everything has no cursor.
    const whole = JSON.parse((await relay.trades({ ticker: A, limit: 1000 })).toString());
    expect(whole).toEqual({ trades: expected, cursor: null });
  });

  it("read back, as the recorder reads them, to the recorded values", async () => {
    replayAt(T0 + 150 * SECOND);
    const { status, body } = await get(`/markets/trades?ticker=${A}&limit=1000`);
    expect(status).toBe(200);
    const raw = body.trades as Record<string, unknown>[];
    const page = toReferenceTrades(body);
    const recorded = page.trades.map((read, i) => {
      const t = read as ReturnType<typeof reference>;
      return {
        trade_id: t.tradeId,
        ticker: t.ticker,
        created_time: tradeTimeMs(raw[i]?.created_time, t.createdTime),
        count: Number(t.countFp),
        yes_price: Number(t.yesPriceDollars),
        no_price: Number(t.noPriceDollars),
        taker_side: t.takerSide,
      };
    });
    const expected = TRADES.filter((t) => t.ticker === A && t.created_time <= T0 + 150 * SECOND);
    expect(recorded.sort((a, b) => a.trade_id.localeCompare(b.trade_id))).toEqual(
      [...expected].sort((a, b) => a.trade_id.localeCompare(b.trade_id)),
    );
    // Kalshi's trade JSON, as the simulator writes it, with the time's milliseconds.
    expect(raw.find((t) => t.trade_id === "a-07")).toEqual({
      trade_id: "a-07",
      ticker: A,
      count: 2,
      count_fp: "2.50",
      price: 40,
      yes_price: 40,
      no_price: 60,
      yes_price_dollars: "0.4000",
      no_price_dollars: "0.6000",
      taker_side: "yes",
      taker_outcome_side: "yes",
      taker_book_side: "bid",
      is_block_trade: false,
      created_time: new Date(T0 + 70 * SECOND + 7).toISOString(),
    });
  });

  it("appear as the clock passes them, and a listing goes on from its cursor", async () => {
    replayAt(T0 + 150 * SECOND);
    const first = JSON.parse((await relay.trades({ ticker: A, limit: 3 })).toString());
    replayAt(T0 + 10 * MINUTE);
    const expected = expectedTrades((t) => t.ticker === A);
    const newest = JSON.parse((await relay.trades({ ticker: A, limit: 3 })).toString());
    expect(newest.trades).toEqual(expected.slice(0, 3));
    // The cursor of the earlier page goes on after its last trade, whatever was recorded since.
    const next = JSON.parse((await relay.trades({ ticker: A, limit: 3, cursor: first.cursor })).toString());
    expect(next.trades).toEqual(
      expectedTrades((t) => t.ticker === A && t.created_time <= T0 + 150 * SECOND).slice(3, 6),
    );
  });

  it("keep to min_ts and max_ts, both whole seconds included, across every market when no ticker is named", async () => {
    replayAt(T0 + 10 * MINUTE);
    const minTs = (T0 + 50 * SECOND) / SECOND;
    const maxTs = (T0 + 100 * SECOND) / SECOND;
    const { trades } = await allPages({ ticker: A, limit: 2, minTs, maxTs });
    const expected = expectedTrades(
      (t) => t.ticker === A && t.created_time >= minTs * SECOND && t.created_time < (maxTs + 1) * SECOND,
    );
    expect(trades).toEqual(expected);
    expect(expected.map((t) => t.tradeId)).toContain("a-10");

    const all = await allPages({ limit: 7, maxTs: (T0 + 20 * SECOND) / SECOND });
    expect(all.trades).toEqual(expectedTrades((t) => t.created_time < T0 + 21 * SECOND));
    expect(all.trades.map((t) => (t as { ticker: string }).ticker)).toContain(B);
  });

  it("of a market with none recorded are an empty page", async () => {
    replayAt(T0 + HOUR);
    expect(JSON.parse((await relay.trades({ ticker: "KXNEVER-1", limit: 10 })).toString())).toEqual({
      trades: [],
      cursor: null,
    });
  });
});

describe("forecast history", () => {
  const query = (percentiles: number[]) => ({
    percentiles,
    startTs: (T0 - 3 * HOUR) / SECOND,
    endTs: (T0 + 2 * HOUR) / SECOND,
    periodInterval: 60,
  });
  const history = async (percentiles: number[]) =>
    JSON.parse((await relay.forecastHistory(SERIES, EVENT, query(percentiles))).body.toString()) as {
      forecast_history: {
        event_ticker: string;
        end_period_ts: number;
        period_interval: number;
        percentile_points: { percentile: number; numerical_forecast: number }[];
      }[];
    };

  it("holds the periods ended by the replay's moment that hold every percentile asked, points in the order asked", async () => {
    replayAt(T0 + 30 * MINUTE);
    const { forecast_history: periods } = await history([5000, 1000]);
    expect(periods.map((p) => p.end_period_ts * SECOND)).toEqual(FORECAST_ENDS.slice(0, 4));
    expect(periods[0]).toEqual({
      event_ticker: EVENT,
      end_period_ts: (T0 - 3 * HOUR) / SECOND,
      period_interval: 60,
      percentile_points: [
        {
          percentile: 5000,
          raw_numerical_forecast: 45 + 0.0123,
          numerical_forecast: 45,
          formatted_forecast: "45°",
        },
        {
          percentile: 1000,
          raw_numerical_forecast: 41 + 0.0123,
          numerical_forecast: 41,
          formatted_forecast: "41°",
        },
      ],
    });
    // The period read twice is served once.
    expect(periods[2]?.percentile_points).toEqual([
      expect.objectContaining({ percentile: 5000, numerical_forecast: 47 }),
      expect.objectContaining({ percentile: 1000, numerical_forecast: 43 }),
    ]);
    // A period missing a percentile asked for is left out.
    const complete = await history([1000, 5000, 9000]);
    expect(complete.forecast_history.map((p) => p.end_period_ts * SECOND)).toEqual([
      T0 - 3 * HOUR,
      T0 - HOUR,
      T0,
    ]);
  });

  it("gains a period once the clock passes its end", async () => {
    replayAt(T0 + HOUR);
    expect((await history([9000])).forecast_history.map((p) => p.end_period_ts * SECOND)).toEqual(
      FORECAST_ENDS.filter((end) => end !== T0 - 2 * HOUR),
    );
  });

  it("of an event with nothing recorded is empty", async () => {
    const answer = await relay.forecastHistory(SERIES, "KXHIGHNY-NEVER", query([5000]));
    expect(JSON.parse(answer.body.toString())).toEqual({ forecast_history: [] });
  });
});

describe("live data", () => {
  it("is each milestone's last recorded by the replay's moment; ids with none are left out", async () => {
    const body = async () => JSON.parse((await relay.liveData(["m-1", "m-2", "m-none"])).body.toString());
    replayAt(T0);
    expect(await body()).toEqual({
      live_datas: [
        { type: "football_game", details: { status: "live", home: 1, away: 0 }, milestone_id: "m-1" },
        { type: "football_game", details: { status: "live", reading: 71.5 }, milestone_id: "m-2" },
      ],
    });
    replayAt(T0 + 6 * MINUTE);
    expect((await body()).live_datas[0]).toEqual({
      type: "football_game",
      details: { status: "live", home: 2, away: 0 },
      milestone_id: "m-1",
    });
    replayAt(T0 - HOUR);
    expect(await body()).toEqual({ live_datas: [] });
  });
});

describe("candlesticks", () => {
  interface Candle {
    end_period_ts: number;
    price: Record<string, number | string | null>;
    volume: number;
    volume_fp: string;
    open_interest: number;
    open_interest_fp: string;
    yes_bid: object;
    yes_ask: object;
  }
  const candles = async (ticker: string, startTs: number, endTs: number, periodInterval = 1) => {
    const answer = await relay.marketCandlesticks(SERIES, ticker, { startTs, endTs, periodInterval });
    return JSON.parse(answer.body.toString()) as { ticker: string; candlesticks: Candle[] };
  };

  it("are the recorded trades of each period (end − interval, end], up to the replay's moment", async () => {
    const now = T0 + 95 * SECOND;
    replayAt(now);
    const start = T0 / SECOND - 120;
    const answer = await candles(A, start, T0 / SECOND + 600);
    expect(answer.ticker).toBe(A);
    // Periods run from the one ending at start_ts to the one the replay's moment is in.
    expect(answer.candlesticks.map((c) => c.end_period_ts)).toEqual(
      [-120, -60, 0, 60, 120].map((s) => T0 / SECOND + s),
    );
    const [, before, noon, first, second] = answer.candlesticks as [Candle, Candle, Candle, Candle, Candle];
    // No trade in the period: no price, and the last price before it as `previous`.
    expect(before.price).toMatchObject({
      open: null,
      close: null,
      mean: null,
      previous: 30,
      previous_dollars: "0.3000",
    });
    expect(before).toMatchObject({ volume: 0, volume_fp: "0.00", yes_bid: {}, yes_ask: {} });
    expect(noon.price).toMatchObject({ open: 40, high: 40, low: 40, close: 40, previous: 30 });
    // (T0, T0 + 60 s]: a-01..a-06 and the two trades sharing a-05's neighbourhood.
    const inFirst = TRADES.filter(
      (t) => t.ticker === A && t.created_time > T0 && t.created_time <= T0 + MINUTE,
    );
    expect(inFirst.map((t) => t.trade_id).sort()).toEqual([
      "a-01",
      "a-02",
      "a-03",
      "a-04",
      "a-05",
      "a-05b",
      "a-05c",
      "a-06",
    ]);
    const prices = [...inFirst]
      .sort((a, b) => a.created_time - b.created_time || a.trade_id.localeCompare(b.trade_id))
      .map((t) => Math.round(t.yes_price * 100));
    const volume = inFirst.reduce((sum, t) => sum + t.count, 0);
    const meanBp = Math.round((prices.reduce((a, b) => a + b, 0) * 100) / prices.length);
    expect(first.price).toEqual({
      open: prices[0],
      open_dollars: `${((prices[0] as number) / 100).toFixed(4)}`,
      low: Math.min(...prices),
      low_dollars: (Math.min(...prices) / 100).toFixed(4),
      high: Math.max(...prices),
      high_dollars: (Math.max(...prices) / 100).toFixed(4),
      close: prices.at(-1),
      close_dollars: ((prices.at(-1) as number) / 100).toFixed(4),
      // The mean in basis points, as the simulator takes it: its cents rounded, its dollars to four places.
      mean: Math.round(meanBp / 100),
      mean_dollars: (meanBp / 10_000).toFixed(4),
      previous: 40,
      previous_dollars: "0.4000",
    });
    // a-03 recorded twice counts once.
    expect(first).toMatchObject({
      volume,
      volume_fp: volume.toFixed(2),
      open_interest: 0,
      open_interest_fp: "0.00",
    });
    // The current period holds what traded by the replay's moment only: a-07 (2.5), a-08 (1), a-09 (2).
    expect(second).toMatchObject({ volume: 5, volume_fp: "5.50", price: { open: 40, close: 42 } });
  });

  it("are hourly and daily too, and grow as the clock moves", async () => {
    replayAt(T0 + 10 * MINUTE);
    const hourly = await candles(A, T0 / SECOND - 14 * 3_600, T0 / SECOND + 3_600, 60);
    const traded = hourly.candlesticks.filter((c) => c.volume > 0);
    expect(traded.map((c) => [c.end_period_ts, c.volume_fp])).toEqual([
      [T0 / SECOND - 13 * 3_600, "4.00"],
      [T0 / SECOND, "1.00"],
      [
        T0 / SECOND + 3_600,
        TRADES.filter((t) => t.ticker === A && t.created_time > T0)
          .reduce((sum, t) => sum + t.count, 0)
          .toFixed(2),
      ],
    ]);
    const daily = await candles(A, T0 / SECOND - 86_400, T0 / SECOND + 86_400, 1440);
    expect(daily.candlesticks.map((c) => c.end_period_ts)).toEqual([
      Date.UTC(2026, 2, 10) / SECOND,
      Date.UTC(2026, 2, 11) / SECOND,
    ]);
  });

  it("of a market the catalogue lists run from its opening, with its open interest; a market neither listed nor traded has none", async () => {
    replayAt(T0 + 30 * SECOND);
    const answer = await candles(B, T0 / SECOND - 60, T0 / SECOND + 60);
    expect(
      answer.candlesticks.map((c) => [c.end_period_ts, c.volume, c.open_interest, c.open_interest_fp]),
    ).toEqual([
      [T0 / SECOND - 60, 0, 321, "321.00"],
      [T0 / SECOND, 0, 321, "321.00"],
      [T0 / SECOND + 60, 22, 321, "321.00"],
    ]);
    await expect(candles("KXNEVER-1", T0 / SECOND - 60, T0 / SECOND)).rejects.toBeInstanceOf(
      UpstreamNotFoundError,
    );
    // A market first traded after the replay's moment has no candles yet.
    replayAt(T0 - 14 * HOUR);
    await expect(candles(A, T0 / SECOND - 86_400, T0 / SECOND)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    // The other path Kalshi serves them on answers the same.
    replayAt(T0 + 30 * SECOND);
    const { status, body } = await get(
      `/markets/${B}/candlesticks?start_ts=${T0 / SECOND - 60}&end_ts=${T0 / SECOND + 60}&period_interval=1`,
    );
    expect(status).toBe(200);
    expect(body).toEqual(answer);
  });
});

describe("what the replay does not serve", () => {
  it("has no historical tier: the cutoff is not found, so the relay reads every range live", async () => {
    await expectError("/historical/cutoff", 404, "not_found");
    expect(await readCutoffs(client)).toBeNull();
  });

  it("answers every other route not found, in Kalshi's error shape", async () => {
    await expectError("/markets", 404, "not_found");
    await expectError("/events/KXHIGHNY-26MAR10", 404, "not_found");
    await expectError("/historical/trades", 404, "not_found");
    await expectError(`/markets/${"X".repeat(200)}/orderbook`, 404, "not_found");
  });
});

describe("bounds", () => {
  it("refuses queries out of bounds before reading the archive", async () => {
    const forecast = `/series/${SERIES}/events/${EVENT}/forecast_percentile_history`;
    const range = `start_ts=${T0 / SECOND - 3_600}&end_ts=${T0 / SECOND}`;
    const refused = [
      "/markets/trades?limit=0",
      "/markets/trades?limit=1001",
      "/markets/trades?limit=1e3",
      "/markets/trades?cursor=not-a-cursor",
      `/markets/trades?cursor=${"A".repeat(401)}`,
      `/markets/trades?ticker=${"X".repeat(129)}`,
      "/markets/trades?min_ts=-1",
      `/markets/${A}/orderbook?depth=101`,
      `/live_data/batch?${Array.from({ length: 101 }, (_, i) => `milestone_ids=m-${i}`).join("&")}`,
      `/live_data/batch?milestone_ids=${"m".repeat(257)}`,
      "/live_data/batch",
      `${forecast}?${range}&period_interval=60&${Array.from({ length: 11 }, (_, i) => `percentiles=${i}`).join("&")}`,
      `${forecast}?${range}&period_interval=60&percentiles=5000&percentiles=5000`,
      `${forecast}?${range}&period_interval=60&percentiles=10001`,
      `${forecast}?${range}&period_interval=5&percentiles=5000`,
      `${forecast}?start_ts=${T0 / SECOND}&end_ts=${T0 / SECOND - 1}&period_interval=60&percentiles=5000`,
      `/markets/${A}/candlesticks?${range}&period_interval=5`,
      `/markets/${A}/candlesticks?start_ts=${T0 / SECOND}&end_ts=${T0 / SECOND - 60}&period_interval=1`,
      // Ten days of one-minute candles of a market open that long.
      `/markets/${B}/candlesticks?start_ts=${B_OPEN}&end_ts=${T0 / SECOND}&period_interval=1`,
    ];
    replayAt(T0 + HOUR);
    for (const request of refused) await expectError(request, 400, "bad_request");
    // The relay hears a refusal as one.
    await expect(relay.trades({ ticker: A, limit: 5, cursor: "bm90LWEtY3Vyc29y" })).rejects.toBeInstanceOf(
      UpstreamError,
    );
  });

  it("takes the longest queries it allows", async () => {
    replayAt(T0 + HOUR);
    const ids = Array.from({ length: 100 }, (_, i) => `m-${i}`);
    const { status, body } = await get(`/live_data/batch?milestone_ids=${ids.join(",")}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      live_datas: [
        { type: "football_game", details: { status: "final", home: 2, away: 1 }, milestone_id: "m-1" },
        { type: "football_game", details: { status: "live", reading: 71.5 }, milestone_id: "m-2" },
      ],
    });
    const trades = await get(`/markets/trades?limit=1000&ticker=${A}`);
    expect(trades.status).toBe(200);
  });
});
