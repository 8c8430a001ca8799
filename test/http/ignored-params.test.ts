/**
 * Contract §2: a query parameter a route does not define is ignored and named in `x-ignored-params`,
 * on every route of both APIs; defined ones never are, and nothing is named when nothing was ignored.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USDC_MINT } from "../../src/contract/markets.js";
import { ignoredParams, MAX_IGNORED_NAME_CHARS, MAX_IGNORED_NAMES } from "../../src/http/ignored-params.js";
import { miniCatalogue } from "../support/fixtures.js";
import { rawRequest } from "../support/raw-http.js";
import { startTestServer, type TestServer } from "../support/server.js";

const SOL = "So11111111111111111111111111111111111111112";
const HEADER = "x-ignored-params";

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue(), settings: { DEMO_CATALOGUE: "true" } });
  port = Number(new URL(t.url).port);
}, 60_000);
afterAll(async () => t?.stop());

async function get(path: string, init?: RequestInit): Promise<{ status: number; ignored: string | null }> {
  const response = await fetch(`${t.url}${path}`, init);
  await response.arrayBuffer();
  return { status: response.status, ignored: response.headers.get(HEADER) };
}

const ORDER = `/order?inputMint=${SOL}&outputMint=${USDC_MINT}&amount=1000000000`;

describe("x-ignored-params on the prediction-market API", () => {
  it.each([
    ["/api/v1/events?limit=1&category=Sports&tags=NBA", null],
    ["/api/v1/events", null],
    ["/api/v1/events?limit=1&foo=1&bar=2&foo=3", "foo,bar"],
    ["/api/v1/markets?tickers=A&eventTickers=B", "eventTickers"],
    ["/api/v1/series?category=Sports&sort=volume", "sort"],
    ["/api/v1/search?q=nba&withMarketAccounts=true&entityType=events&x=1", "x"],
    ["/api/v1/event/KXHIGHNY-26NOV23?withNestedMarkets=true", null],
    ["/api/v1/event/KXHIGHNY-26NOV23?withNestedMarket=true", "withNestedMarket"],
    ["/api/v1/tags_by_categories?category=Sports", "category"],
    ["/api/v1/filters_by_sports?sport=NBA", "sport"],
    ["/api/v1/outcome_mints?minCloseTs=0&maxCloseTs=1", "maxCloseTs"],
    ["/api/v1/openapi.json?v=2", "v"],
  ])("%s → %s", async (path, ignored) => {
    const answer = await get(path);
    expect(answer.status).toBe(200);
    expect(answer.ignored).toBe(ignored);
  });

  it("names them on a refused request too, and on a POST route", async () => {
    expect(await get("/api/v1/events?limit=abc&zzz=1")).toEqual({ status: 400, ignored: "zzz" });
    const batch = await get("/api/v1/markets/batch?tickers=A", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tickers: ["KXHIGHNY-26NOV23-T52"] }),
    });
    expect(batch).toEqual({ status: 200, ignored: "tickers" });
  });

  it("compares names as the query parser reads them: percent-escapes and + decoded", async () => {
    // li%6Dit is limit, and is honoured as limit.
    const response = await fetch(`${t.url}/api/v1/events?li%6Dit=1&with+Nested=1`);
    expect(((await response.json()) as { events: unknown[] }).events).toHaveLength(1);
    expect(response.headers.get(HEADER)).toBe("with+Nested");
  });
});

describe("x-ignored-params on the trade API", () => {
  it("names a made-up parameter of /order, whose every reference parameter is honoured", async () => {
    const honoured = await get(`${ORDER}&slippageBps=50&onlyDirectRoutes=false&maxRouteLength=2`);
    expect(honoured).toEqual({ status: 200, ignored: null });
    expect(await get(`${ORDER}&madeUpParam=1&slippageBps=50`)).toEqual({
      status: 200,
      ignored: "madeUpParam",
    });
  });

  it.each([
    ["/tokens?x=1", "x"],
    ["/tokens-with-decimals", null],
    ["/venues?all=true", "all"],
    ["/health-check?deep=1", "deep"],
  ])("%s → %s", async (path, ignored) => {
    expect((await get(path)).ignored).toBe(ignored);
  });
});

describe("what is not an ignored parameter", () => {
  it("leaves the header off an unknown path and a key refused in the query", async () => {
    expect(await get("/api/v1/nope?x=1")).toEqual({ status: 404, ignored: null });
    expect(await get("/api/v1/events?api_key=secret&x=1")).toEqual({ status: 400, ignored: null });
  });
});

describe("bounds of the header", () => {
  const head = (target: string) => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

  it("keeps names as sent, with a comma percent-encoded so the list stays one name per comma", async () => {
    const answer = await rawRequest(port, head("/api/v1/events?limit=1&a,b=1&%E2%82%AC=3&&=4&x%20y"));
    expect(answer.status).toBe(200);
    expect(answer.headers[HEADER]).toBe("a%2Cb,%E2%82%AC,x%20y");
  });

  it(`lists at most ${MAX_IGNORED_NAMES} names, then "..."`, async () => {
    const names = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const answer = await get(`/api/v1/events?${names.map((name) => `${name}=1`).join("&")}`);
    expect(answer.ignored).toBe([...names.slice(0, MAX_IGNORED_NAMES), "..."].join(","));
  });

  it(`cuts a name to ${MAX_IGNORED_NAME_CHARS} characters`, async () => {
    const long = "n".repeat(5_000);
    const answer = await get(`/api/v1/events?${long}=1&short=2`);
    expect(answer.ignored).toBe(`${"n".repeat(MAX_IGNORED_NAME_CHARS - 3)}...,short`);
  });
});

describe("ignoredParams, for any query string", () => {
  it("is a valid header value: visible ASCII, one name per comma, bounded, each unknown name once", () => {
    const known = new Set(["limit", "cursor"]);
    const name = fc.oneof(
      fc.constantFrom("limit", "cursor", "a", "a,b", "%2C", "+"),
      fc.string({ maxLength: 80 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.string({ maxLength: 5 })), { maxLength: 40 }), (pairs) => {
        const query = pairs.map(([k, v]) => `${k}=${v}`).join("&");
        const value = ignoredParams(query, known);
        // Exactly the queries with a name the route does not define get a header.
        const unknown = query.split("&").some((pair) => {
          const k = pair.includes("=") ? pair.slice(0, pair.indexOf("=")) : pair;
          if (k === "") return false;
          let decoded = k;
          try {
            decoded = decodeURIComponent(k.replaceAll("+", " "));
          } catch {}
          return !known.has(decoded);
        });
        expect(value !== undefined, query).toBe(unknown);
        if (value === undefined) return;
        expect(value).toMatch(/^[\x21-\x7e]+$/);
        const names = value.split(",");
        expect(names.length).toBeLessThanOrEqual(MAX_IGNORED_NAMES + 1);
        expect(new Set(names).size).toBe(names.length);
        for (const shown of names) {
          expect(shown.length).toBeGreaterThan(0);
          expect(shown.length).toBeLessThanOrEqual(MAX_IGNORED_NAME_CHARS);
          expect(known.has(shown)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});
