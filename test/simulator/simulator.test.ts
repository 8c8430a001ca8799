/**
 * The offline exchange: Kalshi compatibility (checked with the published kalshi-typescript client),
 * reproducible motion, books, trades, candles and forecasts consistent with its quotes, and its
 * fault and lifecycle controls.
 */
import { Configuration, EventsApi, MarketApi } from "kalshi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogueEvent, CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { TEST_ANCHOR } from "../support/server.js";

const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
/** The catalogue's moment (noon on the anchor day); the exchange's clock runs three hours later. */
const NOON = TEST_ANCHOR + 12 * 3_600;
const NOW = NOON + 3 * 3_600;

let simulator: RunningSimulator;
let event: CatalogueEvent;

beforeAll(async () => {
  simulator = await startSimulator({ catalogue, now: () => NOW, port: 0 });
  const found = catalogue.events.find(
    (e) => e.seriesTicker === "KXHIGHNY" && e.markets[0]?.status === "active" && e.markets[0].closeTime > NOW,
  );
  if (!found) throw new Error("the demo catalogue has no KXHIGHNY event trading through NOW");
  event = found;
});
afterAll(async () => simulator?.close());

// biome-ignore lint/suspicious/noExplicitAny: Kalshi bodies, inspected field by field
async function get(path: string): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(`${simulator.url}${path}`);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

const basisPoints = (dollars: string) => Math.round(Number(dollars) * 10_000);

describe("Kalshi compatibility: the published kalshi-typescript client reads every route", () => {
  const config = () => new Configuration({ basePath: simulator.url });

  it("series, events with nested markets, one market", async () => {
    const markets = new MarketApi(config());
    const events = new EventsApi(config());
    const series = (await markets.getSeries("KXHIGHNY")).data.series;
    expect(series.ticker).toBe("KXHIGHNY");
    const page = (await events.getEvents(5, undefined, true, undefined, "settled", "KXHIGHNY")).data;
    expect(page.events.length).toBe(5);
    expect(page.cursor).not.toBe("");
    for (const e of page.events) {
      expect(e.series_ticker).toBe("KXHIGHNY");
      expect(e.markets?.length).toBeGreaterThan(0);
      expect(e.markets?.every((m) => m.status === "finalized" || m.status === "determined")).toBe(true);
    }
    const one = (await events.getEvent(event.ticker)).data;
    expect(one.event.event_ticker).toBe(event.ticker);
    expect(one.markets.map((m) => m.ticker)).toEqual(event.markets.map((m) => m.ticker));
    const market = (await markets.getMarket(event.markets[0]!.ticker)).data.market;
    expect(market.status).toBe("active");
    expect(market.yes_bid_dollars).toMatch(/^0\.\d{4}$/);
  });

  it("order book, trades and candlesticks", async () => {
    const api = new MarketApi(config());
    const ticker = event.markets[2]!.ticker;
    const book = (await api.getMarketOrderbook(ticker)).data.orderbook_fp;
    expect(book.yes_dollars.length).toBeGreaterThan(1);
    const trades = (await api.getTrades(10, undefined, ticker)).data;
    expect(trades.trades.length).toBe(10);
    expect(trades.trades.every((t) => t.ticker === ticker)).toBe(true);
    const candles = (await api.getMarketCandlesticks("KXHIGHNY", ticker, NOON - 6 * 3_600, NOON, 60)).data;
    expect(candles.ticker).toBe(ticker);
    expect(candles.candlesticks.length).toBe(7);
  });

  it("forecast percentile history, percentiles sent as repeated keys", async () => {
    const api = new EventsApi(config());
    const history = (
      await api.getEventForecastPercentilesHistory(
        event.ticker,
        "KXHIGHNY",
        [2500, 5000, 7500],
        NOON - 3_600,
        NOON,
        60,
      )
    ).data.forecast_history;
    expect(history.map((p) => p.end_period_ts)).toEqual([NOON - 3_600, NOON]);
    for (const point of history) {
      expect(point.percentile_points.map((p) => p.percentile)).toEqual([2500, 5000, 7500]);
      expect(point.percentile_points[0]!.formatted_forecast).toMatch(/^\d+\.\d°$/);
    }
  });
});

describe("motion", () => {
  it("quotes the catalogue's prices at the catalogue's moment", async () => {
    const other = await startSimulator({ catalogue, now: () => NOON, port: 0 });
    try {
      for (const market of event.markets) {
        const response = await fetch(`${other.url}/markets/${market.ticker}`);
        const { market: quoted } = (await response.json()) as { market: Record<string, string> };
        expect([
          quoted.yes_bid_dollars,
          quoted.yes_ask_dollars,
          quoted.no_bid_dollars,
          quoted.no_ask_dollars,
        ]).toEqual([market.yesBid, market.yesAsk, market.noBid, market.noAsk]);
      }
    } finally {
      await other.close();
    }
  });

  it("answers a past range the same way every time, in any simulator", async () => {
    const path = `/series/KXHIGHNY/events/${event.ticker}/forecast_percentile_history?percentiles=1000&percentiles=9000&start_ts=${NOON - 86_400}&end_ts=${NOON}&period_interval=60`;
    const first = await get(path);
    expect(first.status).toBe(200);
    expect(first.json.forecast_history.length).toBeGreaterThan(20);
    const other = await startSimulator({ catalogue, now: () => NOW + 86_400, port: 0 });
    try {
      const again = await fetch(`${other.url}${path}`);
      expect(await again.text()).toBe(first.text);
    } finally {
      await other.close();
    }
    expect((await get(path)).text).toBe(first.text);
  });

  it("moves prices over time", async () => {
    const ticker = event.markets.find((m) => basisPoints(m.yesBid ?? "0") >= 2_000)?.ticker;
    const candles = await get(
      `/series/KXHIGHNY/markets/${ticker}/candlesticks?start_ts=${NOON - 86_400}&end_ts=${NOW}&period_interval=60`,
    );
    const closes = new Set(
      candles.json.candlesticks.map((c: { yes_bid: { close: number } }) => c.yes_bid.close),
    );
    expect(closes.size).toBeGreaterThan(1);
  });
});

describe("consistency with the quotes", () => {
  it("rests the book's best bids at the market's bid and the mirror of its ask", async () => {
    for (const market of event.markets) {
      const quoted = (await get(`/markets/${market.ticker}`)).json.market;
      const book = (await get(`/markets/${market.ticker}/orderbook`)).json.orderbook_fp;
      expect(book.yes_dollars[0][0]).toBe(quoted.yes_bid_dollars);
      expect(book.no_dollars[0][0]).toBe(quoted.no_bid_dollars);
      const yesPrices = book.yes_dollars.map(([price]: [string]) => Number(price));
      expect([...yesPrices].sort((a, b) => b - a)).toEqual(yesPrices);
    }
  });

  it("trades at the bid or the ask of their moment, never after now, and candles add them up", async () => {
    const market = event.markets[3]!;
    const { trades } = (
      await get(`/markets/trades?ticker=${market.ticker}&limit=200&min_ts=${NOON - 3 * 3_600}`)
    ).json;
    expect(trades.length).toBeGreaterThan(5);
    for (const trade of trades) {
      const at = Date.parse(trade.created_time) / 1000;
      expect(at).toBeLessThanOrEqual(NOW);
      const candle = (
        await get(
          `/series/KXHIGHNY/markets/${market.ticker}/candlesticks?start_ts=${Math.ceil(at / 60) * 60}&end_ts=${Math.ceil(at / 60) * 60}&period_interval=1`,
        )
      ).json.candlesticks[0];
      expect([candle.yes_bid.close_dollars, candle.yes_ask.close_dollars]).toContain(trade.yes_price_dollars);
      expect(trade.yes_price + trade.no_price).toBe(100);
    }
    const hourly = (
      await get(
        `/series/KXHIGHNY/markets/${market.ticker}/candlesticks?start_ts=${NOON - 2 * 3_600}&end_ts=${NOON}&period_interval=60`,
      )
    ).json.candlesticks;
    const inWindow = trades.filter((t: { created_time: string }) => {
      const at = Date.parse(t.created_time) / 1000;
      return at > NOON - 3 * 3_600 && at <= NOON;
    });
    const candleVolume = hourly.reduce((sum: number, c: { volume: number }) => sum + c.volume, 0);
    expect(candleVolume).toBe(inWindow.reduce((sum: number, t: { count: number }) => sum + t.count, 0));
  });

  it("pages trades without overlap", async () => {
    const ticker = event.markets[4]!.ticker;
    const all = (await get(`/markets/trades?ticker=${ticker}&limit=30`)).json.trades;
    const first = (await get(`/markets/trades?ticker=${ticker}&limit=10`)).json;
    const second = (await get(`/markets/trades?ticker=${ticker}&limit=20&cursor=${first.cursor}`)).json;
    expect([...first.trades, ...second.trades]).toEqual(all);
  });

  it("forecasts increasing percentiles within the strikes, formatted in the event's unit", async () => {
    const { forecast_history } = (
      await get(
        `/series/KXHIGHNY/events/${event.ticker}/forecast_percentile_history?percentiles=0,1000,5000,9000,10000&start_ts=${NOON - 600}&end_ts=${NOON}&period_interval=0`,
      )
    ).json;
    expect(forecast_history.length).toBe(121);
    for (const point of forecast_history) {
      const values = point.percentile_points.map(
        (p: { raw_numerical_forecast: number }) => p.raw_numerical_forecast,
      );
      expect([...values].sort((a, b) => a - b)).toEqual(values);
      expect(values[0]).toBeLessThan(values[4]);
      for (const p of point.percentile_points)
        expect(p.formatted_forecast).toBe(`${p.numerical_forecast.toFixed(1)}°`);
    }
    const btc = catalogue.events.find(
      (e) => e.seriesTicker === "KXBTCD" && e.markets[0]?.status === "active",
    )!;
    const dollars = (
      await get(
        `/series/KXBTCD/events/${btc.ticker}/forecast_percentile_history?percentiles=5000&start_ts=${NOON - 60}&end_ts=${NOON}&period_interval=1`,
      )
    ).json.forecast_history[0].percentile_points[0].formatted_forecast;
    expect(dollars).toMatch(/^\$\d{2},\d{3}\.\d{2}$/);
  });
});

describe("errors, as Kalshi sends them", () => {
  it.each([
    ["/markets/NOPE-1", 404],
    ["/events/NOPE-1", 404],
    [`/series/KXHIGHCHI/events/${"placeholder"}/forecast_percentile_history`, 404],
    ["/markets?limit=5000", 400],
    ["/markets/trades?min_ts=abc", 400],
  ])("%s answers %i with {error: {code, message}}", async (path, status) => {
    const response = await get(path.replace("placeholder", event.ticker));
    expect(response.status).toBe(status);
    expect(typeof response.json.error.code).toBe("string");
    expect(typeof response.json.error.message).toBe("string");
  });

  it("refuses a forecast for an event without numeric strikes, and a bad period", async () => {
    const party = catalogue.events.find((e) => e.seriesTicker === "KXPRESPARTY")!;
    const base = `percentiles=5000&start_ts=${NOON - 60}&end_ts=${NOON}`;
    const noStrikes = await get(
      `/series/KXPRESPARTY/events/${party.ticker}/forecast_percentile_history?${base}&period_interval=1`,
    );
    expect(noStrikes.status).toBe(400);
    expect(noStrikes.json.error.message).toContain("numeric strikes");
    const badPeriod = await get(
      `/series/KXHIGHNY/events/${event.ticker}/forecast_percentile_history?${base}&period_interval=5`,
    );
    expect(badPeriod.status).toBe(400);
  });
});

describe("controls", () => {
  it("injects faults over HTTP for the next matching requests only, and counts requests", async () => {
    const control = new URL("/_sim/faults", simulator.url);
    const put = await fetch(control, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ kind: "status", status: 503, match: "/series/KXHIGHNY", times: 2 }]),
    });
    expect(put.status).toBe(200);
    expect((await get("/series/KXHIGHNY")).status).toBe(503);
    expect((await get("/series/KXHIGHCHI")).status).toBe(200);
    expect((await get("/series/KXHIGHNY")).status).toBe(503);
    expect((await get("/series/KXHIGHNY")).status).toBe(200);
    const stats = (await (await fetch(control)).json()) as { byPath: Record<string, number> };
    expect(stats.byPath["/trade-api/v2/series/KXHIGHNY"]).toBeGreaterThanOrEqual(3);
    const refused = await fetch(control, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ kind: "explode" }]),
    });
    expect(refused.status).toBe(400);
    await fetch(control, { method: "DELETE" });
  });

  it("moves a market along its lifecycle, refusing moves the lifecycle does not allow", async () => {
    const market = catalogue.events.find(
      (e) => e.seriesTicker === "KXHIGHCHI" && e.markets[0]?.status === "active",
    )!.markets[0]!;
    const change = (body: object) =>
      fetch(new URL(`/_sim/markets/${market.ticker}/lifecycle`, simulator.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await change({ status: "initialized" })).status).toBe(409);
    expect((await change({ status: "determined" })).status).toBe(409);
    expect((await change({ status: "determined", result: "no" })).status).toBe(200);
    const now = (await get(`/markets/${market.ticker}`)).json.market;
    expect([now.status, now.result, now.yes_bid_dollars, now.settlement_value_dollars]).toEqual([
      "determined",
      "no",
      null,
      "0.0000",
    ]);
    expect((await get(`/markets/${market.ticker}/orderbook`)).status).toBe(404);
  });
});

describe("start-up", () => {
  it("makes its catalogue on the first request, once, when given how to make it", async () => {
    let made = 0;
    const lazy = await startSimulator({
      catalogue: () => {
        made += 1;
        return catalogue;
      },
      now: () => NOW,
      port: 0,
    });
    try {
      expect(made).toBe(0);
      const first = await fetch(`${lazy.url}/events/${event.ticker}`);
      expect(first.status).toBe(200);
      expect(((await first.json()) as { event: { event_ticker: string } }).event.event_ticker).toBe(
        event.ticker,
      );
      const milestones = await fetch(`${lazy.url}/milestones?limit=1`);
      expect(milestones.status).toBe(200);
      expect(made).toBe(1);
    } finally {
      await lazy.close();
    }
  });
});
