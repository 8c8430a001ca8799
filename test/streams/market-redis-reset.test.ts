/**
 * `/api/v1/ws` when Redis loses the deployment's logs (it restarts empty, or its keys go): the
 * numbering starts again under a new epoch, above every earlier position, and every instance tells its
 * subscribers with a `gap` frame and then streams the new log, never silence; a trade is never sent
 * twice; a position from before the reset gets a gap, one from after it what was missed. Once with the
 * test's keys deleted from the shared Redis while the upstream trades, once with a Redis server of the
 * test's own stopped and started again empty.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisMarketFeed } from "../../src/markets/redis-market-feed.js";
import { freePortRun } from "../support/ports.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";
import { type Frame, hubInstance, recordingClient, ScriptedTape, whenTrue } from "./support.js";

let t: TestServer;
let ticker: string;
beforeAll(async () => {
  t = await startTestServer();
  ticker = t.server.catalog.require().markets.find((m) => m.record.status === "active")?.record
    .ticker as string;
}, 120_000);
afterAll(async () => t?.stop());

const tradeIds = (frames: Frame[]) => frames.filter((f) => f.type === "trade").map((f) => f.trade_id);
const lastSeq = (frames: Frame[]) =>
  Math.max(0, ...frames.filter((f) => typeof f.seq === "number").map((f) => f.seq as number));

/** Deletes every key under `prefix` at once, as a Redis that comes back empty has none. */
async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    await redis.eval(
      "for _, key in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', key) end",
      0,
      `${prefix}*`,
    );
  } finally {
    await redis.quit();
  }
}

/** A client of `url` subscribed to every trade, that notes how many trades the tape held when each gap arrived. */
async function tradesClient(url: string, tape: ScriptedTape) {
  const client = await recordingClient(url);
  const writtenAtGaps: number[] = [];
  client.socket.on("message", (data) => {
    if ((JSON.parse(data.toString()) as Frame).type === "gap") writtenAtGaps.push(tape.ids().length);
  });
  client.send({ type: "subscribe", channel: "trades", all: true });
  await client.until((f) => f.some((frame) => frame.type === "subscribed"));
  return { ...client, writtenAtGaps };
}

/**
 * What a client of the trade channel got across a reset that happened after its first `before`
 * frames: a gap after the reset, positions that only grow, each trade once, the trades before the first
 * gap from the start of the tape on, and after the last gap every trade written since it arrived.
 */
function expectWholeAcrossReset(
  client: { frames: Frame[]; writtenAtGaps: number[] },
  before: number,
  written: readonly string[],
) {
  const frames = client.frames;
  const firstGap = frames.findIndex((f, i) => i >= before && f.type === "gap");
  expect(firstGap).toBeGreaterThanOrEqual(0);
  expect(frames[firstGap]?.channel).toBe("trades");
  // The new log's positions lie above the old one's.
  expect(frames[firstGap]?.seq as number).toBeGreaterThan(lastSeq(frames.slice(0, before)));
  const numbered = frames.filter((f) => f.type === "trade" || f.type === "gap").map((f) => f.seq as number);
  for (let i = 1; i < numbered.length; i++)
    expect(numbered[i] as number).toBeGreaterThanOrEqual(numbered[i - 1] as number);
  const ids = tradeIds(frames);
  expect(new Set(ids).size).toBe(ids.length);
  const untilGap = tradeIds(frames.slice(0, firstGap));
  // Trades on the tape before the leader first read it are its starting point, not news (a busy
  // machine may write one before that read): from the first one sent on, none is missing.
  const start = Math.max(0, written.indexOf(untilGap[0] ?? ""));
  expect(start).toBeLessThanOrEqual(2);
  expect(untilGap).toEqual(written.slice(start, start + untilGap.length));
  const lastGap = frames.findLastIndex((f) => f.type === "gap");
  const afterGap = tradeIds(frames.slice(lastGap + 1));
  const writtenAtLastGap = client.writtenAtGaps.at(-1) as number;
  expect(afterGap.length).toBeGreaterThan(0);
  const from = written.indexOf(afterGap[0] as string);
  expect(from).toBeLessThanOrEqual(writtenAtLastGap);
  expect(afterGap).toEqual(written.slice(from));
}

describe.skipIf(!redisAvailable)("/api/v1/ws when Redis loses its logs", () => {
  it("gives every subscriber a gap then the new log, and a position from before the reset a gap", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const tape = new ScriptedTape(ticker);
    const feed = () => RedisMarketFeed.connect({ url: REDIS_TEST_URL, prefix, tickMs: 100, leaseMs: 600 });
    const first = await hubInstance(t.server.catalog, tape, await feed());
    const second = await hubInstance(t.server.catalog, tape, await feed());
    let writer: NodeJS.Timeout | undefined;
    try {
      const [leader, follower] = first.hub.isLeader ? [first, second] : [second, first];
      const onFollower = await tradesClient(follower.url, tape);
      const onLeader = await tradesClient(leader.url, tape);
      const prices = await recordingClient(follower.url);
      prices.send({ type: "subscribe", channel: "prices", tickers: [ticker] });
      await prices.until((f) => f.some((frame) => frame.type === "ticker"), 10_000, "a price");

      writer = setInterval(() => tape.add(), 20);
      await onFollower.until((f) => tradeIds(f).length >= 10, 10_000, "ten trades");
      const before = { follower: onFollower.frames.length, leader: onLeader.frames.length };
      const pricesBefore = prices.frames.length;
      const seenBefore = lastSeq(onFollower.frames);

      // Redis comes back empty while the upstream keeps trading.
      await deleteKeys(REDIS_TEST_URL, prefix);
      const gapAfter = (from: number) => (f: Frame[]) => f.slice(from).some((frame) => frame.type === "gap");
      await onFollower.until(gapAfter(before.follower), 5_000, "a gap on the follower");
      await onLeader.until(gapAfter(before.leader), 5_000, "a gap on the leader");
      // Prices: a gap, then the value again, numbered in the new log.
      await prices.until(
        (f) => {
          const gap = f.findIndex((frame, i) => i >= pricesBefore && frame.type === "gap");
          return gap >= 0 && f.slice(gap).some((frame) => frame.type === "ticker");
        },
        5_000,
        "a gap then a price",
      );
      const priceGap = prices.frames.find((f, i) => i >= pricesBefore && f.type === "gap") as Frame;
      expect(priceGap).toMatchObject({ channel: "prices", type: "gap" });
      expect(priceGap.seq as number).toBeGreaterThan(lastSeq(prices.frames.slice(0, pricesBefore)));

      // Trades go on after the gap.
      const atGap = tape.ids().length;
      await onFollower.until((f) => tradeIds(f).length >= atGap + 10, 10_000, "trades after the gap");
      clearInterval(writer);
      const last = tape.add();
      for (const client of [onFollower, onLeader])
        await client.until((f) => tradeIds(f).includes(last), 5_000, "the last trade");

      const written = tape.ids();
      expectWholeAcrossReset(onFollower, before.follower, written);
      expectWholeAcrossReset(onLeader, before.leader, written);
      // Both instances number the new log alike.
      const seqOf = (frames: Frame[]) =>
        new Map(frames.filter((f) => f.type === "trade").map((f) => [f.trade_id, f.seq]));
      const onA = seqOf(onFollower.frames);
      for (const [id, seq] of seqOf(onLeader.frames)) if (onA.has(id)) expect(onA.get(id)).toBe(seq);

      // A position from before the reset: a gap, nothing replayed.
      const late = await recordingClient(follower.url);
      late.send({ type: "subscribe", channel: "trades", all: true, since: seenBefore });
      await late.until((f) => f.some((frame) => frame.type === "subscribed"));
      expect(late.frames.map((f) => f.type)).toEqual(["gap", "subscribed"]);
      expect(late.frames[0]?.seq as number).toBeGreaterThan(seenBefore);

      // A position in the new log: exactly what came after it.
      const trades = onFollower.trades();
      const from = trades[trades.length - 5] as Frame;
      const resumed = await recordingClient(leader.url);
      resumed.send({ type: "subscribe", channel: "trades", all: true, since: from.seq });
      await resumed.until((f) => f.some((frame) => frame.type === "subscribed"));
      expect(tradeIds(resumed.frames)).toEqual(trades.slice(-4).map((f) => f.trade_id));
      expect(resumed.frames.some((f) => f.type === "gap")).toBe(false);
      await Promise.all([onFollower, onLeader, prices, late, resumed].map((c) => c.close()));
    } finally {
      clearInterval(writer);
      await first.stop();
      await second.stop();
      await cleanup();
    }
  }, 60_000);

  it("gives a gap then the new trades when the Redis server restarts empty", async () => {
    const server = await startRedisServer();
    const tape = new ScriptedTape(ticker);
    const feed = () =>
      RedisMarketFeed.connect({ url: server.url, prefix: "reset-test:", tickMs: 100, leaseMs: 600 });
    const first = await hubInstance(t.server.catalog, tape, await feed());
    const second = await hubInstance(t.server.catalog, tape, await feed());
    let writer: NodeJS.Timeout | undefined;
    try {
      const follower = first.hub.isLeader ? second : first;
      const client = await tradesClient(follower.url, tape);
      writer = setInterval(() => tape.add(), 20);
      await client.until((f) => tradeIds(f).length >= 10, 10_000, "ten trades");
      const before = client.frames.length;

      await server.restart();
      await client.until(
        (f) => f.slice(before).some((frame) => frame.type === "gap"),
        15_000,
        "a gap after the restart",
      );
      const atGap = tape.ids().length;
      await client.until((f) => tradeIds(f).length >= atGap + 10, 10_000, "trades after the gap");
      clearInterval(writer);
      const last = tape.add();
      await client.until((f) => tradeIds(f).includes(last), 5_000, "the last trade");
      await whenTrue(() => first.hub.isLeader || second.hub.isLeader, 15_000, "a leader");
      expectWholeAcrossReset(client, before, tape.ids());
      await client.close();
    } finally {
      clearInterval(writer);
      await first.stop();
      await second.stop();
      await server.stop();
    }
  }, 60_000);
});

/** A redis-server of the test's own, without persistence, on a free port; `restart` brings it back empty. */
async function startRedisServer() {
  const port = await freePortRun(1);
  let child: ChildProcess | undefined;
  const launch = async () => {
    const started = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    child = started;
    let output = "";
    await new Promise<void>((resolve, reject) => {
      started.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
      started.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      });
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, "exit");
    running.kill("SIGKILL");
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await stop();
      await launch();
    },
    stop,
  };
}
