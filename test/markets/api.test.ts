import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OddsgateApiError } from "../../src/client/markets.js";
import { CASH_MINT, Event, Market, Series, USDC_MINT } from "../../src/contract/markets.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

const EVENT_FIELDS = [
  "seriesTicker",
  "subtitle",
  "ticker",
  "title",
  "competition",
  "competitionScope",
  "imageUrl",
  "liquidity",
  "markets",
  "openInterest",
  "openInterestFp",
  "settlementSources",
  "strikeDate",
  "strikePeriod",
  "volume",
  "volume24h",
  "volume24hFp",
  "volumeFp",
];
const MARKET_FIELDS = [
  "accounts",
  "canCloseEarly",
  "closeTime",
  "eventTicker",
  "expirationTime",
  "fractionalTradingEnabled",
  "marketType",
  "noSubTitle",
  "openInterest",
  "openTime",
  "result",
  "rulesPrimary",
  "status",
  "subtitle",
  "ticker",
  "title",
  "volume",
  "yesSubTitle",
  "earlyCloseCondition",
  "noAsk",
  "noBid",
  "openInterestFp",
  "rulesSecondary",
  "volume24hFp",
  "volumeFp",
  "yesAsk",
  "yesBid",
];

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue() });
});
afterAll(async () => t?.stop());

async function raw(path: string, init?: RequestInit) {
  const response = await fetch(`${t.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

async function expectError(promise: Promise<unknown>, status: number, code: string, msgPart?: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OddsgateApiError);
  expect(error).toMatchObject({ status, code });
  if (msgPart) expect((error as OddsgateApiError).msg).toContain(msgPart);
}

describe("GET /api/v1/event/{event_id}", () => {
  it("returns every Event and Market field of the interface with the contract's types", async () => {
    const event = await t.client.getEvent("KXHIGHNY-26NOV23", { withNestedMarkets: true });
    expect(Object.keys(event).sort()).toEqual([...EVENT_FIELDS].sort());
    Event.strict().parse(event);
    expect(event.markets).toHaveLength(2);
    for (const market of event.markets ?? []) {
      expect(Object.keys(market).sort()).toEqual([...MARKET_FIELDS].sort());
      Market.strict().parse(market);
    }
    const [tokenized, untokenized] = event.markets!;
    expect(tokenized!.accounts[USDC_MINT]).toMatchObject({ isInitialized: true, redemptionStatus: null });
    expect(untokenized!.accounts[USDC_MINT]!.isInitialized).toBe(false);
    expect(untokenized!.yesBid).toBeNull();
    expect(event).toMatchObject({
      competition: null,
      imageUrl: null,
      strikeDate: 1_795_392_000,
      volumeFp: "200.00",
    });
  });

  it("leaves markets null unless asked, and accepts an explicit false", async () => {
    expect((await t.client.getEvent("KXHIGHNY-26NOV23")).markets).toBeNull();
    expect((await t.client.getEvent("KXHIGHNY-26NOV23", { withNestedMarkets: false })).markets).toBeNull();
  });

  it("shows a determined tokenized market as redeemable", async () => {
    const event = await t.client.getEvent("KXHIGHNY-26NOV21", { withNestedMarkets: true });
    expect(event.markets![0]).toMatchObject({ status: "determined", result: "yes" });
    expect(event.markets![0]!.accounts[USDC_MINT]!.redemptionStatus).toBe("open");
  });

  it("answers an unknown event with 404 event_not_found", async () => {
    await expectError(t.client.getEvent("KXNOPE-1"), 404, "event_not_found", "KXNOPE-1");
  });

  it.each(["yes", "1", "TRUE", ""])(
    "refuses withNestedMarkets=%s with a 400 naming the parameter",
    async (value) => {
      const response = await raw(`/api/v1/event/KXHIGHNY-26NOV23?withNestedMarkets=${value}`);
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({
        code: "bad_request",
        msg: expect.stringContaining("withNestedMarkets"),
      });
    },
  );

  it("ignores unknown query parameters", async () => {
    const response = await raw("/api/v1/event/KXHIGHNY-26NOV23?foo=bar&withNestedMarkets=true");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  });
});

describe("GET /api/v1/events", () => {
  it("pages through every event exactly once", async () => {
    const seen: string[] = [];
    let cursor: number | null = 0;
    while (cursor !== null) {
      const page = await t.client.listEvents({ limit: 2, cursor });
      seen.push(...page.events.map((e) => e.ticker));
      cursor = page.cursor;
    }
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
  });

  it("filters by series, status and initialization", async () => {
    const bySeries = await t.client.listEvents({ seriesTickers: ["KXNBAGAME"] });
    expect(bySeries.events.map((e) => e.ticker)).toEqual(["KXNBAGAME-26NOV23BOSLAL"]);
    const determined = await t.client.listEvents({ status: "determined" });
    expect(determined.events.map((e) => e.ticker)).toEqual(["KXHIGHNY-26NOV21"]);
    const initialized = await t.client.listEvents({ isInitialized: true });
    expect(initialized.events).toHaveLength(3);
  });

  it("sorts by a key, descending by default, and ascending on request", async () => {
    const byLiquidity = await t.client.listEvents({ sort: "liquidity" });
    expect(byLiquidity.events.map((e) => e.liquidity)).toEqual([20_000, 5_000, 0]);
    const ascending = await t.client.listEvents({ sort: "liquidity", order: "asc" });
    expect(ascending.events.map((e) => e.liquidity)).toEqual([0, 5_000, 20_000]);
  });

  it("nests markets on request", async () => {
    const page = await t.client.listEvents({ withNestedMarkets: true, seriesTickers: ["KXNBAGAME"] });
    expect(page.events[0]!.markets).toHaveLength(2);
  });

  it.each([
    ["limit=-1", "limit"],
    ["limit=201", "limit"],
    ["limit=abc", "limit"],
    ["cursor=-1", "cursor"],
    ["sort=price", "sort"],
    ["order=sideways", "order"],
    ["status=open", "status"],
    [`seriesTickers=${Array.from({ length: 26 }, (_, i) => `S${i}`).join(",")}`, "seriesTickers"],
    ["seriesTickers=A,,B", "seriesTickers"],
  ])("refuses %s with a 400 naming %s", async (query, name) => {
    const response = await raw(`/api/v1/events?${query}`);
    expect(response.status).toBe(400);
    expect(response.json().code).toBe("bad_request");
    expect(response.json().msg).toContain(name);
  });
});

describe("markets", () => {
  it("finds a market by ticker and by each of its mints", async () => {
    const market = await t.client.getMarket("KXHIGHNY-26NOV23-B47.5");
    Market.strict().parse(market);
    const account = market.accounts[USDC_MINT]!;
    for (const mint of [account.marketLedger, account.yesMint, account.noMint]) {
      expect((await t.client.getMarketByMint(mint)).ticker).toBe(market.ticker);
    }
  });

  it("answers unknown tickers and mints with 404 market_not_found", async () => {
    await expectError(t.client.getMarket("NOPE"), 404, "market_not_found");
    await expectError(t.client.getMarketByMint(USDC_MINT), 404, "market_not_found");
  });

  it("lists markets with filters", async () => {
    const all = await t.client.listMarkets({ limit: 200 });
    expect(all.markets).toHaveLength(5);
    expect(all.cursor).toBeNull();
    const ofEvent = await t.client.listMarkets({ eventTicker: "KXHIGHNY-26NOV23" });
    expect(ofEvent.markets.map((m) => m.ticker)).toEqual(["KXHIGHNY-26NOV23-B47.5", "KXHIGHNY-26NOV23-T52"]);
    const ofSeries = await t.client.listMarkets({ seriesTicker: "KXNBAGAME", isInitialized: true });
    expect(ofSeries.markets.map((m) => m.ticker)).toEqual(["KXNBAGAME-26NOV23BOSLAL-BOS"]);
    const initialized = await t.client.listMarkets({ status: "initialized" });
    expect(initialized.markets.map((m) => m.ticker)).toEqual(["KXNBAGAME-26NOV23BOSLAL-LAL"]);
    expect((await t.client.listMarkets({ minCloseTs: 1_795_305_601 })).markets).toHaveLength(0);
    expect((await t.client.listMarkets({ maxCloseTs: 1_795_305_600 })).markets).toHaveLength(5);
  });

  it("refuses a millisecond close time", async () => {
    const response = await raw("/api/v1/markets?minCloseTs=1795305600000");
    expect(response.status).toBe(400);
    expect(response.json().msg).toContain("milliseconds");
  });

  it("fetches a batch by tickers and mints, skipping unknown ids", async () => {
    const mint = (await t.client.getMarket("KXNBAGAME-26NOV23BOSLAL-BOS")).accounts[USDC_MINT]!.noMint;
    const batch = await t.client.marketsBatch({
      tickers: ["KXHIGHNY-26NOV23-T52", "NOPE"],
      mints: [mint, "NOPE"],
    });
    expect(batch.markets.map((m) => m.ticker).sort()).toEqual([
      "KXHIGHNY-26NOV23-T52",
      "KXNBAGAME-26NOV23BOSLAL-BOS",
    ]);
  });

  it("refuses a batch of more than 100 ids and unknown body fields", async () => {
    const tickers = Array.from({ length: 60 }, (_, i) => `T${i}`);
    await expectError(t.client.marketsBatch({ tickers, mints: tickers }), 400, "bad_request", "100");
    const extra = await raw("/api/v1/markets/batch", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tickers: [], ids: ["x"] }),
    });
    expect(extra.status).toBe(400);
  });

  it("lists and filters outcome mints of tokenized markets", async () => {
    const { mints } = await t.client.outcomeMints();
    // Three tokenized markets, each with a yes and a no mint on the USDC and on the CASH rail.
    expect(mints).toHaveLength(12);
    const market = await t.client.getMarket("KXHIGHNY-26NOV23-B47.5");
    const account = market.accounts[USDC_MINT]!;
    expect(mints).toContain(account.yesMint);
    expect(mints).toContain(market.accounts[CASH_MINT]?.noMint);
    const filtered = await t.client.filterOutcomeMints([
      account.yesMint,
      account.marketLedger,
      USDC_MINT,
      account.noMint,
    ]);
    expect(filtered.outcomeMints).toEqual([account.yesMint, account.noMint]);
    expect((await t.client.outcomeMints({ minCloseTs: 1_795_305_601 })).mints).toHaveLength(0);
  });

  it("refuses more than 200 addresses", async () => {
    await expectError(
      t.client.filterOutcomeMints(Array.from({ length: 201 }, (_, i) => `A${i}`)),
      400,
      "bad_request",
      "200",
    );
  });
});

describe("series, tags, sports and search", () => {
  it("lists and fetches series with every field", async () => {
    const { series } = await t.client.listSeries();
    expect(series.map((s) => s.ticker)).toEqual(["KXHIGHNY", "KXNBAGAME"]);
    for (const s of series) Series.strict().parse(s);
    expect((await t.client.listSeries({ category: "Sports" })).series.map((s) => s.ticker)).toEqual([
      "KXNBAGAME",
    ]);
    expect((await t.client.listSeries({ tags: ["NBA"] })).series).toHaveLength(1);
    expect((await t.client.getSeries("KXHIGHNY")).category).toBe("Climate and Weather");
    await expectError(t.client.getSeries("NOPE"), 404, "series_not_found");
  });

  it("groups tags by category", async () => {
    expect(await t.client.tagsByCategories()).toEqual({
      tagsByCategories: { "Climate and Weather": ["Weather"], Sports: ["Basketball", "NBA"] },
    });
  });

  it("derives sports filters from sports series and their events", async () => {
    expect(await t.client.filtersBySports()).toEqual({
      filtersBySports: { Basketball: { scopes: ["Game"], competitions: ["NBA"] } },
      sportOrdering: ["Basketball"],
    });
  });

  it("matches every token against tickers, titles and market subtitles, case-insensitively", async () => {
    // Ranked by volume by default: the determined event traded 900, the open one 200.
    expect((await t.client.search("kxhighny")).events.map((e) => e.ticker)).toEqual([
      "KXHIGHNY-26NOV21",
      "KXHIGHNY-26NOV23",
    ]);
    expect((await t.client.search("kxhighny", { sort: "volume", order: "asc" })).events[0]?.ticker).toBe(
      "KXHIGHNY-26NOV23",
    );
    expect((await t.client.search("celtics")).events.map((e) => e.ticker)).toEqual([
      "KXNBAGAME-26NOV23BOSLAL",
    ]);
    expect((await t.client.search("KXHIGHNY 47° nov23")).events.map((e) => e.ticker)).toEqual([
      "KXHIGHNY-26NOV23",
    ]);
    expect((await t.client.search("celtics weather")).events).toHaveLength(0);
  });

  it("requires a non-blank q", async () => {
    expect((await raw("/api/v1/search")).status).toBe(400);
    const blank = await raw("/api/v1/search?q=%20%20");
    expect(blank.status).toBe(400);
    expect(blank.json().msg).toContain("q");
  });
});

describe("protocol behaviour", () => {
  it("answers unknown routes with 404 not_found and wrong methods with 405", async () => {
    const missing = await raw("/api/v1/nope");
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ code: "not_found", msg: expect.stringContaining("/api/v1/nope") });
    const wrongMethod = await raw("/api/v1/event/KXHIGHNY-26NOV23", { method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.json().code).toBe("method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toContain("GET");
  });

  it("refuses bodies over 64 KiB, wrong content types and malformed JSON", async () => {
    const post = (body: string, type = "application/json") =>
      raw("/api/v1/markets/batch", { method: "POST", headers: { "content-type": type }, body });
    const big = await post(JSON.stringify({ tickers: ["x".repeat(70_000)] }));
    expect(big.status).toBe(413);
    expect(big.json().code).toBe("payload_too_large");
    const text = await post("tickers=a", "text/plain");
    expect(text.status).toBe(415);
    expect(text.json().code).toBe("unsupported_media_type");
    const malformed = await post('{"tickers": [');
    expect(malformed.status).toBe(400);
    expect(malformed.json().code).toBe("invalid_json");
    const poisoned = await post('{"__proto__": {"x": 1}}');
    expect(poisoned.status).toBe(400);
  });

  it("echoes a plain x-request-id and generates one otherwise", async () => {
    const echoed = await raw("/health-check", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const generated = await raw("/health-check", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const error = await raw("/api/v1/event/NOPE");
    expect(error.headers.get("x-request-id")).toBeTruthy();
  });

  it("serves health, metrics, the OpenAPI document and the docs page", async () => {
    const health = await raw("/health-check");
    expect(health.status).toBe(200);
    expect(health.headers.get("content-type")).toMatch(/^text\/plain/);
    const metrics = await raw("/metrics");
    expect(metrics.text).toContain("oddsgate_http_requests_total");
    expect(metrics.text).toMatch(/oddsgate_catalog_markets 5/);
    const openapi = (await raw("/api/v1/openapi.json")).json();
    expect(openapi.info).toMatchObject({ title: "prediction-markets-api", version: "0.1.0" });
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/event/{event_id}",
        "/api/v1/events",
        "/api/v1/markets/batch",
        "/api/v1/search",
      ]),
    );
    expect(openapi.paths["/api/v1/event/{event_id}"].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "withNestedMarkets", in: "query" })]),
    );
    const docs = await raw("/docs/");
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("/api/v1/openapi.json");
  });
});
