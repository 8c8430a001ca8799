/**
 * Property-based fuzz of every prediction-market route: whatever the path, query or body, the
 * answer is a 2xx or a 4xx with a `{code, msg}` body, never a 5xx.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue() });
});
afterAll(async () => t?.stop());

const QUERY_NAMES = [
  "withNestedMarkets",
  "limit",
  "cursor",
  "sort",
  "order",
  "seriesTickers",
  "isInitialized",
  "status",
  "eventTicker",
  "seriesTicker",
  "minCloseTs",
  "maxCloseTs",
  "q",
  "percentiles",
  "startTs",
  "endTs",
  "periodInterval",
  "ticker",
  "minTs",
  "maxTs",
  "category",
  "tags",
  "x",
];
const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.integer().map(String),
  fc.bigInt().map(String),
  fc.double().map(String),
  fc.constantFrom(
    "true",
    "false",
    "",
    "-1",
    "1e3",
    "0x10",
    "NaN",
    "null",
    "[]",
    "%00",
    "%ZZ",
    "../",
    "volume",
    "asc",
  ),
);
const pathSegment = fc.oneof(
  fc.constantFrom(
    "KXHIGHNY-26NOV23",
    "KXHIGHNY",
    "KXHIGHNY-26NOV23-B47.5",
    "by-mint",
    "..",
    "%2F",
    "%00",
    "%E0%A4%A",
  ),
  fc.string({ minLength: 1 }).map(encodeURIComponent),
);
const queryString = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string()), nasty), { maxLength: 6 })
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&"));
const jsonBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        tickers: fc.array(nasty, { maxLength: 120 }),
        mints: fc.anything(),
        addresses: fc.array(fc.anything(), { maxLength: 210 }),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.string(),
);

const GET_ROUTES = [
  (s: string) => `/api/v1/event/${s}`,
  () => "/api/v1/events",
  (s: string) => `/api/v1/market/${s}`,
  (s: string) => `/api/v1/market/by-mint/${s}`,
  () => "/api/v1/markets",
  () => "/api/v1/outcome_mints",
  () => "/api/v1/series",
  (s: string) => `/api/v1/series/${s}`,
  () => "/api/v1/tags_by_categories",
  () => "/api/v1/filters_by_sports",
  () => "/api/v1/search",
  (s: string) => `/api/v1/${s}`,
  // Relayed to the upstream exchange (the simulator), which must never turn bad input into a 5xx.
  (s: string) => `/api/v1/event/KXHIGHNY/${s}/forecast_percentile_history`,
  (s: string) => `/api/v1/event/${s}/KXHIGHNY-26NOV23/forecast_percentile_history`,
  (s: string) => `/api/v1/event/by-mint/${s}/forecast_percentile_history`,
  (s: string) => `/api/v1/orderbook/${s}`,
  (s: string) => `/api/v1/orderbook/by-mint/${s}`,
  () => "/api/v1/trades",
  (s: string) => `/api/v1/trades/by-mint/${s}`,
  (s: string) => `/api/v1/market/${s}/candlesticks`,
  (s: string) => `/api/v1/event/${s}/candlesticks`,
];
const POST_ROUTES = ["/api/v1/markets/batch", "/api/v1/filter_outcome_mints"];

async function expectClientSafe(url: string, init?: RequestInit): Promise<void> {
  const response = await fetch(url, init);
  const text = await response.text();
  expect(response.status, `${init?.method ?? "GET"} ${url} -> ${text}`).toBeLessThan(500);
  if (response.status >= 400) {
    const body = JSON.parse(text);
    expect(typeof body.code).toBe("string");
    expect(typeof body.msg).toBe("string");
    expect(Object.keys(body).sort()).toEqual(["code", "msg"]);
  }
}

describe("fuzz: never a 5xx, every error is {code,msg}", () => {
  it.each(GET_ROUTES.map((route, i) => [route("X").replace("/X", "/{param}"), i] as const))(
    "GET %s",
    async (_name, index) => {
      const route = GET_ROUTES[index]!;
      await fc.assert(
        fc.asyncProperty(pathSegment, queryString, async (segment, query) => {
          await expectClientSafe(`${t.url}${route(segment)}?${query}`);
        }),
        { numRuns: 60 },
      );
    },
  );

  it.each(POST_ROUTES)("POST %s", async (route) => {
    await fc.assert(
      fc.asyncProperty(
        jsonBody,
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "text/plain",
          "application/x-www-form-urlencoded",
          "",
        ),
        queryString,
        async (body, type, query) => {
          const headers: Record<string, string> = type ? { "content-type": type } : {};
          await expectClientSafe(`${t.url}${route}?${query}`, { method: "POST", headers, body });
        },
      ),
      { numRuns: 100 },
    );
  });

  it("other methods on every route", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("PUT", "PATCH", "DELETE", "OPTIONS", "POST", "GET"),
        fc.constantFrom(...GET_ROUTES.map((r) => r("KXHIGHNY")), ...POST_ROUTES),
        async (method, path) => {
          await expectClientSafe(`${t.url}${path}`, { method });
        },
      ),
      { numRuns: 60 },
    );
  });
});
