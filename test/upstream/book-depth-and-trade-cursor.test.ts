/**
 * The order book's `depth` (relayed to the upstream, honoured by the simulator, cut by the relay too)
 * and the trade tape's `cursor` (reference §3.3–3.4): a trade id, the last of a page, that the next
 * page continues after; none once nothing follows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Upstream, UpstreamAnswer } from "../../src/upstream/client.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { startTestServer, type TestServer } from "../support/server.js";

// biome-ignore lint/suspicious/noExplicitAny: bodies of several shapes, inspected field by field
type Json = any;
interface Trade {
  tradeId: string;
  createdTime: number;
}

let t: TestServer;
let upstream: string;
let market: { ticker: string; yesMint: string; noMint: string };

beforeAll(async () => {
  t = await startTestServer();
  upstream = t.server.upstream.url;
  const page = await t.client.listEvents({
    seriesTickers: ["KXHIGHNY"],
    status: "active",
    withNestedMarkets: true,
  });
  const first = page.events.find((e) => (e.markets?.length ?? 0) >= 5)?.markets?.[0];
  if (!first) throw new Error("the demo catalogue has no active KXHIGHNY market");
  market = { ticker: first.ticker, ...Object.values(first.accounts)[0]! };
}, 60_000);
afterAll(async () => t?.stop());

async function get(url: string): Promise<{ status: number; json: Json }> {
  const response = await fetch(url.startsWith("http") ? url : `${t.url}${url}`);
  return { status: response.status, json: await response.json() };
}

/** The `depth` best levels of a side, best first. */
const best = (side: Record<string, number>, depth: number) =>
  Object.fromEntries(
    Object.entries(side)
      .sort(([a], [b]) => Number(b) - Number(a))
      .slice(0, depth),
  );

/**
 * Calls `read` until the whole book read before and after it is the same (the simulated book moves
 * once a minute), at most five times, and returns both.
 */
async function steadily(path: string, read: () => Promise<Json>): Promise<{ full: Json; answer: Json }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = (await get(path)).json;
    const answer = await read();
    const after = (await get(path)).json;
    if (JSON.stringify(before.yes_bids) === JSON.stringify(after.yes_bids)) return { full: before, answer };
  }
  throw new Error("the book never held still for three requests");
}

describe("GET /orderbook?depth", () => {
  it.each([1, 3, 5])("keeps the %i best price levels a side, by ticker and by mint", async (depth) => {
    const path = `/api/v1/orderbook/${market.ticker}`;
    const { full, answer } = await steadily(path, async () => ({
      byTicker: (await get(`${path}?depth=${depth}`)).json,
      byMint: (await get(`/api/v1/orderbook/by-mint/${market.yesMint}?depth=${depth}`)).json,
    }));
    expect(Object.keys(full.yes_bids).length).toBeGreaterThan(depth);
    for (const book of [answer.byTicker, answer.byMint]) {
      expect(book.yes_bids).toEqual(best(full.yes_bids, depth));
      expect(book.no_bids).toEqual(best(full.no_bids, depth));
      expect(Object.keys(book.yes_bids)).toHaveLength(depth);
    }
  });

  it("gives every level for depth=0, as without it, and for a depth past the book", async () => {
    const path = `/api/v1/orderbook/${market.ticker}`;
    const { full, answer } = await steadily(path, async () => ({
      zero: (await get(`${path}?depth=0`)).json,
      hundred: (await get(`${path}?depth=100`)).json,
    }));
    for (const book of [answer.zero, answer.hundred]) {
      expect(book.yes_bids).toEqual(full.yes_bids);
      expect(book.no_bids).toEqual(full.no_bids);
    }
  });

  it.each(["101", "-1", "abc", "1.5", "", "99999999999999999999"])(
    "refuses depth=%s naming depth",
    async (depth) => {
      const answer = await get(`/api/v1/orderbook/${market.ticker}?depth=${depth}`);
      expect(answer.status).toBe(400);
      expect(answer.json.code).toBe("bad_request");
      expect(answer.json.msg).toContain("depth");
      expect((await get(`/api/v1/orderbook/by-mint/${market.noMint}?depth=${depth}`)).status).toBe(400);
    },
  );

  it("is honoured by the simulator, as Kalshi's depth is: that many levels a side, 0 all of them", async () => {
    const book = async (query: string) =>
      (await get(`${upstream}/markets/${market.ticker}/orderbook${query}`)).json.orderbook_fp;
    const { full, answer } = await (async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const before = await book("");
        const two = await book("?depth=2");
        const zero = await book("?depth=0");
        if (JSON.stringify(before) === JSON.stringify(zero)) return { full: before, answer: two };
      }
      throw new Error("the simulated book never held still");
    })();
    expect(full.yes_dollars.length).toBeGreaterThan(2);
    expect(answer.yes_dollars).toEqual(full.yes_dollars.slice(0, 2));
    expect(answer.no_dollars).toEqual(full.no_dollars.slice(0, 2));
    expect((await get(`${upstream}/markets/${market.ticker}/orderbook?depth=101`)).status).toBe(400);
  });
});

describe("the relay's depth", () => {
  /** An upstream that records what it was asked and answers with a ten-level book, worst level first. */
  function recordingUpstream(asked: string[]): Upstream {
    const levels = Array.from({ length: 10 }, (_, i) => [(0.1 + i * 0.05).toFixed(4), `${10 + i}.00`]);
    return {
      async get(path: string, query?: URLSearchParams): Promise<UpstreamAnswer> {
        asked.push(query?.toString() ? `${path}?${query}` : path);
        const body = { orderbook_fp: { yes_dollars: levels, no_dollars: levels.slice(0, 4) } };
        return { status: 200, contentType: "application/json", body: Buffer.from(JSON.stringify(body)) };
      },
      async close() {},
    };
  }

  it("asks the upstream for the depth and keeps only the best levels of what comes back", async () => {
    const asked: string[] = [];
    const relay = new MarketRelay(recordingUpstream(asked));
    const book = JSON.parse((await relay.orderbook("KXT-1", 3)).toString());
    expect(asked).toEqual(["markets/KXT-1/orderbook?depth=3"]);
    expect(book.yes_bids).toEqual({ "0.5500": 19, "0.5000": 18, "0.4500": 17 });
    expect(Object.keys(book.no_bids)).toEqual(["0.2500", "0.2000", "0.1500"]);
  });

  it("asks for every level without a depth, as the prediction venue does", async () => {
    const asked: string[] = [];
    const relay = new MarketRelay(recordingUpstream(asked));
    const book = await relay.orderbookLevels("KXT-1");
    expect(asked).toEqual(["markets/KXT-1/orderbook"]);
    expect(Object.keys(book.yes_bids)).toHaveLength(10);
  });
});

describe("GET /trades cursor: a trade id to continue after", () => {
  /** The window of the tape holding the market's 40 newest trades. */
  let window: string;
  let all: Trade[];
  beforeAll(async () => {
    const recent: Trade[] = (await get(`/api/v1/trades?ticker=${market.ticker}&limit=40`)).json.trades;
    window = `minTs=${recent[recent.length - 1]!.createdTime}&maxTs=${recent[0]!.createdTime}`;
    all = (await get(`/api/v1/trades?ticker=${market.ticker}&limit=1000&${window}`)).json.trades;
  });

  it("ends each page with the id of its last trade, and continues right after it", async () => {
    expect(all.length).toBeGreaterThan(12);
    expect(all.length).toBeLessThan(1000);
    const walked: Trade[] = [];
    let cursor: string | null = "";
    let continued = 0;
    for (let pages = 0; cursor !== null && pages < 1_000; pages++) {
      const query: string = `ticker=${market.ticker}&limit=7&${window}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page: Json = (await get(`/api/v1/trades?${query}`)).json;
      if (page.cursor !== null) {
        continued += 1;
        expect(page.cursor).toBe(page.trades[page.trades.length - 1].tradeId);
      }
      walked.push(...page.trades);
      cursor = page.cursor;
    }
    // More than 12 trades, 7 a page: at least one page ended with a cursor.
    expect(continued).toBeGreaterThanOrEqual(Math.floor((all.length - 1) / 7));
    expect(walked).toEqual(all);
  });

  it("offers no cursor when the page holds the last trade, even when the page is full", async () => {
    const exact = (await get(`/api/v1/trades?ticker=${market.ticker}&limit=${all.length}&${window}`)).json;
    expect(exact.trades).toEqual(all);
    expect(exact.cursor).toBeNull();
    const oneShort = (await get(`/api/v1/trades?ticker=${market.ticker}&limit=${all.length - 1}&${window}`))
      .json;
    expect(oneShort.cursor).toBe(all[all.length - 2]!.tradeId);
  });

  it("continues after any trade id a client has seen, by ticker and by mint", async () => {
    const seen = all[4]!.tradeId;
    const after = await get(`/api/v1/trades?ticker=${market.ticker}&limit=5&${window}&cursor=${seen}`);
    expect(after.json.trades).toEqual(all.slice(5, 10));
    const byMint = await get(`/api/v1/trades/by-mint/${market.noMint}?limit=5&${window}&cursor=${seen}`);
    expect(byMint.json).toEqual(after.json);
  });

  it("continues on the whole tape from a trade of one market", async () => {
    const seen = all[0]!;
    const tape = await get(`/api/v1/trades?limit=20&cursor=${seen.tradeId}`);
    expect(tape.status).toBe(200);
    for (const trade of tape.json.trades as Trade[])
      expect(trade.createdTime).toBeLessThanOrEqual(seen.createdTime);
    expect(tape.json.trades.some((trade: Trade) => trade.tradeId === seen.tradeId)).toBe(false);
  });

  it("refuses a cursor that is no trade id of the tape, and one over 128 characters", async () => {
    const unknown = await get(
      `/api/v1/trades?ticker=${market.ticker}&cursor=00000000-0000-0000-0000-000000000000`,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.json.code).toBe("upstream_rejected");
    expect(unknown.json.msg).toContain("cursor");
    const long = await get(`/api/v1/trades?cursor=${"a".repeat(129)}`);
    expect(long.status).toBe(400);
    expect(long.json.code).toBe("bad_request");
    expect(long.json.msg).toContain("cursor");
  });
});
