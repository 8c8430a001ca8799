/** Paging the demo catalogue end to end, on each storage backend. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SortKey } from "../../src/client/markets.js";
import { BACKENDS } from "../support/backends.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";

describe.each(BACKENDS)("paging the demo catalogue on $name", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    if (backend.available) t = await startTestServer({ backend });
  });
  afterAll(async () => t?.stop());

  it.skipIf(!backend.available).each([
    [undefined, undefined, 100],
    ["volume", "desc", 37],
    ["startDate", "asc", 200],
    ["liquidity", "desc", 1],
  ] as [SortKey | undefined, "asc" | "desc" | undefined, number][])(
    "walks /events with sort=%s order=%s limit=%i and sees every event exactly once",
    async (sort, order, limit) => {
      const expected = (await testCatalogue()).events.map((e) => e.ticker).sort();
      const seen: string[] = [];
      let pages = 0;
      for await (const event of t.client.allEvents({
        limit,
        ...(sort ? { sort } : {}),
        ...(order ? { order } : {}),
      })) {
        seen.push(event.ticker);
        pages++;
      }
      expect(pages).toBe(expected.length);
      expect([...seen].sort()).toEqual(expected);
    },
  );

  it.skipIf(!backend.available)("orders a sorted walk by the key, ties broken by ticker", async () => {
    const events = [];
    for await (const event of t.client.allEvents({ sort: "volume", limit: 200 })) events.push(event);
    expect(events.length).toBeGreaterThan(200);
    let ties = 0;
    for (let i = 1; i < events.length; i++) {
      const [a, b] = [events[i - 1]!, events[i]!];
      expect(a.volume ?? 0).toBeGreaterThanOrEqual(b.volume ?? 0);
      if (a.volume === b.volume) {
        ties += 1;
        expect(a.ticker < b.ticker).toBe(true);
      }
    }
    // The walk met ties, so their order was checked.
    expect(ties).toBeGreaterThan(0);
  });

  it.skipIf(!backend.available)("walks /markets to the end, each market once", async () => {
    const expected = (await testCatalogue()).events.reduce((n, e) => n + e.markets.length, 0);
    const seen = new Set<string>();
    let cursor: number | null = 0;
    while (cursor !== null) {
      const page = await t.client.listMarkets({ limit: 200, cursor, sort: "openInterest" });
      for (const market of page.markets) {
        expect(seen.has(market.ticker)).toBe(false);
        seen.add(market.ticker);
      }
      cursor = page.cursor;
    }
    expect(seen.size).toBe(expected);
  });
});
