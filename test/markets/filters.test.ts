/**
 * Every filter and paging rule of the list routes (contract §5, reference §3.1–3.5 and 3.9), checked
 * against a brute-force filter: the whole demo catalogue is read through the API once, each case is
 * filtered and sorted here, and the route's answer, walked page by page, must be exactly that.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Event,
  MARKET_STATUSES,
  type Market,
  type Series,
  type SortKey,
  USDC_MINT,
} from "../../src/contract/markets.js";
import { startTestServer, type TestServer } from "../support/server.js";

type Query = Record<string, string | undefined>;
// biome-ignore lint/suspicious/noExplicitAny: bodies of several shapes, inspected field by field
type Json = any;

let t: TestServer;
let events: Event[] = [];
let markets: Market[] = [];
let series: Series[] = [];
const seriesOf = new Map<string, Series>();
const eventOf = new Map<string, Event>();

beforeAll(async () => {
  t = await startTestServer();
  events = await walk("/api/v1/events", { withNestedMarkets: "true" }, "events", 200);
  markets = events.flatMap((event) => event.markets ?? []);
  series = (await get("/api/v1/series")).json.series;
  for (const s of series) seriesOf.set(s.ticker, s);
  for (const event of events) eventOf.set(event.ticker, event);
}, 60_000);
afterAll(async () => t?.stop());

function pathOf(path: string, query: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

async function get(path: string): Promise<{ status: number; json: Json; headers: Headers }> {
  const response = await fetch(`${t.url}${path}`);
  return { status: response.status, json: await response.json(), headers: response.headers };
}

/** Every item of a list route, page by page; each page no longer than `limit`, each cursor where the page ended. */
async function walk<T>(path: string, query: Query, key: string, limit: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: number | null = 0;
  for (let pages = 0; cursor !== null; pages++) {
    if (pages > 10_000) throw new Error("the walk never ends");
    const page = await get(pathOf(path, { ...query, limit: String(limit), cursor: String(cursor) }));
    expect(page.status, JSON.stringify(page.json)).toBe(200);
    const found = page.json[key] as T[];
    expect(found.length).toBeLessThanOrEqual(limit);
    const next: number | null = page.json.cursor;
    if (next !== null) {
      expect(found.length).toBe(limit);
      expect(next).toBe(cursor + found.length);
    }
    items.push(...found);
    cursor = next;
  }
  return items;
}

const byTicker = (a: { ticker: string }, b: { ticker: string }) =>
  a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0;

/** The catalogue's order: ticker order, or by a key (descending unless asked), ties in ticker order. */
function sortLike<T extends { ticker: string }>(items: T[], key: (item: T) => number, q: Query): T[] {
  const sorted = [...items].sort(byTicker);
  if (q.sort === undefined) return q.order === "desc" ? sorted.reverse() : sorted;
  const sign = (q.order ?? "desc") === "asc" ? 1 : -1;
  return sorted.sort((a, b) => sign * (key(a) - key(b)));
}

const initialized = (market: Market) => market.accounts[USDC_MINT]?.isInitialized === true;
const list = (value: string | undefined) => value?.split(",").map((item) => item.trim());

function seriesPasses(ticker: string, q: Query): boolean {
  const s = seriesOf.get(ticker);
  const tags = list(q.tags);
  if (q.category !== undefined && s?.category !== q.category) return false;
  if (tags !== undefined && !tags.some((tag) => s?.tags.includes(tag))) return false;
  return true;
}

function eventKey(sort: SortKey | undefined): (event: Event) => number {
  return (event) => {
    switch (sort) {
      case "volume":
        return event.volume ?? 0;
      case "volume24h":
        return event.volume24h ?? 0;
      case "liquidity":
        return event.liquidity ?? 0;
      case "openInterest":
        return event.openInterest ?? 0;
      default: {
        const own = event.markets ?? [];
        return own.length > 0 ? Math.min(...own.map((m) => m.openTime)) : (event.strikeDate ?? 0);
      }
    }
  };
}

function marketKey(sort: SortKey | undefined): (market: Market) => number {
  return (market) => {
    switch (sort) {
      case "volume":
        return market.volume;
      case "volume24h":
        return market.volume24hFp === null ? 0 : Number.parseFloat(market.volume24hFp);
      case "liquidity":
        return eventOf.get(market.eventTicker)?.liquidity ?? 0;
      case "openInterest":
        return market.openInterest;
      default:
        return market.openTime;
    }
  };
}

function expectedEvents(q: Query): string[] {
  const seriesTickers = list(q.seriesTickers);
  const matching = events.filter(
    (event) =>
      (seriesTickers === undefined || seriesTickers.includes(event.seriesTicker)) &&
      (q.isInitialized === undefined ||
        (event.markets ?? []).some(initialized) === (q.isInitialized === "true")) &&
      (q.status === undefined || (event.markets ?? []).some((m) => m.status === q.status)) &&
      seriesPasses(event.seriesTicker, q),
  );
  return sortLike(matching, eventKey(q.sort as SortKey | undefined), q).map((event) => event.ticker);
}

function expectedMarkets(q: Query): string[] {
  const tickers = list(q.tickers);
  const matching = markets.filter(
    (m) =>
      (tickers === undefined || tickers.includes(m.ticker)) &&
      (q.isInitialized === undefined || initialized(m) === (q.isInitialized === "true")) &&
      (q.status === undefined || m.status === q.status) &&
      (q.eventTicker === undefined || m.eventTicker === q.eventTicker) &&
      (q.seriesTicker === undefined || eventOf.get(m.eventTicker)?.seriesTicker === q.seriesTicker) &&
      (q.minCloseTs === undefined || m.closeTime >= Number(q.minCloseTs)) &&
      (q.maxCloseTs === undefined || m.closeTime <= Number(q.maxCloseTs)),
  );
  return sortLike(matching, marketKey(q.sort as SortKey | undefined), q).map((m) => m.ticker);
}

function expectedSearch(q: Query): string[] {
  const tokens = (q.q ?? "").trim().toLowerCase().split(/\s+/);
  const matching = events.filter((event) => {
    const fields = [event.ticker, event.seriesTicker, event.title, event.subtitle];
    for (const m of event.markets ?? []) fields.push(m.ticker, m.title, m.yesSubTitle, m.noSubTitle);
    const text = fields.map((field) => field.toLowerCase());
    return (
      (q.status === undefined || (event.markets ?? []).some((m) => m.status === q.status)) &&
      tokens.every((token) => text.some((field) => field.includes(token)))
    );
  });
  const sorted = { ...q, sort: q.sort ?? "volume", order: q.order ?? "desc" };
  return sortLike(matching, eventKey(sorted.sort as SortKey), sorted).map((event) => event.ticker);
}

function expectedSeries(q: Query): string[] {
  return series
    .filter((s) => {
      const own = events.filter((event) => event.seriesTicker === s.ticker);
      const ownMarkets = own.flatMap((event) => event.markets ?? []);
      return (
        seriesPasses(s.ticker, q) &&
        (q.isInitialized === undefined || ownMarkets.some(initialized) === (q.isInitialized === "true")) &&
        (q.status === undefined || ownMarkets.some((m) => m.status === q.status))
      );
    })
    .sort(byTicker)
    .map((s) => s.ticker);
}

/** Every combination of the given values of each parameter (undefined: the parameter left out). */
function combinations(dimensions: Record<string, (string | undefined)[]>): Query[] {
  let queries: Query[] = [{}];
  for (const [name, values] of Object.entries(dimensions)) {
    queries = queries.flatMap((query) => values.map((value) => ({ ...query, [name]: value })));
  }
  return queries;
}

/** Sort and order, rotated through the combinations so each filter meets several orders. */
const ORDERS: Query[] = [
  {},
  { order: "desc" },
  { sort: "volume" },
  { sort: "volume24h", order: "asc" },
  { sort: "liquidity" },
  { sort: "openInterest", order: "asc" },
  { sort: "startDate" },
  { sort: "startDate", order: "asc" },
];
const withOrders = (queries: Query[]) => queries.map((q, i) => ({ ...q, ...ORDERS[i % ORDERS.length] }));

const describeQuery = (q: Query) =>
  Object.entries(q)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join("&") || "(no filter)";

describe("the catalogue read through the API", () => {
  it("is the demo catalogue, with every kind of series and status the cases below filter on", () => {
    expect(events.length).toBeGreaterThan(700);
    expect(markets.length).toBeGreaterThan(4_000);
    for (const status of MARKET_STATUSES) expect(markets.some((m) => m.status === status)).toBe(true);
    expect(new Set(series.map((s) => s.category)).size).toBeGreaterThan(4);
    // Each filter value the cases use keeps some events and drops others.
    for (const q of [
      { category: "Sports" },
      { tags: "S&P 500" },
      { tags: "NFL,Soccer" },
      { status: "inactive" },
    ]) {
      const kept = expectedEvents(q).length;
      expect(kept, describeQuery(q)).toBeGreaterThan(0);
      expect(kept, describeQuery(q)).toBeLessThan(events.length);
    }
  });
});

describe("GET /events: every filter and combination against the brute-force filter", () => {
  const cases = withOrders([
    ...combinations({
      category: [undefined, "Sports", "Climate and Weather"],
      tags: [undefined, "NFL,Soccer", "Weather", "S&P 500"],
      status: [undefined, "active", "finalized"],
      isInitialized: [undefined, "true", "false"],
    }),
    ...MARKET_STATUSES.map((status) => ({ status })),
    { category: "No such category" },
    { category: "Politics", tags: "NBA" },
    { seriesTickers: "KXHIGHNY,KXHIGHCHI,KXNBAGAME", tags: "Weather" },
    { seriesTickers: "KXHIGHNY", category: "Sports" },
    { tags: " BTC , ETH " },
  ]);

  it.each(cases.map((q) => [describeQuery(q), q] as const))("%s", async (_name, q) => {
    const answer = await walk<Event>("/api/v1/events", q, "events", 97);
    expect(answer.map((event) => event.ticker)).toEqual(expectedEvents(q));
  });

  it("nests each matching event's markets on request", async () => {
    const q = { category: "Financials", withNestedMarkets: "true" };
    const answer = await walk<Event>("/api/v1/events", q, "events", 7);
    expect(answer.map((event) => event.ticker)).toEqual(expectedEvents(q));
    for (const event of answer) {
      expect(event.markets?.map((m) => m.ticker)).toEqual(
        eventOf.get(event.ticker)?.markets?.map((m) => m.ticker),
      );
    }
  });
});

describe("GET /markets: every filter and combination against the brute-force filter", () => {
  let someTickers: string;
  beforeAll(() => {
    // Markets of several events and states, plus tickers no market has.
    const picked = markets.filter((_, i) => i % 173 === 0).map((m) => m.ticker);
    someTickers = [...picked, "NOPE-1", "KXHIGHNY-00JAN01-T1"].join(",");
  });
  const window = {
    minCloseTs: String(1_795_305_600 - 3 * 86_400),
    maxCloseTs: String(1_795_305_600 + 86_400),
  };

  const cases = () =>
    withOrders([
      ...combinations({
        tickers: [undefined, someTickers],
        status: [undefined, "active", "determined"],
        isInitialized: [undefined, "true"],
        scope: [undefined, "series", "event"],
      }).map(({ scope, ...q }) => ({
        ...q,
        ...(scope === "series" ? { seriesTicker: "KXHIGHNY" } : {}),
        ...(scope === "event" ? { eventTicker: markets[0]?.eventTicker } : {}),
      })),
      ...combinations({ window: [undefined, "yes"], status: [undefined, "active", "closed"] }).map(
        ({ window: w, ...q }) => ({ ...q, ...(w ? window : {}) }),
      ),
      { minCloseTs: window.minCloseTs },
      { maxCloseTs: window.maxCloseTs, isInitialized: "false" },
      { tickers: markets[5]?.ticker },
    ]);

  it("matches every case", async () => {
    for (const q of cases()) {
      const answer = await walk<Market>("/api/v1/markets", q, "markets", 200);
      expect(
        answer.map((m) => m.ticker),
        describeQuery(q),
      ).toEqual(expectedMarkets(q));
    }
  }, 120_000);

  it("returns only the named markets, each once, in the requested order", async () => {
    const wanted = [markets[10]!.ticker, markets[3]!.ticker, markets[10]!.ticker];
    const page = await get(pathOf("/api/v1/markets", { tickers: wanted.join(",") }));
    expect(page.json.markets.map((m: Market) => m.ticker)).toEqual([markets[3]!.ticker, markets[10]!.ticker]);
    expect(page.json.cursor).toBeNull();
  });
});

describe("GET /series: category, tags, isInitialized and status against the brute-force filter", () => {
  const cases = combinations({
    category: [undefined, "Sports", "Crypto", "No such category"],
    tags: [undefined, "NBA", "BTC,Weather", "S&P 500"],
    isInitialized: [undefined, "true", "false"],
    status: [undefined, "initialized", "active", "finalized"],
  });

  it("matches every case", async () => {
    for (const q of cases) {
      const answer = await get(pathOf("/api/v1/series", q));
      expect(answer.status).toBe(200);
      expect(
        answer.json.series.map((s: Series) => s.ticker),
        describeQuery(q),
      ).toEqual(expectedSeries(q));
    }
    // The cases are not vacuous: some filters keep a few series and drop others.
    const kept = cases.map((q) => expectedSeries(q).length);
    expect(kept.some((n) => n > 0 && n < series.length)).toBe(true);
  });
});

describe("GET /search: tokens, status and paging against the brute-force filter", () => {
  const cases = withOrders(
    combinations({
      q: ["high", "KXHIGHNY", "nba game", "btc", "fed rate", "zzzznothing"],
      status: [undefined, "active", "finalized", "initialized"],
    }),
  );

  it.each(cases.map((q) => [describeQuery(q), q] as const))("%s", async (_name, q) => {
    const answer = await walk<Event>("/api/v1/search", q, "events", 31);
    expect(answer.map((event) => event.ticker)).toEqual(expectedSearch(q));
  });

  it("nests markets with their accounts, or with an empty accounts map on withMarketAccounts=false", async () => {
    const nested = await get("/api/v1/search?q=KXHIGHNY&limit=3&withNestedMarkets=true");
    const bare = await get(
      "/api/v1/search?q=KXHIGHNY&limit=3&withNestedMarkets=true&withMarketAccounts=false",
    );
    expect(bare.json.events.map((e: Event) => e.ticker)).toEqual(
      nested.json.events.map((e: Event) => e.ticker),
    );
    for (const [i, event] of (nested.json.events as Event[]).entries()) {
      for (const [j, market] of (event.markets ?? []).entries()) {
        expect(Object.keys(market.accounts)).toContain(USDC_MINT);
        expect(bare.json.events[i].markets[j]).toEqual({ ...market, accounts: {} });
      }
    }
    const explicit = await get(
      "/api/v1/search?q=KXHIGHNY&limit=3&withNestedMarkets=true&withMarketAccounts=true",
    );
    expect(explicit.json).toEqual(nested.json);
  });

  it("accepts entityType=events and refuses the entity types it cannot answer with", async () => {
    const events = await get("/api/v1/search?q=btc&entityType=events");
    expect(events.json).toEqual((await get("/api/v1/search?q=btc")).json);
    for (const type of ["markets", "series", "x".repeat(40)]) {
      const refused = await get(`/api/v1/search?q=btc&entityType=${type}`);
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe("bad_request");
      expect(refused.json.msg).toContain("entityType");
    }
  });
});

describe("limit=0: an empty page whose cursor stays where it was", () => {
  it.each([
    ["/api/v1/events", "events", {}],
    ["/api/v1/markets", "markets", {}],
    ["/api/v1/search", "events", { q: "high" }],
    ["/api/v1/events", "events", { category: "Sports", status: "active" }],
  ] as [string, string, Query][])("%s %o", async (path, key, query) => {
    const total = (await walk<unknown>(path, query, key, 200)).length;
    expect(total).toBeGreaterThan(2);
    for (const cursor of [0, 1, total - 1]) {
      const page = await get(pathOf(path, { ...query, limit: "0", cursor: String(cursor) }));
      expect(page.status).toBe(200);
      expect(page.json).toEqual({ [key]: [], cursor });
    }
    for (const cursor of [total, total + 1_000]) {
      const page = await get(pathOf(path, { ...query, limit: "0", cursor: String(cursor) }));
      expect(page.json).toEqual({ [key]: [], cursor: null });
    }
  });

  it("keeps a walk that mixes limit=0 pages stable: every event once", async () => {
    const seen: string[] = [];
    let cursor: number | null = 0;
    for (let i = 0; cursor !== null; i++) {
      const limit = i % 2 === 0 ? 0 : 150;
      const page: Json = (await get(`/api/v1/events?limit=${limit}&cursor=${cursor}`)).json;
      seen.push(...page.events.map((event: Event) => event.ticker));
      cursor = page.cursor;
    }
    expect(seen).toEqual(expectedEvents({}));
  });

  it("answers a filter that matches nothing with a null cursor", async () => {
    expect((await get("/api/v1/events?limit=0&category=Nothing")).json).toEqual({ events: [], cursor: null });
  });
});

describe("bounds: refused with 400 bad_request naming the parameter", () => {
  const many = (n: number, item = (i: number) => `T${i}`) =>
    Array.from({ length: n }, (_, i) => item(i)).join(",");
  it.each([
    ["/api/v1/markets", `tickers=${many(101)}`, "at most 100"],
    ["/api/v1/markets", `tickers=${"A".repeat(161)}`, "tickers"],
    ["/api/v1/events", `tags=${many(20, () => "t".repeat(90))}`, "characters"],
    ["/api/v1/markets", "tickers=A,,B", "blank"],
    ["/api/v1/markets", "tickers=", "blank"],
    ["/api/v1/markets", "limit=201", "limit"],
    ["/api/v1/markets", "limit=-1", "limit"],
    ["/api/v1/events", `tags=${many(26)}`, "at most 25"],
    ["/api/v1/events", `tags=${"t".repeat(65)}`, "tags"],
    ["/api/v1/events", `category=${"c".repeat(65)}`, "category"],
    ["/api/v1/events", "category=", "category"],
    ["/api/v1/events", "limit=1.5", "limit"],
    ["/api/v1/series", `tags=${many(26)}`, "at most 25"],
    ["/api/v1/series", "category=", "category"],
    ["/api/v1/series", "isInitialized=yes", "isInitialized"],
    ["/api/v1/series", "status=open", "status"],
    ["/api/v1/search", "q=a&status=open", "status"],
    ["/api/v1/search", "q=a&withMarketAccounts=no", "withMarketAccounts"],
    ["/api/v1/search", "q=a&limit=201", "limit"],
  ])("%s?%s", async (path, query, mentions) => {
    const response = await get(`${path}?${query}`);
    expect(response.status).toBe(400);
    expect(Object.keys(response.json).sort()).toEqual(["code", "msg"]);
    expect(response.json.code).toBe("bad_request");
    expect(response.json.msg).toContain(mentions);
  });

  it("takes exactly 100 tickers", async () => {
    const hundred = markets.slice(0, 100).map((m) => m.ticker);
    const page = await get(`/api/v1/markets?tickers=${hundred.join(",")}&limit=200`);
    expect(page.status).toBe(200);
    expect(page.json.markets).toHaveLength(100);
  });
});
