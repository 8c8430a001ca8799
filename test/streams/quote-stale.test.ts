/**
 * `/quote-stream` says when the chain stands still (issue 22, item 3): `stale` frames with the age
 * while the slot does not move, `recovered` once it does, heard by `QuoteStreamClient.onStale`.
 */
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChainStaleness, QuoteStreamClient } from "../../src/client/streams.js";
import type { TradingBook } from "../../src/trading/spot/trading-book.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { whenTrue } from "./support.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

describe("/quote-stream and a silent chain", () => {
  it("sends stale frames while the slot stands still, then recovered", async () => {
    const book = t.server.trading.book;
    // The book as the hub sees it, with a clock the test can stop.
    let stopped: TradingBook["clock"] | undefined;
    const view = Object.create(book, { clock: { get: () => stopped ?? book.clock } }) as TradingBook;
    const hub = new QuoteStreamHub(view, { staleMs: 400 });
    hub.start();
    const app = Fastify();
    await app.register(websocket);
    app.get("/quote-stream", { websocket: true }, (socket) => hub.accept(socket));
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const client = QuoteStreamClient.connect(base);
    const heard: ChainStaleness[] = [];
    client.onStale((state) => heard.push(state));
    try {
      await whenTrue(() => client.connected, 5_000, "connected");
      // The chain moves: nothing to say, over more than twice staleMs (nothing to wait on but time).
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(heard).toEqual([]);

      stopped = book.clock;
      await whenTrue(() => heard.filter((h) => h.type === "stale").length >= 2, 5_000, "two stale frames");
      const [first, second] = heard as [ChainStaleness, ChainStaleness];
      expect(first.type === "stale" && first.age_ms).toBeGreaterThanOrEqual(400);
      expect(second.type === "stale" && second.age_ms).toBeGreaterThan(
        first.type === "stale" ? first.age_ms : 0,
      );

      stopped = undefined;
      await whenTrue(() => heard.some((h) => h.type === "recovered"), 5_000, "recovered");
      const recovered = heard.find((h) => h.type === "recovered");
      expect(recovered?.type === "recovered" && recovered.silent_ms).toBeGreaterThanOrEqual(800);
    } finally {
      client.close();
      await hub.stop();
      await app.close();
    }
  });
});
