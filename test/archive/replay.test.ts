/**
 * Record a live window, then replay it ten times faster: a client of the replay that follows what a
 * live client followed receives the same data frames (same messages, same seq; only `ts` differs), the
 * Metadata API lists the markets it listed, and the order book it relays is one the venue recorded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningReplay, startReplay } from "../../src/app/start-replay.js";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { loadConfig } from "../../src/config.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { type Frame, recordingClient } from "../streams/support.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";

const SPEED = 30;
const DATA_FRAMES = ["orderbook", "ticker", "trade"];
const started = Date.now() / 1000;
const simulatorNow = () => Math.floor(started + (Date.now() / 1000 - started) * SPEED);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-replay-test-"));

let simulator: RunningSimulator;
let live: TestServer;
let replay: RunningReplay;
let followed: string[];
let liveFrames: Frame[];
let liveMarkets: string[];
let window: { from: number; to: number };

/** A client's data frames, without the time each was sent. */
const withoutTs = (frames: readonly Frame[]) =>
  frames.filter((frame) => DATA_FRAMES.includes(frame.type)).map(({ ts: _ts, ...frame }) => frame);

function subscribe(client: Awaited<ReturnType<typeof recordingClient>>): void {
  client.send({ type: "subscribe", channel: "trades", all: true });
  client.send({ type: "subscribe", channel: "orderbook", tickers: followed });
  client.send({ type: "subscribe", channel: "prices", tickers: followed });
}

beforeAll(async () => {
  simulator = await startSimulator({ catalogue: await testCatalogue(), port: 0, now: simulatorNow });
  live = await startTestServer({
    settings: {
      UPSTREAM_URL: simulator.url,
      ARCHIVE: "true",
      ARCHIVE_DIR: dir,
      ARCHIVE_FLUSH_SECONDS: "3600",
    },
  });
  followed = live.server.catalog
    .require()
    .markets.filter((m) => m.record.status === "active")
    .slice(0, 3)
    .map((m) => m.record.ticker);
  // Once the venue has recorded its catalogue, which a replay starts from.
  await live.server.archive?.flush();
  const from = Date.now();
  const client = await recordingClient(`${live.url.replace("http", "ws")}/api/v1/ws`);
  subscribe(client);
  await client.until((frames) => frames.filter((f) => f.type === "trade").length >= 5, 30_000, "five trades");
  client.close();
  liveFrames = [...client.frames];
  // The window ends where the live client stopped listening: later frames were recorded, not received.
  const to = Date.now() + 1;
  const listed = (await (await fetch(`${live.url}/api/v1/markets?limit=200`)).json()) as {
    markets: { ticker: string }[];
  };
  liveMarkets = listed.markets.map((market) => market.ticker);
  await live.server.archive?.flush();
  window = { from, to };
  await live.stop();

  replay = await startReplay(
    loadConfig({}, { PORT: "0", RPC_PORT: "0", ARCHIVE_DIR: dir, LOG_LEVEL: "silent" }),
    { ...window, speed: 10 },
    { paused: true },
  );
}, 180_000);

afterAll(async () => {
  await replay?.close();
  await live?.stop();
  await simulator?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a replay of a recorded window at 10x", () => {
  it("sends a client the data frames a live client received: same messages, same seq", async () => {
    const client = await recordingClient(`${replay.server.url.replace("http", "ws")}/api/v1/ws`);
    try {
      subscribe(client);
      await client.until(
        (frames) => frames.filter((f) => f.type === "subscribed").length === 3,
        10_000,
        "three subscriptions",
      );
      replay.start();
      await replay.finished;
      const expected = withoutTs(liveFrames);
      expect(expected.length).toBeGreaterThanOrEqual(8);
      await client.until(
        (frames) => withoutTs(frames).length >= expected.length,
        10_000,
        "every recorded frame",
      );
      // Each channel's frames in its own order (across channels, frames of one millisecond have none).
      for (const channel of ["prices", "orderbook", "trades"]) {
        const ofChannel = (frames: ReturnType<typeof withoutTs>) =>
          frames.filter((f) => f.channel === channel);
        const expectedOfChannel = ofChannel(expected);
        // A frame published in the millisecond the live client stopped is in the window, not in what it received.
        const lastSeq = Math.max(0, ...expectedOfChannel.map((f) => Number(f.seq)));
        const replayed = ofChannel(withoutTs(client.frames)).filter((f) => Number(f.seq) <= lastSeq);
        expect(replayed, channel).toEqual(expectedOfChannel);
      }
    } finally {
      client.close();
    }
  });

  it("lists the markets the live venue listed, and relays a book the venue recorded", async () => {
    const listed = (await (await fetch(`${replay.server.url}/api/v1/markets?limit=200`)).json()) as {
      markets: { ticker: string }[];
    };
    expect(listed.markets.map((market) => market.ticker)).toEqual(liveMarkets);

    const ticker = followed[0] as string;
    const response = await fetch(`${replay.server.url}/api/v1/orderbook/${ticker}`);
    const book = (await response.json()) as { yes_bids: object; no_bids: object };
    expect(response.status, JSON.stringify(book)).toBe(200);
    const reader = await ArchiveReader.open(dir);
    try {
      const recorded = (await reader.rows("orderbooks", { equals: { ticker } })).map((row) => ({
        yes_bids: JSON.parse(row.yes_bids),
        no_bids: JSON.parse(row.no_bids),
      }));
      expect(recorded).toContainEqual({ yes_bids: book.yes_bids, no_bids: book.no_bids });
    } finally {
      reader.close();
    }
  });
});
