/**
 * MARKETS_PORT and TRADE_PORT: each API group on its own listener when set, both on PORT otherwise,
 * with the health check on each and nothing of one group answering on the other's listener.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenerPlan } from "../../src/app/start-server.js";
import { startTestServer, type TestServer } from "../support/server.js";

describe("listenerPlan", () => {
  it("puts both groups on PORT unless a group names its own port", () => {
    expect(listenerPlan({ PORT: 8080 })).toEqual({ marketsPort: 8080, tradePort: 8080, shared: true });
    expect(listenerPlan({ PORT: 8080, TRADE_PORT: 9000 })).toEqual({
      marketsPort: 8080,
      tradePort: 9000,
      shared: false,
    });
    expect(listenerPlan({ PORT: 8080, MARKETS_PORT: 7000 })).toEqual({
      marketsPort: 7000,
      tradePort: 8080,
      shared: false,
    });
    // The same port named twice is one listener; two explicit 0s are two free ports.
    expect(listenerPlan({ PORT: 1, MARKETS_PORT: 9000, TRADE_PORT: 9000 }).shared).toBe(true);
    expect(listenerPlan({ PORT: 0, MARKETS_PORT: 0, TRADE_PORT: 0 }).shared).toBe(false);
    expect(listenerPlan({ PORT: 0 }).shared).toBe(true);
  });
});

/** The status of a GET, its body read to the end. */
async function status(url: string): Promise<number> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.status;
}

describe("separate listeners", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ settings: { MARKETS_PORT: "0", TRADE_PORT: "0" } });
  }, 120_000);
  afterAll(async () => t?.stop());

  it("serves the prediction-market API on one port and the trade API on the other", async () => {
    const markets = t.server.url;
    const trade = t.server.tradeUrl;
    expect(trade).not.toBe(markets);
    expect(await status(`${markets}/api/v1/events?limit=1`)).toBe(200);
    expect(await status(`${trade}/tokens`)).toBe(200);
    // Every body is read: one left unread holds its connection busy, and the server's close waits for it.
    expect(await status(`${trade}/openapi.json`)).toBe(200);
    expect(await status(`${markets}/api/v1/openapi.json`)).toBe(200);
    for (const base of [markets, trade]) {
      const health = await fetch(`${base}/health-check`);
      expect(await health.text()).toBe("ok");
      const metrics = await fetch(`${base}/metrics`);
      expect(await metrics.text()).toContain("oddsgate_http_requests_total");
      expect(await status(`${base}/docs/`)).toBe(200);
    }
  });

  it("answers each group's paths with 404 on the other group's listener", async () => {
    const onMarkets = await fetch(`${t.server.url}/tokens`);
    expect(onMarkets.status).toBe(404);
    expect(await onMarkets.json()).toEqual({ code: "not_found", msg: "no route GET /tokens" });
    const onTrade = await fetch(`${t.server.tradeUrl}/api/v1/events`);
    expect(onTrade.status).toBe(404);
    expect(((await onTrade.json()) as { code: string }).code).toBe("not_found");
    // The sandbox's faucet belongs with trading.
    const faucet = await fetch(`${t.server.url}/dev/faucet`, { method: "POST" });
    expect(faucet.status).toBe(404);
  });

  it("closes both listeners on close", async () => {
    const other = await startTestServer({ settings: { MARKETS_PORT: "0", TRADE_PORT: "0" } });
    const urls = [other.server.url, other.server.tradeUrl];
    await other.stop();
    for (const url of urls) await expect(fetch(`${url}/health-check`)).rejects.toThrow();
  }, 120_000);
});
