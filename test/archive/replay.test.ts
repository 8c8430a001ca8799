/**
 * Record a live window, then replay it ten times faster: a client of the replay that follows what a
 * live client followed receives the same data frames (same messages, same seq; only `ts` differs), the
 * Metadata API lists the markets it listed, the order book it relays is one the venue recorded, and a
 * buy on the sandbox fills against that book the same way on every replay of the window.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningReplay, startReplay } from "../../src/app/start-replay.js";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { type Frame, recordingClient } from "../streams/support.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
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

  replay = await startReplay(replayConfig(), { ...window, speed: 10 }, { paused: true });
}, 180_000);

function replayConfig() {
  return loadConfig({}, { PORT: "0", RPC_PORT: "0", ARCHIVE_DIR: dir, LOG_LEVEL: "silent" });
}

/** The last book of `ticker` the live venue recorded in the window. */
async function lastRecordedBook(
  ticker: string,
): Promise<{ yes_bids: Record<string, number>; no_bids: Record<string, number> }> {
  const reader = await ArchiveReader.open(dir);
  try {
    const [row] = await reader.rows("orderbooks", {
      to: window.to,
      equals: { ticker },
      orderBy: "ts",
      descending: true,
      limit: 1,
    });
    if (!row) throw new Error(`no book of ${ticker} was recorded`);
    return { yes_bids: JSON.parse(row.yes_bids), no_bids: JSON.parse(row.no_bids) };
  } finally {
    reader.close();
  }
}

/**
 * The whole yes contracts `budget` micro-USDC buys walking up a book's yes asks: each no bid at p is a
 * yes ask at 1 − p, cheapest first.
 */
function yesContractsFor(budget: bigint, noBids: Record<string, number>): bigint {
  const asks = Object.entries(noBids)
    .map(
      ([price, count]) =>
        [1_000_000n - BigInt(Math.round(Number(price) * 1_000_000)), BigInt(count)] as const,
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let left = budget;
  let contracts = 0n;
  for (const [price, available] of asks) {
    const taken = left / price < available ? left / price : available;
    contracts += taken;
    left -= taken * price;
    if (taken < available) break;
  }
  return contracts;
}

/** The yes mint of `ticker`'s USDC rail on `on`, if the market is tokenized there. */
async function yesMintOf(on: RunningReplay, ticker: string): Promise<string | undefined> {
  const market = (await (await fetch(`${on.server.url}/api/v1/market/${ticker}`)).json()) as {
    accounts?: Record<string, { yesMint?: string }>;
  };
  return market.accounts?.[USDC_MINT]?.yesMint;
}

/** Buys `ticker`'s yes token for 5 USDC on `on`'s sandbox, as a new wallet, and follows the order to its end. */
async function buyYes(on: RunningReplay, ticker: string): Promise<OrderStatusResponse> {
  const yesMint = await yesMintOf(on, ticker);
  if (!yesMint) throw new Error(`${ticker} has no yes mint on the USDC rail`);
  const chain = new RpcChain({ url: on.server.chain.rpcUrl });
  const wallet = await newFundedWallet(on.server.url, chain, 2_000_000_000n, [[USDC_MINT, 100_000_000n]]);
  const query = new URLSearchParams({
    inputMint: USDC_MINT,
    outputMint: yesMint,
    amount: "5000000",
    userPublicKey: wallet.address,
  });
  const response = await fetch(`${on.server.url}/order?${query}`);
  const order = (await response.json()) as { transaction: string; outAmount: string };
  expect(response.status, JSON.stringify(order)).toBe(200);
  const signature = await signAndSendWithKit(on.server.chain.rpcUrl, chain, wallet, order.transaction);
  const settled = await settledOrder(on.server.url, signature);
  expect(settled.status, JSON.stringify(settled)).toBe("closed");
  expect(settled.outAmount).toBe(order.outAmount);
  return settled;
}

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

  it("fills a buy on the sandbox against the recorded book, the same way on a second replay", async () => {
    await replay.finished;
    let ticker: string | undefined;
    for (const candidate of followed) if (!ticker && (await yesMintOf(replay, candidate))) ticker = candidate;
    if (!ticker) throw new Error("none of the followed markets is tokenized");
    const book = await lastRecordedBook(ticker);
    // Once the window has played, the replay relays the last book recorded in it.
    const relayed = (await (await fetch(`${replay.server.url}/api/v1/orderbook/${ticker}`)).json()) as object;
    expect(relayed).toMatchObject(book);

    const first = await buyYes(replay, ticker);
    const again = await startReplay(replayConfig(), { ...window, speed: 1_000 });
    try {
      await again.finished;
      const second = await buyYes(again, ticker);
      const amounts = (status: OrderStatusResponse) => ({
        inAmount: status.inAmount,
        outAmount: status.outAmount,
        fills: status.fills?.map(({ inAmount, outAmount }) => ({ inAmount, outAmount })),
      });
      expect(amounts(second)).toEqual(amounts(first));
      expect(BigInt(first.outAmount)).toBe(yesContractsFor(5_000_000n, book.no_bids) * 1_000_000n);
    } finally {
      await again.close();
    }
  }, 120_000);
});
