/**
 * The quote stream across instances sharing Redis: one instance quotes every followed pair once per
 * slot and publishes; clients of both instances get frames; when the leader stops, the other takes over.
 */
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";
import { type PairQuotes, SharedQuotes } from "../../src/trading/streams/shared-quotes.js";
import { waitUntil } from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";

let t: TestServer;
beforeAll(async () => {
  if (redisAvailable) t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

/**
 * A slot long enough that the leader's lease (three slots) outlasts the event-loop stalls of a loaded
 * CI machine: a lapsed lease hands the lead over, as it should, and the follower would then compute.
 */
const SLOT_MS = 400;

/** One instance's stream: a hub sharing quotes through Redis, behind its own listener. */
async function instance(prefix: string, canLead?: () => boolean) {
  const hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 100 });
  let computed = 0;
  hub.share(
    await SharedQuotes.connect({
      url: REDIS_TEST_URL,
      prefix,
      slotMs: SLOT_MS,
      compute: (pairs) => {
        computed += 1;
        return hub.computeQuotes(pairs);
      },
      ...(canLead ? { canLead } : {}),
    }),
  );
  hub.start();
  const app = Fastify();
  await app.register(websocket);
  app.get("/quote-stream", { websocket: true }, (socket) => hub.accept(socket));
  const url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}/quote-stream`;
  const client = new WebSocket(url);
  const quotes: string[] = [];
  client.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as { updates?: { sb: string; b?: string }[] };
    for (const update of frame.updates ?? []) if (update.b) quotes.push(update.b);
  });
  await new Promise((resolve) => client.once("open", resolve));
  client.send(JSON.stringify({ op: "subscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT }));
  return {
    hub,
    quotes,
    computed: () => computed,
    async stop() {
      client.close();
      hub.stop();
      await app.close();
    },
  };
}

describe.skipIf(!redisAvailable)("the quote stream over Redis", () => {
  it("quotes once for all instances, delivers on each, and hands over when the leader stops", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const first = await instance(prefix);
    const second = await instance(prefix);
    try {
      await vi.waitFor(
        () => {
          expect(first.quotes.length).toBeGreaterThan(0);
          expect(second.quotes.length).toBeGreaterThan(0);
          expect(first.computed() + second.computed()).toBeGreaterThan(3);
        },
        { timeout: 15_000, interval: 20 },
      );
      // Exactly one of them computed the published quotes.
      const [leader, follower] = first.computed() > 0 ? [first, second] : [second, first];
      expect(leader.computed()).toBeGreaterThan(3);
      expect(follower.computed()).toBe(0);

      await leader.stop();
      const before = follower.computed();
      await vi.waitFor(() => expect(follower.computed()).toBeGreaterThan(before), {
        timeout: 15_000,
        interval: 20,
      });
    } finally {
      await first.stop().catch(() => {});
      await second.stop().catch(() => {});
      await cleanup();
    }
  });

  it("leaves the lead at once when its chain is fenced, and another instance quotes for all", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    let fenced = false;
    const first = await instance(prefix, () => !fenced);
    await waitUntil(() => first.computed() > 0);
    const second = await instance(prefix);
    try {
      fenced = true;
      // Without giving the lead up, it would hold it (its key renewed each slot) and publish nothing.
      await waitUntil(() => second.computed() > 0, 3_000);
      const stopped = first.computed();
      const taken = second.computed();
      await waitUntil(() => second.computed() > taken + 3);
      expect(first.computed()).toBe(stopped);
      expect(second.quotes.length).toBeGreaterThan(0);
    } finally {
      await first.stop();
      await second.stop();
      await cleanup();
    }
  });

  it("continues the positions when the lead passes to an instance that heard nothing: an unchanged value keeps its own", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const quotes = new Map([
      ["a|b", '{"p":1}'],
      ["c|d", '{"p":2}'],
    ]);
    const options = {
      url: REDIS_TEST_URL,
      prefix,
      slotMs: 20,
      compute: (pairs: readonly string[]): PairQuotes =>
        new Map(pairs.map((pair): [string, string] => [pair, quotes.get(pair) ?? "{}"])),
    };
    const first = await SharedQuotes.connect(options);
    let next: SharedQuotes | undefined;
    try {
      first.follow(quotes.keys());
      await waitUntil(() => first.publication?.values.size === 2);
      const published = first.publication;
      // Every instance stops (a redeploy); the one that starts afterwards has heard no publication.
      await first.close();
      quotes.set("c|d", '{"p":3}');
      next = await SharedQuotes.connect(options);
      next.follow(quotes.keys());
      await waitUntil(() => next?.publication?.values.get("c|d")?.json === '{"p":3}');
      expect(next.isLeader).toBe(true);
      const continued = next.publication;
      expect(continued?.seq).toBeGreaterThan(published?.seq ?? Number.POSITIVE_INFINITY);
      expect(continued?.values.get("a|b")).toEqual(published?.values.get("a|b"));
      expect(continued?.values.get("c|d")?.changedAt).toBe(continued?.seq);
      // A client at the old position is known here and needs only c|d.
      expect(next.positions.knows(published?.seq ?? 0)).toBe(true);
    } finally {
      await first.close().catch(() => {});
      await next?.close();
      await cleanup();
    }
  });
});
