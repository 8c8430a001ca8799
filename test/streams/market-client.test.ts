/**
 * The `/api/v1/ws` client (`MarketStreamClient`) uses what the stream offers: after a dropped
 * connection it subscribes again from the last position it saw and so gets every trade once, and it
 * reports the server's `stale` and `recovered` frames.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type MarketStaleness,
  MarketStreamClient,
  type MarketStreamMessage,
} from "../../src/client/streams.js";
import { MemoryMarketFeed } from "../../src/markets/market-feed.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { hubInstance, recordingClient, ScriptedTape, whenTrue } from "./support.js";

let t: TestServer;
let ticker: string;
beforeAll(async () => {
  t = await startTestServer();
  ticker = t.server.catalog.require().markets.find((m) => m.record.status === "active")?.record
    .ticker as string;
}, 120_000);
afterAll(async () => t?.stop());

describe("MarketStreamClient", () => {
  it("resumes from its last position after a drop: every trade once, none lost", async () => {
    const tape = new ScriptedTape(ticker);
    const instance = await hubInstance(t.server.catalog, tape, new MemoryMarketFeed(), { staleMs: 300 });
    const keeper = await recordingClient(instance.url);
    const client = new MarketStreamClient({ url: instance.url, backoffMs: 400 });
    try {
      keeper.send({ type: "subscribe", channel: "trades", all: true });
      await keeper.until((f) => f.some((x) => x.type === "subscribed"));
      const received: MarketStreamMessage[] = [];
      const gaps: number[] = [];
      const staleness: MarketStaleness[] = [];
      client.onMessage((message) => received.push(message));
      client.onGap((_channel, seq) => gaps.push(seq));
      client.onStale((state) => staleness.push(state));
      client.subscribe("trades", "all");
      const trades = () =>
        received.filter((m) => m.type === "trade").map((m) => (m as { trade_id: string }).trade_id);
      await whenTrue(() => client.position("trades") !== undefined, 5_000, "subscribed");
      const before = [tape.add(), tape.add()];
      await whenTrue(() => trades().length === 2, 5_000, "two trades");

      // Cut off; trades happen while it is away (the other client sees them published).
      instance.dropNewest();
      await whenTrue(() => !client.connected, 15_000, "the drop");
      const during = [tape.add(), tape.add(), tape.add()];
      await keeper.until((f) => f.filter((x) => x.type === "trade").length === 5);
      await whenTrue(() => trades().length === 5, 5_000, "the missed trades");
      const after = tape.add();
      await whenTrue(() => trades().includes(after), 5_000, "a live trade");
      expect(trades()).toEqual([...before, ...during, after]);
      expect(gaps).toEqual([]);

      tape.silent = true;
      await whenTrue(() => staleness.some((s) => s.stale), 5_000, "stale");
      tape.silent = false;
      await whenTrue(() => staleness.some((s) => !s.stale), 5_000, "recovered");
      const stale = staleness.find((s) => s.stale);
      expect(stale).toMatchObject({ channel: "trades", stale: true });
      expect(stale?.stale && stale.ageMs).toBeGreaterThanOrEqual(300);
    } finally {
      client.close();
      await keeper.close();
      await instance.stop();
    }
  });
});
