/**
 * The relay across Kalshi's historical cutoff: against a simulator whose live window is five days,
 * candlesticks and trades that reach before the cutoff come back exactly as from a simulator that keeps
 * everything live (no gap, no duplicate), and ranges within the live tier are still the upstream's bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogueFile, MarketRecord } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { TEST_ANCHOR } from "../support/server.js";

const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
const NOW = TEST_ANCHOR + 15 * 3_600;
const DAY = 86_400;
const CUTOFF = NOW - 5 * DAY;
const HOUR = 3_600;

// biome-ignore lint/suspicious/noExplicitAny: Kalshi bodies, compared whole
type Json = any;

let tiered: RunningSimulator;
let whole: RunningSimulator;
const clients: UpstreamClient[] = [];
let split: MarketRelay;
let reference: MarketRelay;

beforeAll(async () => {
  tiered = await startSimulator({ catalogue, now: () => NOW, port: 0, historyWindowSeconds: 5 * DAY });
  // A window longer than the catalogue is old: everything stays live.
  whole = await startSimulator({ catalogue, now: () => NOW, port: 0, historyWindowSeconds: 10_000 * DAY });
  const relay = (simulator: RunningSimulator) => {
    const client = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
    clients.push(client);
    return new MarketRelay(client, () => NOW);
  };
  split = relay(tiered);
  reference = relay(whole);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([tiered?.close(), whole?.close()]);
});

const json = (answer: { body: Buffer }): Json => JSON.parse(answer.body.toString("utf8"));
const settledLongAgo = catalogue.events.find(
  (e) =>
    e.seriesTicker === "KXHIGHNY" &&
    e.markets.every((m) => m.status === "finalized" && m.expirationTime < CUTOFF - DAY),
);

describe("candlesticks across the cutoff", () => {
  it("a market settled before the cutoff: its candles from the historical tier, in the live shape", async () => {
    const market = settledLongAgo?.markets[1] as MarketRecord;
    const q = { startTs: market.closeTime - 12 * HOUR, endTs: market.closeTime + HOUR, periodInterval: 60 };
    const live = await fetch(
      `${tiered.url}/series/KXHIGHNY/markets/${market.ticker}/candlesticks?start_ts=${q.startTs}&end_ts=${q.endTs}&period_interval=60`,
    );
    expect(live.status).toBe(404);
    const joined = json(await split.marketCandlesticks("KXHIGHNY", market.ticker, q));
    expect(joined.candlesticks.length).toBeGreaterThan(10);
    expect(joined).toEqual(json(await reference.marketCandlesticks("KXHIGHNY", market.ticker, q)));
  });

  it("an event settled before the cutoff: every market's candles, as if all were live", async () => {
    const event = settledLongAgo as NonNullable<typeof settledLongAgo>;
    const close = event.markets[0]!.closeTime;
    const q = { startTs: close - DAY, endTs: close, periodInterval: 60 };
    const joined = json(await split.eventCandlesticks("KXHIGHNY", event.ticker, q));
    expect(joined.market_tickers).toEqual(event.markets.map((m) => m.ticker));
    expect(joined).toEqual(json(await reference.eventCandlesticks("KXHIGHNY", event.ticker, q)));
  });

  it("a range of the live tier is the upstream's bytes", async () => {
    const event = catalogue.events.find(
      (e) =>
        e.seriesTicker === "KXHIGHNY" && e.markets.every((m) => m.status === "active" && m.closeTime > NOW),
    );
    const market = event?.markets[0] as MarketRecord;
    const query = `start_ts=${NOW - 6 * HOUR}&end_ts=${NOW}&period_interval=60`;
    const direct = Buffer.from(
      await (
        await fetch(`${tiered.url}/series/KXHIGHNY/markets/${market.ticker}/candlesticks?${query}`)
      ).arrayBuffer(),
    );
    const relayed = await split.marketCandlesticks("KXHIGHNY", market.ticker, {
      startTs: NOW - 6 * HOUR,
      endTs: NOW,
      periodInterval: 60,
    });
    expect(relayed.body.equals(direct)).toBe(true);
  });
});

describe("trades across the cutoff", () => {
  /** The busiest market trading since before the cutoff through NOW. */
  const market = catalogue.events
    .flatMap((e) => e.markets)
    .filter((m) => m.status === "active" && m.openTime < CUTOFF - DAY && m.closeTime > NOW)
    .sort((a, b) => Number(b.volume24hFp ?? 0) - Number(a.volume24hFp ?? 0))[0] as MarketRecord;

  /** Every page of a listing, each page's trades and the whole tape read. */
  async function pages(relay: MarketRelay, limit: number, minTs: number, maxTs: number) {
    const read: Json[][] = [];
    let cursor: string | undefined;
    do {
      const page = JSON.parse(
        (await relay.trades({ ticker: market.ticker, limit, cursor, minTs, maxTs })).toString(),
      );
      read.push(page.trades);
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined && read.length < 200);
    return read;
  }

  it("pages on from the live tape into the historical one with nothing missed or repeated", async () => {
    const range = [CUTOFF - 3 * HOUR, CUTOFF + 3 * HOUR] as const;
    const joined = await pages(split, 7, ...range);
    const all = (await pages(reference, 1000, ...range)).flat();
    expect(all.length).toBeGreaterThan(20);
    expect(joined.flat()).toEqual(all);
    // Some page holds trades of both tiers: the join happened within a page, not only between pages.
    expect(
      joined.some(
        (page) => page.some((t) => t.createdTime >= CUTOFF) && page.some((t) => t.createdTime < CUTOFF),
      ),
    ).toBe(true);
  });

  it("a page that fills up at the end of the live tape continues in the historical one", async () => {
    const live = (await pages(reference, 1000, CUTOFF, CUTOFF + 3 * HOUR)).flat();
    const first = JSON.parse(
      (
        await split.trades({
          ticker: market.ticker,
          limit: live.length,
          minTs: CUTOFF - 3 * HOUR,
          maxTs: CUTOFF + 3 * HOUR,
        })
      ).toString(),
    );
    expect(first.trades).toEqual(live);
    expect(first.cursor).toBe("h:");
    const next = JSON.parse(
      (
        await split.trades({
          ticker: market.ticker,
          limit: 1000,
          cursor: first.cursor,
          minTs: CUTOFF - 3 * HOUR,
          maxTs: CUTOFF + 3 * HOUR,
        })
      ).toString(),
    );
    expect(next.trades.length).toBeGreaterThan(0);
    expect(next.trades.every((t: Json) => t.createdTime < CUTOFF)).toBe(true);
    expect(next.cursor).toBeNull();
  });

  it("a listing wholly after the cutoff never asks the historical tape", async () => {
    await fetch(`${tiered.url.replace("/trade-api/v2", "")}/_sim/faults`, { method: "DELETE" });
    await split.trades({ ticker: market.ticker, limit: 5, minTs: CUTOFF + HOUR });
    const stats = (await (
      await fetch(`${tiered.url.replace("/trade-api/v2", "")}/_sim/faults`)
    ).json()) as Json;
    expect(JSON.stringify(stats)).not.toContain("historical/trades");
  });
});

describe("the cutoff unreadable", () => {
  it("fails the call rather than answer the live tier alone, and reads it again on the next", async () => {
    const client = new UpstreamClient({ baseUrl: tiered.url, timeoutMs: 30_000 });
    clients.push(client);
    const fresh = new MarketRelay(client, () => NOW);
    const ticker = settledLongAgo?.markets[0]?.ticker as string;
    tiered.faults.set({ kind: "status", status: 500, match: "historical/cutoff", times: 1 });
    await expect(fresh.trades({ ticker, limit: 5 })).rejects.toMatchObject({ kind: "unavailable" });
    const page = JSON.parse((await fresh.trades({ ticker, limit: 5 })).toString());
    expect(page.trades).toHaveLength(5);
    expect(page.trades.every((t: Json) => t.createdTime < CUTOFF)).toBe(true);
  });
});
