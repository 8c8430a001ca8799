/**
 * The relayed operations against the embedded simulator: every validation rule of interface
 * operation 1, byte-for-byte pass-through, and the order book, trades and candlestick relays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_ANCHOR, type TestServer } from "../support/server.js";

let t: TestServer;
let upstream: string;
/** An event with numeric strikes, trading at the test anchor, and one of its markets. */
const SERIES = "KXHIGHNY";
let event: string;
let market: { ticker: string; yesMint: string; noMint: string; marketLedger: string };
/** Two days before the anchor: a range wholly in the past that the event's markets traded through. */
const START = TEST_ANCHOR - 2 * 86_400;
const END = TEST_ANCHOR - 86_400;

beforeAll(async () => {
  t = await startTestServer();
  upstream = t.server.upstream.url;
  const events = await t.client.listEvents({
    seriesTickers: [SERIES],
    status: "active",
    withNestedMarkets: true,
  });
  const found = events.events.find((e) => (e.markets?.length ?? 0) >= 5);
  if (!found?.markets?.[0]) throw new Error("the demo catalogue has no active KXHIGHNY event");
  event = found.ticker;
  const first = found.markets[0];
  const accounts = Object.values(first.accounts)[0]!;
  market = { ticker: first.ticker, ...accounts };
});
afterAll(async () => t?.stop());

const forecastPath = (series: string, ev: string, query: string) =>
  `/api/v1/event/${series}/${ev}/forecast_percentile_history?${query}`;
const valid = (overrides: Record<string, string> = {}) =>
  new URLSearchParams({
    percentiles: "2500,5000,7500",
    startTs: String(TEST_ANCHOR - 3 * 3_600),
    endTs: String(TEST_ANCHOR),
    periodInterval: "60",
    ...overrides,
  }).toString();

// biome-ignore lint/suspicious/noExplicitAny: bodies of many shapes, inspected field by field
type Json = any;

async function get(path: string): Promise<{ status: number; body: Buffer; type: string | null; json: Json }> {
  const response = await fetch(`${t.url}${path}`);
  const body = Buffer.from(await response.arrayBuffer());
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: response.status, body, type: response.headers.get("content-type"), json };
}

async function expectError(path: string, status: number, code: string, mentions?: string): Promise<void> {
  const response = await get(path);
  expect(response.status, response.body.toString()).toBe(status);
  expect(Object.keys(response.json).sort()).toEqual(["code", "msg"]);
  expect(response.json.code).toBe(code);
  if (mentions) expect(response.json.msg).toContain(mentions);
}

describe("GET /event/{series}/{event}/forecast_percentile_history: validation (operation 1)", () => {
  it.each(["percentiles", "startTs", "endTs", "periodInterval"])(
    "refuses a request without %s",
    async (name) => {
      const query = new URLSearchParams(valid());
      query.delete(name);
      await expectError(forecastPath(SERIES, event, query.toString()), 400, "bad_request", name);
    },
  );

  it("refuses 11 percentiles", async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => String(i * 900)).join(",");
    await expectError(
      forecastPath(SERIES, event, valid({ percentiles: eleven })),
      400,
      "bad_request",
      "at most 10",
    );
  });

  it.each(["10001", "-1", "50.5", "abc", "1e3"])("refuses the percentile %s", async (bad) => {
    await expectError(
      forecastPath(SERIES, event, valid({ percentiles: `5000,${bad}` })),
      400,
      "bad_request",
      bad,
    );
  });

  it("refuses duplicates and blanks", async () => {
    await expectError(
      forecastPath(SERIES, event, valid({ percentiles: "5000,2500,5000" })),
      400,
      "bad_request",
      "repeat",
    );
    await expectError(
      forecastPath(SERIES, event, valid({ percentiles: "5000,,2500" })),
      400,
      "bad_request",
      "blank",
    );
  });

  it("refuses milliseconds, naming them", async () => {
    const ms = String(TEST_ANCHOR * 1000);
    await expectError(forecastPath(SERIES, event, valid({ endTs: ms })), 400, "bad_request", "milliseconds");
    await expectError(forecastPath(SERIES, event, valid({ startTs: ms })), 400, "bad_request", "startTs");
  });

  it("refuses startTs after endTs", async () => {
    const query = valid({ startTs: String(TEST_ANCHOR), endTs: String(TEST_ANCHOR - 60) });
    await expectError(
      forecastPath(SERIES, event, query),
      400,
      "bad_request",
      "startTs must not be after endTs",
    );
  });

  it.each(["5", "2", "-1", "60.0", "1441"])("refuses periodInterval=%s", async (interval) => {
    await expectError(
      forecastPath(SERIES, event, valid({ periodInterval: interval })),
      400,
      "bad_request",
      "periodInterval",
    );
  });

  it("answers 404 event_not_found for an unknown event", async () => {
    await expectError(forecastPath(SERIES, "KXHIGHNY-99JAN01", valid()), 404, "event_not_found");
  });

  it("answers 404 event_not_found for an event of another series", async () => {
    await expectError(forecastPath("KXHIGHCHI", event, valid()), 404, "event_not_found", "KXHIGHCHI");
  });

  it("accepts the edge values 0 and 10000 and every allowed interval", async () => {
    for (const periodInterval of ["0", "1", "60", "1440"]) {
      const query = valid({ percentiles: "0,10000", periodInterval, startTs: String(TEST_ANCHOR - 600) });
      const response = await get(forecastPath(SERIES, event, query));
      expect(response.status, response.body.toString()).toBe(200);
    }
  });
});

describe("forecast history: relayed unchanged", () => {
  it("returns the upstream's bytes and content type exactly", async () => {
    const ours = await get(forecastPath(SERIES, event, valid()));
    expect(ours.status).toBe(200);
    const direct = await fetch(
      `${upstream}/series/${SERIES}/events/${event}/forecast_percentile_history?percentiles=2500&percentiles=5000&percentiles=7500&start_ts=${TEST_ANCHOR - 3 * 3_600}&end_ts=${TEST_ANCHOR}&period_interval=60`,
    );
    const directBody = Buffer.from(await direct.arrayBuffer());
    expect(direct.status).toBe(200);
    expect(ours.body.equals(directBody)).toBe(true);
    expect(ours.type).toBe(direct.headers.get("content-type"));
    const history = ours.json.forecast_history;
    expect(history.length).toBeGreaterThan(0);
    expect(history[0].event_ticker).toBe(event);
    expect(history[0].percentile_points.map((p: { percentile: number }) => p.percentile)).toEqual([
      2500, 5000, 7500,
    ]);
  });

  it("finds the event from any of its market's mints", async () => {
    const byTicker = await get(forecastPath(SERIES, event, valid()));
    for (const mint of [market.yesMint, market.noMint, market.marketLedger]) {
      const byMint = await get(`/api/v1/event/by-mint/${mint}/forecast_percentile_history?${valid()}`);
      expect(byMint.status).toBe(200);
      expect(byMint.body.equals(byTicker.body)).toBe(true);
    }
    await expectError(
      `/api/v1/event/by-mint/NoSuchMint111/forecast_percentile_history?${valid()}`,
      404,
      "event_not_found",
    );
    await expectError(
      `/api/v1/event/by-mint/${market.yesMint}/forecast_percentile_history?${valid({ periodInterval: "5" })}`,
      400,
      "bad_request",
    );
  });

  it("passes the upstream's refusal on as 400 upstream_rejected with its message", async () => {
    // Party-control events have no numeric strikes, so the exchange has no forecast for them.
    const party = (await t.client.listEvents({ seriesTickers: ["KXPRESPARTY"] })).events[0]!;
    await expectError(forecastPath("KXPRESPARTY", party.ticker, valid()), 400, "upstream_rejected");
  });
});

describe("GET /orderbook", () => {
  it("reshapes the upstream book into yes_bids/no_bids by dollar price", async () => {
    const book = await get(`/api/v1/orderbook/${market.ticker}`);
    expect(book.status, book.body.toString()).toBe(200);
    expect(Object.keys(book.json).sort()).toEqual(["no_bids", "sequence", "yes_bids"]);
    const yesPrices = Object.keys(book.json.yes_bids);
    expect(yesPrices.length).toBeGreaterThan(1);
    for (const price of [...yesPrices, ...Object.keys(book.json.no_bids)])
      expect(price).toMatch(/^0\.\d{4}$/);
    for (const size of Object.values<number>(book.json.yes_bids))
      expect(Number.isInteger(size) && size > 0).toBe(true);
    // The best bids on both sides never cross: yes bid + no bid < $1.
    const bestYes = Math.max(...yesPrices.map(Number));
    const bestNo = Math.max(...Object.keys(book.json.no_bids).map(Number));
    expect(bestYes + bestNo).toBeLessThan(1);
    const byMint = await get(`/api/v1/orderbook/by-mint/${market.noMint}`);
    expect(byMint.status).toBe(200);
    expect(byMint.json.yes_bids).toEqual(book.json.yes_bids);
  });

  it("answers 404 for unknown markets and markets without a book", async () => {
    await expectError("/api/v1/orderbook/NOPE-1", 404, "market_not_found");
    await expectError("/api/v1/orderbook/by-mint/NoSuchMint111", 404, "market_not_found");
    const settled = (await t.client.listMarkets({ status: "finalized", limit: 1 })).markets[0]!;
    await expectError(`/api/v1/orderbook/${settled.ticker}`, 404, "orderbook_not_found");
  });
});

describe("GET /trades", () => {
  it("lists trades in the reference's camelCase shape and pages with the cursor", async () => {
    const first = await get(`/api/v1/trades?ticker=${market.ticker}&limit=5`);
    expect(first.status, first.body.toString()).toBe(200);
    expect(first.json.trades.length).toBe(5);
    const trade = first.json.trades[0];
    expect(Object.keys(trade).sort()).toEqual(
      [
        "count",
        "countFp",
        "createdTime",
        "noPrice",
        "noPriceDollars",
        "price",
        "takerSide",
        "ticker",
        "tradeId",
        "yesPrice",
        "yesPriceDollars",
      ].sort(),
    );
    expect(trade.ticker).toBe(market.ticker);
    expect(trade.yesPrice + trade.noPrice).toBe(100);
    expect(trade.createdTime).toBeLessThan(1e11);
    expect(trade.countFp).toMatch(/^\d+\.\d{2}$/);
    expect(typeof first.json.cursor).toBe("string");
    const second = await get(
      `/api/v1/trades?ticker=${market.ticker}&limit=5&cursor=${encodeURIComponent(first.json.cursor)}`,
    );
    expect(second.status).toBe(200);
    const firstIds = new Set(first.json.trades.map((x: { tradeId: string }) => x.tradeId));
    expect(second.json.trades.some((x: { tradeId: string }) => firstIds.has(x.tradeId))).toBe(false);

    const byMint = await get(`/api/v1/trades/by-mint/${market.yesMint}?limit=5`);
    expect(byMint.json.trades).toEqual(first.json.trades);
  });

  it("filters by time", async () => {
    const all = await get(`/api/v1/trades?ticker=${market.ticker}&limit=50`);
    const newest = all.json.trades[0].createdTime;
    const windowed = await get(`/api/v1/trades?ticker=${market.ticker}&limit=50&maxTs=${newest - 1}`);
    expect(windowed.status).toBe(200);
    for (const trade of windowed.json.trades) expect(trade.createdTime).toBeLessThanOrEqual(newest - 1);
  });

  it("validates its parameters", async () => {
    await expectError("/api/v1/trades?limit=0", 400, "bad_request", "limit");
    await expectError("/api/v1/trades?limit=1001", 400, "bad_request", "limit");
    await expectError(`/api/v1/trades?minTs=${TEST_ANCHOR * 1000}`, 400, "bad_request", "milliseconds");
    await expectError("/api/v1/trades?ticker=NOPE-1", 404, "market_not_found");
    await expectError("/api/v1/trades/by-mint/NoSuchMint111", 404, "market_not_found");
  });
});

describe("candlesticks", () => {
  const range = `startTs=${START}&endTs=${END}&periodInterval=60`;

  it("relays a market's candlesticks unchanged, by ticker and by mint", async () => {
    const ours = await get(`/api/v1/market/${market.ticker}/candlesticks?${range}`);
    expect(ours.status, ours.body.toString()).toBe(200);
    expect(ours.json.ticker).toBe(market.ticker);
    const direct = await fetch(
      `${upstream}/series/${SERIES}/markets/${market.ticker}/candlesticks?start_ts=${START}&end_ts=${END}&period_interval=60`,
    );
    expect(ours.body.equals(Buffer.from(await direct.arrayBuffer()))).toBe(true);
    const byMint = await get(`/api/v1/market/by-mint/${market.marketLedger}/candlesticks?${range}`);
    expect(byMint.body.equals(ours.body)).toBe(true);
  });

  it("relays an event's candlesticks", async () => {
    const ours = await get(`/api/v1/event/${event}/candlesticks?${range}`);
    expect(ours.status, ours.body.toString()).toBe(200);
    expect(ours.json.market_tickers).toContain(market.ticker);
  });

  it("refuses more than 5000 candles, bad intervals and unknown markets", async () => {
    const tooMany = `startTs=${TEST_ANCHOR - 5001 * 60}&endTs=${TEST_ANCHOR}&periodInterval=1`;
    await expectError(`/api/v1/market/${market.ticker}/candlesticks?${tooMany}`, 400, "bad_request", "5000");
    await expectError(
      `/api/v1/market/${market.ticker}/candlesticks?startTs=${START}&endTs=${END}&periodInterval=0`,
      400,
      "bad_request",
      "periodInterval",
    );
    await expectError(
      `/api/v1/market/${market.ticker}/candlesticks?startTs=${START}`,
      400,
      "bad_request",
      "endTs",
    );
    await expectError(`/api/v1/market/NOPE-1/candlesticks?${range}`, 404, "market_not_found");
    await expectError(`/api/v1/event/NOPE-1/candlesticks?${range}`, 404, "event_not_found");
  });
});
