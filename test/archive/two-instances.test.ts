/**
 * Two instances sharing PostgreSQL, Redis and one archive directory archive each observation once:
 * clients of both follow the same markets, both read the same forecast, and after both have flushed
 * the archive holds every frame either client received once, each trade of the tape once and each
 * forecast point once: only the leader (the instance polling the upstream) writes what it observes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { loadConfig } from "../../src/config.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { type Frame, recordingClient } from "../streams/support.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";
import { postgresAvailable, REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";
import { readForecast } from "./support.js";

const SPEED = 30;
const DATA_FRAMES = ["orderbook", "ticker", "trade"];

describe.skipIf(!redisAvailable || !postgresAvailable)("the archive of two instances", () => {
  const postgres = BACKENDS.find((backend) => backend.name === "postgres") as Backend;
  const { prefix, cleanup } = redisTestPrefix();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-archive-two-"));
  let simulator: RunningSimulator;
  let first: TestServer;
  let second: RunningServer;
  const started = Date.now() / 1000;
  const simulatorNow = () => Math.floor(started + (Date.now() / 1000 - started) * SPEED);

  beforeAll(async () => {
    simulator = await startSimulator({ catalogue: await testCatalogue(), port: 0, now: simulatorNow });
    first = await startTestServer({
      backend: postgres,
      settings: {
        REDIS_URL: REDIS_TEST_URL,
        REDIS_PREFIX: prefix,
        UPSTREAM_URL: simulator.url,
        ARCHIVE: "true",
        ARCHIVE_DIR: dir,
        ARCHIVE_FLUSH_SECONDS: "3600",
      },
    });
    second = await startServer(
      loadConfig({}, { ...first.settings, PORT: "0", SOLANA_RPC_URL: first.server.chain.rpcUrl }),
    );
  }, 180_000);

  afterAll(async () => {
    await second?.close();
    await first?.stop();
    await simulator?.close();
    await cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("writes every frame, trade and forecast point once, whichever instance served it", async () => {
    const tickers = first.server.catalog
      .require()
      .markets.filter((m) => m.record.status === "active")
      .map((m) => m.record.ticker)
      .slice(0, 3);
    const wsUrl = (base: string) => `${base.replace("http", "ws")}/api/v1/ws`;
    const clients = [await recordingClient(wsUrl(first.url)), await recordingClient(wsUrl(second.url))];
    const trades = (frames: Frame[]) => frames.filter((f) => f.type === "trade").length;
    try {
      for (const client of clients) {
        client.send({ type: "subscribe", channel: "trades", all: true });
        client.send({ type: "subscribe", channel: "orderbook", tickers });
      }
      for (const client of clients)
        await client.until((frames) => trades(frames) >= 3, 30_000, "three trades");
      const forecasts = await Promise.all([first.url, second.url].map(readForecast));
      expect(forecasts[0]).toBeGreaterThan(0);
      expect(forecasts[1]).toBe(forecasts[0]);

      // What the clients received before the flush: frames published after it are in the next one.
      const received = clients.map((client) => client.frames.filter((f) => DATA_FRAMES.includes(f.type)));
      await Promise.all([first.server.archive?.flush(), second.archive?.flush()]);
      const reader = await ArchiveReader.open(dir);
      try {
        const frames = await reader.rows("frames", {});
        const keys = new Set(frames.map((row) => `${row.channel}|${row.seq}`));
        expect(keys.size).toBe(frames.length);
        for (const frames of received) {
          expect(frames.length).toBeGreaterThan(0);
          for (const frame of frames) {
            expect(keys.has(`${frame.channel}|${frame.seq}`), JSON.stringify(frame)).toBe(true);
          }
        }
        const tape = await reader.rows("trades", {});
        expect(new Set(tape.map((row) => row.trade_id)).size).toBe(tape.length);
        expect(await reader.rows("forecasts", {})).toHaveLength(forecasts[0] as number);
      } finally {
        reader.close();
      }
    } finally {
      for (const client of clients) client.close();
    }
  });
});
