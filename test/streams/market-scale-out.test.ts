/**
 * `/api/v1/ws` on two real instances sharing one PostgreSQL database and one Redis (issue 22, items 1
 * and 3), over one simulator whose clock runs 30 times faster so that its markets trade often: the
 * simulator sees one poll per followed ticker per period however many instances follow it; a trade
 * reaches the clients of both instances once each, with the same sequence number; a silent upstream
 * is reported as stale and then recovered; and when the leading instance closes, the other leads
 * once its lease ends and its clients lose and repeat no trade.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { loadConfig } from "../../src/config.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";
import { postgresAvailable, REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";
import { type Frame, recordingClient, whenTrue } from "./support.js";

const SPEED = 30;

describe.skipIf(!redisAvailable || !postgresAvailable)(
  "/api/v1/ws on two instances, one PostgreSQL, one Redis",
  () => {
    const postgres = BACKENDS.find((backend) => backend.name === "postgres") as Backend;
    const { prefix, cleanup } = redisTestPrefix();
    let simulator: RunningSimulator;
    let first: TestServer;
    let second: RunningServer;
    let tickers: string[];
    const started = Date.now() / 1000;
    const simulatorNow = () => Math.floor(started + (Date.now() / 1000 - started) * SPEED);

    beforeAll(async () => {
      simulator = await startSimulator({
        catalogue: await testCatalogue(),
        port: 0,
        now: simulatorNow,
      });
      first = await startTestServer({
        backend: postgres,
        settings: {
          REDIS_URL: REDIS_TEST_URL,
          REDIS_PREFIX: prefix,
          UPSTREAM_URL: simulator.url,
          UPSTREAM_TIMEOUT_MS: "1000",
        },
      });
      second = await startServer(
        loadConfig({}, { ...first.settings, PORT: "0", SOLANA_RPC_URL: first.server.chain.rpcUrl }),
      );
      tickers = first.server.catalog
        .require()
        .markets.filter((m) => m.record.status === "active")
        .map((m) => m.record.ticker)
        .slice(0, 4);
    }, 180_000);
    afterAll(async () => {
      await second?.close();
      await first?.stop();
      await simulator?.close();
      await cleanup();
    });

    const wsUrl = (base: string) => `${base.replace("http", "ws")}/api/v1/ws`;
    const faults = () => `${new URL(simulator.url).origin}/_sim/faults`;
    const instances = () => [first.server, second];
    const leader = () => instances().find((server) => server.marketStream.isLeader) as RunningServer;

    it("polls the upstream once per followed ticker per period, however many instances follow it", async () => {
      const [t0, t1, t2, t3] = tickers as [string, string, string, string];
      const a = await recordingClient(wsUrl(first.url));
      const b = await recordingClient(wsUrl(second.url));
      try {
        a.send({ type: "subscribe", channel: "orderbook", tickers: [t0, t1, t2] });
        b.send({ type: "subscribe", channel: "orderbook", tickers: [t1, t2, t3] });
        const books = (frames: Frame[]) =>
          new Set(frames.filter((f) => f.type === "orderbook").map((f) => f.market_ticker));
        await a.until((f) => [t0, t1, t2].every((t) => books(f).has(t)), 10_000, "a's books");
        await b.until((f) => [t1, t2, t3].every((t) => books(f).has(t)), 10_000, "b's books");

        await fetch(faults(), { method: "DELETE" });
        for (let i = 0; i < 5; i++) await leader().marketStream.nextPoll();
        const { byPath } = (await (await fetch(faults())).json()) as { byPath: Record<string, number> };
        for (const ticker of [t0, t1, t2, t3]) {
          const polls = byPath[`/trade-api/v2/markets/${ticker}/orderbook`] ?? 0;
          // One poll per period of the leader (t1 and t2 are followed on both): five periods ended, one
          // may have been under way at either end; polling per instance would double them.
          expect(polls).toBeGreaterThanOrEqual(4);
          expect(polls).toBeLessThanOrEqual(7);
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    }, 60_000);

    it("sends each trade once to the clients of both instances, under the same sequence number", async () => {
      const a = await recordingClient(wsUrl(first.url));
      const b = await recordingClient(wsUrl(second.url));
      try {
        for (const client of [a, b]) client.send({ type: "subscribe", channel: "trades", all: true });
        await a.until((f) => f.filter((x) => x.type === "trade").length >= 3, 60_000, "three trades on a");
        await b.until((f) => f.filter((x) => x.type === "trade").length >= 3, 60_000, "three trades on b");
        await leader().marketStream.nextPoll();
        await leader().marketStream.nextPoll();
        const upTo = Math.min(...[a, b].map((c) => Math.max(...c.trades().map((f) => f.seq as number))));
        const seen = (frames: Frame[]) =>
          frames.filter((f) => (f.seq as number) <= upTo).map((f) => `${f.seq}:${f.trade_id}`);
        const onA = seen(a.trades());
        expect(new Set(onA).size).toBe(onA.length);
        expect(new Set(a.trades().map((f) => f.trade_id)).size).toBe(a.trades().length);
        expect(seen(b.trades())).toEqual(onA);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    }, 90_000);

    it("says the upstream is stale while the simulator fails, and recovered after", async () => {
      const a = await recordingClient(wsUrl(first.url));
      const b = await recordingClient(wsUrl(second.url));
      try {
        for (const client of [a, b]) {
          client.send({ type: "subscribe", channel: "orderbook", tickers: [tickers[0]] });
          await client.until((f) => f.some((x) => x.type === "orderbook"), 10_000, "a book");
        }
        await fetch(faults(), {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify([{ kind: "status", status: 503, match: "/markets", times: 1_000_000 }]),
        });
        for (const client of [a, b])
          await client.until((f) => f.some((x) => x.type === "stale"), 15_000, "stale");
        const stale = a.frames.find((f) => f.type === "stale") as Frame;
        expect(stale).toMatchObject({ channel: "orderbook", type: "stale" });
        expect(stale.age_ms as number).toBeGreaterThanOrEqual(5_000);
        await fetch(faults(), { method: "DELETE" });
        // The upstream client's circuit breaker may hold calls back for up to 10 s after the outage.
        for (const client of [a, b])
          await client.until((f) => f.some((x) => x.type === "recovered"), 30_000, "recovered");
      } finally {
        await fetch(faults(), { method: "DELETE" });
        await Promise.all([a.close(), b.close()]);
      }
    }, 90_000);

    it("hands the polling over when the leader closes, and no trade is lost or repeated", async () => {
      const leading = leader();
      const survivor = instances().find((server) => server !== leading) as RunningServer;
      const client = await recordingClient(wsUrl(survivor.url));
      // The simulator's clock runs ahead: earlier tests' trades are dated up to its now, and were sent then.
      const fromSeconds = simulatorNow() + 2;
      client.send({ type: "subscribe", channel: "trades", all: true });
      try {
        await client.until((f) => f.filter((x) => x.type === "trade").length >= 2, 60_000, "trades");
        // The leader's app closes (its stream first, as a shutdown does); the rest of it, which holds the
        // chain the other instance uses, closes after the suite.
        await leading.marketStream.stop();
        await leading.app.close();
        await whenTrue(() => survivor.marketStream.isLeader, 15_000, "the lead");
        const before = client.trades().length;
        await client.until(
          (f) => f.filter((x) => x.type === "trade").length >= before + 3,
          60_000,
          "trades after",
        );
        await survivor.marketStream.nextPoll();

        const received = client.trades().filter((f) => (f.created_time as number) >= fromSeconds * 1000);
        const latest = Math.max(...received.map((f) => f.created_time as number));
        const tape: string[] = [];
        let cursor = "";
        do {
          const query = new URLSearchParams({ min_ts: String(fromSeconds), limit: "1000" });
          if (cursor) query.set("cursor", cursor);
          const page = (await (await fetch(`${simulator.url}/markets/trades?${query}`)).json()) as {
            trades: { trade_id: string; created_time: string }[];
            cursor: string;
          };
          for (const trade of page.trades)
            if (Date.parse(trade.created_time) <= latest) tape.push(trade.trade_id);
          cursor = page.cursor;
        } while (cursor);
        const ids = received.map((f) => f.trade_id as string);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort()).toEqual([...tape].sort());
      } finally {
        await client.close();
      }
    }, 120_000);
  },
);
