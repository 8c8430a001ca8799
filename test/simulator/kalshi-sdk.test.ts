/**
 * Kalshi's own TypeScript SDK (`kalshi-typescript`, unmodified, pointed at the simulator by basePath
 * alone) through every public market-data method: each answers 200 with what the simulator's
 * catalogue, books, tape and clock hold, including the historical tier behind a short cutoff.
 */
import {
  Configuration,
  EventsApi,
  ExchangeApi,
  HistoricalApi,
  LiveDataApi,
  MarketApi,
  MilestoneApi,
  MultivariateApi,
  SearchApi,
  StructuredTargetsApi,
} from "kalshi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogueEvent, CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { TEST_ANCHOR } from "../support/server.js";

const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
const NOON = TEST_ANCHOR + 12 * 3_600;
const NOW = NOON + 3 * 3_600;
const DAY = 86_400;
/** A short live window, so that the demo's markets settled over five days ago are historical. */
const WINDOW = 5 * DAY;
const CUTOFF = NOW - WINDOW;

let simulator: RunningSimulator;
let config: Configuration;
/** An event trading through NOW, and one whose markets all settled before the cutoff. */
let live: CatalogueEvent;
let old: CatalogueEvent;

beforeAll(async () => {
  simulator = await startSimulator({ catalogue, now: () => NOW, port: 0, historyWindowSeconds: WINDOW });
  config = new Configuration({ basePath: simulator.url });
  const find = (test: (e: CatalogueEvent) => boolean, what: string) => {
    const found = catalogue.events.find((e) => e.seriesTicker === "KXHIGHNY" && test(e));
    if (!found) throw new Error(`the demo catalogue has no KXHIGHNY event ${what}`);
    return found;
  };
  live = find(
    (e) => e.markets.every((m) => m.status === "active" && m.closeTime > NOW),
    "trading through NOW",
  );
  old = find(
    (e) => e.markets.every((m) => m.status === "finalized" && m.expirationTime < CUTOFF - DAY),
    "settled before the cutoff",
  );
});
afterAll(async () => simulator?.close());

const seconds = (iso: string) => Date.parse(iso) / 1000;

describe("ExchangeApi", () => {
  it("status, schedule and the series' fee changes", async () => {
    const api = new ExchangeApi(config);
    const status = (await api.getExchangeStatus()).data;
    expect(status).toMatchObject({ exchange_active: true, trading_active: true });
    const { schedule } = (await api.getExchangeSchedule()).data;
    const [hours] = schedule.standard_hours;
    expect(seconds(hours!.start_time)).toBe(
      Math.min(...catalogue.events.flatMap((e) => e.markets.map((m) => m.openTime))),
    );
    expect(hours!.thursday).toEqual([{ open_time: "00:00", close_time: "24:00" }]);
    const pending = (await api.getSeriesFeeChanges("KXHIGHNY")).data.series_fee_change_arr;
    expect(pending).toEqual([]);
    const all = (await api.getSeriesFeeChanges("KXHIGHNY", true)).data.series_fee_change_arr;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ series_ticker: "KXHIGHNY", fee_type: "quadratic", fee_multiplier: 1 });
    expect(seconds(all[0]!.scheduled_ts)).toBeLessThan(NOW);
  });
});

describe("MarketApi", () => {
  it("series, one and listed with filters", async () => {
    const api = new MarketApi(config);
    const series = catalogue.series.find((s) => s.ticker === "KXHIGHNY");
    expect((await api.getSeries("KXHIGHNY")).data.series.title).toBe(series?.title);
    const list = (await api.getSeriesList()).data.series;
    expect(list.map((s) => s.ticker)).toEqual(catalogue.series.map((s) => s.ticker));
  });

  it("markets: listed, one, and the live tier leaves out markets settled before the cutoff", async () => {
    const api = new MarketApi(config);
    const listed = (await api.getMarkets(1000, undefined, undefined, "KXHIGHNY")).data;
    const tickers = new Set(listed.markets.map((m) => m.ticker));
    for (const m of live.markets) expect(tickers.has(m.ticker)).toBe(true);
    for (const m of old.markets) expect(tickers.has(m.ticker)).toBe(false);
    const one = (await api.getMarket(live.markets[0]!.ticker)).data.market;
    expect(one.yes_bid_dollars).toMatch(/^0\.\d{4}$/);
    const refused = await api.getMarket(old.markets[0]!.ticker).catch((e) => e.response);
    expect(refused.status).toBe(404);
    expect(refused.data.error.code).toBe("not_found");
  });

  it("order books, one and a batch, agree", async () => {
    const api = new MarketApi(config);
    const [a, b] = live.markets.map((m) => m.ticker);
    const one = (await api.getMarketOrderbook(a!)).data.orderbook_fp;
    expect(one.yes_dollars.length).toBeGreaterThan(1);
    const batch = (await api.getMarketOrderbooks([a!, b!])).data.orderbooks;
    expect(batch.map((o) => o.ticker)).toEqual([a, b]);
    expect(batch[0]!.orderbook_fp).toEqual(one);
  });

  it("trades since the cutoff, and candlesticks, one market and a batch, agree", async () => {
    const api = new MarketApi(config);
    const ticker = live.markets[2]!.ticker;
    const trades = (await api.getTrades(10, undefined, ticker)).data;
    expect(trades.trades).toHaveLength(10);
    expect(trades.trades.every((t) => t.ticker === ticker && seconds(t.created_time) >= CUTOFF)).toBe(true);
    const one = (await api.getMarketCandlesticks("KXHIGHNY", ticker, NOON - 6 * 3_600, NOON, 60)).data;
    expect(one.candlesticks).toHaveLength(7);
    const batch = (
      await api.batchGetMarketCandlesticks(`${ticker},${live.markets[3]!.ticker}`, NOON - 6 * 3_600, NOON, 60)
    ).data.markets;
    expect(batch.map((m) => m.market_ticker)).toEqual([ticker, live.markets[3]!.ticker]);
    expect(batch[0]!.candlesticks).toEqual(one.candlesticks);
    const before = (await api.getMarketCandlesticks("KXHIGHNY", ticker, NOON - 6 * 3_600, NOON, 60, true))
      .data;
    expect(before.candlesticks.map((c) => c.end_period_ts)).toEqual([
      NOON - 7 * 3_600,
      ...one.candlesticks.map((c) => c.end_period_ts),
    ]);
    expect(before.candlesticks.slice(1).map((c) => c.yes_bid)).toEqual(
      one.candlesticks.map((c) => c.yes_bid),
    );
  });
});

describe("EventsApi", () => {
  it("events, one event, its metadata, candlesticks and forecast history", async () => {
    const api = new EventsApi(config);
    const page = (await api.getEvents(1, undefined, true, undefined, "open", "KXHIGHNY")).data;
    expect(page.events).toHaveLength(1);
    const next = (await api.getEvents(1, page.cursor, true, undefined, "open", "KXHIGHNY")).data;
    expect(next.events[0]!.event_ticker).not.toBe(page.events[0]!.event_ticker);
    for (const e of [...page.events, ...next.events]) {
      expect(["active", "inactive"]).toContain(e.markets?.[0]?.status);
    }
    const one = (await api.getEvent(live.ticker)).data;
    expect(one.markets.map((m) => m.ticker)).toEqual(live.markets.map((m) => m.ticker));
    const metadata = (await api.getEventMetadata(live.ticker)).data;
    expect(metadata.image_url).toBe(live.imageUrl);
    expect(metadata.market_details.map((m) => m.market_ticker)).toEqual(live.markets.map((m) => m.ticker));
    expect(metadata.settlement_sources[0]?.name).toBe("National Weather Service");
    const candles = (await api.getMarketCandlesticksByEvent(live.ticker, "KXHIGHNY", NOON - 3_600, NOON, 60))
      .data;
    expect(candles.market_tickers).toEqual(live.markets.map((m) => m.ticker));
    const history = (
      await api.getEventForecastPercentilesHistory(live.ticker, "KXHIGHNY", [5000], NOON - 3_600, NOON, 60)
    ).data.forecast_history;
    expect(history.map((p) => p.end_period_ts)).toEqual([NOON - 3_600, NOON]);
  });

  it("multivariate events: none made yet in a collection that exists", async () => {
    const collections = (await new MultivariateApi(config).getMultivariateEventCollections()).data;
    const ticker = collections.multivariate_contracts[0]!.collection_ticker;
    const events = (await new EventsApi(config).getMultivariateEvents(10, undefined, undefined, ticker)).data;
    expect(events).toEqual({ events: [], cursor: "" });
  });
});

describe("HistoricalApi", () => {
  it("the cutoff, and the markets, candles and trades behind it", async () => {
    const api = new HistoricalApi(config);
    const cutoff = (await api.getHistoricalCutoff()).data;
    expect(seconds(cutoff.market_settled_ts)).toBe(CUTOFF);
    expect(seconds(cutoff.trades_created_ts)).toBe(CUTOFF);
    const listed = (await api.getHistoricalMarkets(100, undefined, undefined, old.ticker)).data.markets;
    expect(listed.map((m) => m.ticker)).toEqual(old.markets.map((m) => m.ticker));
    const market = old.markets[0]!;
    expect((await api.getHistoricalMarket(market.ticker)).data.market.status).toBe("finalized");
    const candles = (
      await api.getMarketCandlesticksHistorical(
        market.ticker,
        market.closeTime - 6 * 3_600,
        market.closeTime,
        60,
      )
    ).data;
    expect(candles.candlesticks.length).toBeGreaterThan(4);
    expect(candles.candlesticks[0]!.yes_bid.close).toMatch(/^0\.\d{4}$/);
    expect(candles.candlesticks[0]!.volume).toMatch(/^\d+\.00$/);
    const trades = (await api.getTradesHistorical(market.ticker, undefined, undefined, 5)).data;
    expect(trades.trades).toHaveLength(5);
    expect(trades.trades.every((t) => seconds(t.created_time) < CUTOFF)).toBe(true);
    const refused = await api.getHistoricalMarket(live.markets[0]!.ticker).catch((e) => e.response);
    expect(refused.status).toBe(404);
  });
});

describe("SearchApi", () => {
  it("sports with their competitions and scopes, and tags by category", async () => {
    const api = new SearchApi(config);
    const sports = (await api.getFiltersForSports()).data;
    expect(sports.sport_ordering).toEqual(expect.arrayContaining(["Basketball", "Football", "Soccer"]));
    expect(sports.filters_by_sports.Basketball?.competitions.NBA?.scopes).toEqual(
      expect.arrayContaining(["Game", "Total Points"]),
    );
    const tags = (await api.getTagsForSeriesCategories()).data.tags_by_categories;
    expect(tags["Climate and Weather"]).toEqual(["Weather", "Daily temperature"]);
  });
});

describe("MultivariateApi and StructuredTargetsApi", () => {
  it("same-game collections of the games' events, and the games' teams", async () => {
    const api = new MultivariateApi(config);
    const list = (await api.getMultivariateEventCollections("open", undefined, "KXNBAGAME")).data;
    expect(list.multivariate_contracts.length).toBeGreaterThan(0);
    const first = list.multivariate_contracts[0]!;
    expect(first.associated_event_tickers.length).toBeGreaterThanOrEqual(2);
    for (const ticker of first.associated_event_tickers) {
      expect(catalogue.events.some((e) => e.ticker === ticker)).toBe(true);
    }
    const one = (await api.getMultivariateEventCollection(first.collection_ticker)).data
      .multivariate_contract;
    expect(one).toEqual(first);

    const targets = new StructuredTargetsApi(config);
    const teams = (await targets.getStructuredTargets(undefined, "basketball_team", "NBA", 500)).data;
    expect(teams.structured_targets!.length).toBeGreaterThan(1);
    const team = teams.structured_targets![0]!;
    expect((await targets.getStructuredTarget(team.id!)).data.structured_target).toEqual(team);
    const byIds = (await targets.getStructuredTargets([team.id!])).data.structured_targets;
    expect(byIds).toEqual([team]);
  });
});

describe("MilestoneApi and LiveDataApi", () => {
  it("milestones and their live data, one, by type and in a batch", async () => {
    const milestones = new MilestoneApi(config);
    const page = (await milestones.getMilestones(5, undefined, "Sports", "NBA")).data.milestones;
    expect(page.length).toBeGreaterThan(0);
    const first = page[0]!;
    expect((await milestones.getMilestone(first.id)).data.milestone.id).toBe(first.id);
    const api = new LiveDataApi(config);
    expect((await api.getLiveDataByMilestone(first.id)).data.live_data.milestone_id).toBe(first.id);
    expect((await api.getLiveData(first.type, first.id)).data.live_data.milestone_id).toBe(first.id);
    expect((await api.getLiveDatas([first.id])).data.live_datas).toHaveLength(1);
    const [winner] = first.primary_event_tickers;
    const byEvent = (await api.getEventLiveData(winner!)).data.live_data;
    const byId = (await api.getLiveDataByMilestone(first.id)).data.live_data;
    expect(byEvent).toMatchObject({ type: first.type, details: byId.details });
    expect(byEvent.is_historical).toBe(seconds(first.end_date!) <= NOW);
  });
});

describe("bounds", () => {
  const refusal = async (path: string) => {
    const response = await fetch(`${simulator.url}${path}`);
    return {
      status: response.status,
      body: (await response.json()) as { error: { code: string; message: string } },
    };
  };

  it.each([
    [
      "101 order books",
      `/markets/orderbooks?${Array.from({ length: 101 }, (_, i) => `tickers=T${i}`).join("&")}`,
    ],
    ["a ticker of 129 characters", `/markets/orderbooks?tickers=${"T".repeat(129)}`],
    [
      "101 markets' candles",
      `/markets/candlesticks?market_tickers=${Array.from({ length: 101 }, (_, i) => `T${i}`).join(",")}&start_ts=0&end_ts=60&period_interval=1`,
    ],
    ["a page of no structured targets", "/structured_targets?page_size=0"],
    ["a cursor the exchange never issued", "/historical/markets?cursor=abc"],
    ["a negative time", "/historical/trades?min_ts=-1"],
    [
      "a period Kalshi does not offer",
      "/historical/markets/X/candlesticks?start_ts=0&end_ts=60&period_interval=5",
    ],
    ["an unknown collection status", "/multivariate_event_collections?status=maybe"],
  ])("refuses %s with Kalshi's 400 body", async (_what, path) => {
    const { status, body } = await refusal(path);
    expect(status).toBe(400);
    expect(body.error.code).toBe("bad_request");
  });

  it("refuses a batch of candles over 10,000 as a whole, each market's range being allowed", async () => {
    const tickers = live.markets
      .slice(0, 3)
      .map((m) => m.ticker)
      .join(",");
    const { status, body } = await refusal(
      `/markets/candlesticks?market_tickers=${tickers}&start_ts=${NOW - 4_000 * 60}&end_ts=${NOW}&period_interval=1`,
    );
    expect(status).toBe(400);
    expect(body.error.message).toMatch(/at most 10000/);
  });

  it("answers an unknown event's metadata and collection with Kalshi's 404 body", async () => {
    for (const path of [
      "/events/NOPE/metadata",
      "/multivariate_event_collections/NOPE",
      "/structured_targets/NOPE",
    ]) {
      const { status, body } = await refusal(path);
      expect(status).toBe(404);
      expect(body.error.code).toBe("not_found");
    }
  });
});
