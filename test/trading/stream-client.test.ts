/** The stream clients: reconnecting after the server drops them and subscribing again by themselves. */
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { MarketStreamClient, type QuoteFrame, QuoteStreamClient } from "../../src/client/streams.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

describe("QuoteStreamClient", () => {
  it("resubscribes after a dropped connection and keeps receiving quotes", async () => {
    let hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 100 });
    hub.start();
    const app = Fastify();
    await app.register(websocket);
    app.get("/quote-stream", { websocket: true }, (socket) => hub.accept(socket));
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    const client = QuoteStreamClient.connect(url, { backoffMs: 50 });
    const acks: QuoteFrame["subscribe"][] = [];
    let opens = 0;
    client.onOpen(() => {
      opens += 1;
    });
    client.onMessage((message) => {
      if ("subscribe" in message && message.subscribe) acks.push(message.subscribe);
    });
    const until = (condition: () => boolean) =>
      vi.waitFor(() => expect(condition()).toBe(true), { timeout: 15_000, interval: 20 });
    try {
      await until(() => client.connected);
      client.subscribe(WRAPPED_SOL_MINT, USDC_MINT);
      await until(() => acks.length === 1);
      // The server drops every connection (a restart, say): the client comes back and subscribes again.
      hub.stop();
      hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 100 });
      hub.start();
      await until(() => acks.length === 2);
      expect(opens).toBe(2);
      expect(acks[1]).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT, auto: false }]);
    } finally {
      client.close();
      hub.stop();
      await app.close();
    }
  });
});

describe("MarketStreamClient", () => {
  it("receives an order book snapshot for a subscribed market", async () => {
    const market = (await t.client.listMarkets({ status: "active", limit: 1 })).markets[0];
    const client = MarketStreamClient.connect(t.url, { backoffMs: 50 });
    const books: string[] = [];
    client.onMessage((message) => {
      if (message.type === "orderbook") books.push(message.market_ticker);
    });
    try {
      client.subscribe("orderbook", [market?.ticker as string]);
      await vi.waitFor(() => expect(books[0]).toBe(market?.ticker), { timeout: 15_000, interval: 20 });
    } finally {
      client.close();
    }
  });
});
