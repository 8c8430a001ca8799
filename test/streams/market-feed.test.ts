/**
 * `/api/v1/ws` streams a client can trust (issue 22, items 1 and 3), against hubs over a scripted
 * upstream tape: sequence numbers and server time on every data frame; a client that reconnects with
 * the last sequence it saw gets what it missed, or a `gap` frame, never silence; `stale` frames while
 * the upstream is silent and `recovered` after; and across two instances on one Redis, one poller,
 * every trade once on both, and a leader handover once the lease ends that loses and repeats no trade.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MarketChannel, MemoryMarketFeed, type Publication } from "../../src/markets/market-feed.js";
import { RedisMarketFeed } from "../../src/markets/redis-market-feed.js";
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

/** A feed whose later subscription answers (their tape start) wait until the next trades are published. */
class SlowAnswers extends MemoryMarketFeed {
  private waiting: (() => void)[] = [];

  override async startTrades(seconds: number): Promise<void> {
    // Only once the tape runs: its first start is what makes trades be published at all.
    if ((await this.tradesCursor()) !== undefined)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    await super.startTrades(seconds);
  }

  override async publish(channel: MarketChannel, items: readonly Publication[]): Promise<void> {
    await super.publish(channel, items);
    if (channel !== "trades" || items.length === 0) return;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

const tradeIds = (frames: Frame[]) => frames.filter((f) => f.type === "trade").map((f) => f.trade_id);
const lastSeq = (frames: Frame[]) =>
  Math.max(0, ...frames.filter((f) => typeof f.seq === "number").map((f) => f.seq as number));

describe("one instance", () => {
  it("numbers every data frame, and a client that comes back with its last seq gets exactly what it missed", async () => {
    const tape = new ScriptedTape(ticker);
    const instance = await hubInstance(t.server.catalog, tape, new MemoryMarketFeed());
    try {
      // Another client keeps the tape read while the first is away.
      const keeper = await recordingClient(instance.url);
      keeper.send({ type: "subscribe", channel: "trades", all: true });
      await keeper.until((f) => f.some((frame) => frame.type === "subscribed"));
      const first = await recordingClient(instance.url);
      first.send({ type: "subscribe", channel: "trades", all: true });
      await first.until((f) => f.some((frame) => frame.type === "subscribed"));
      const before = [tape.add(), tape.add()];
      await first.until((f) => tradeIds(f).length === 2);
      const trades = first.trades();
      expect(trades.map((f) => f.trade_id)).toEqual(before);
      for (const trade of trades) {
        expect(Number.isInteger(trade.seq)).toBe(true);
        expect(Math.abs((trade.ts as number) - Date.now())).toBeLessThan(5_000);
      }
      expect((trades[1]?.seq as number) > (trades[0]?.seq as number)).toBe(true);
      const seen = lastSeq(first.frames);
      await first.close();

      // Missed while away.
      const missed = [tape.add(), tape.add(), tape.add()];
      await keeper.until((f) => tradeIds(f).length === 5);
      const again = await recordingClient(instance.url);
      again.send({ type: "subscribe", channel: "trades", all: true, since: seen });
      await again.until((f) => f.some((frame) => frame.type === "subscribed"));
      expect(tradeIds(again.frames)).toEqual(missed);
      const subscribed = again.frames.find((f) => f.type === "subscribed") as Frame;
      expect(subscribed.seq).toBe(lastSeq(again.frames.filter((f) => f.type === "trade")));
      // And live again after the replay, without repeats.
      const after = tape.add();
      await again.until((f) => tradeIds(f).includes(after));
      expect(tradeIds(again.frames)).toEqual([...missed, after]);
      await Promise.all([again.close(), keeper.close()]);
    } finally {
      await instance.stop();
    }
  });

  it.each(["slow memory", ...(redisAvailable ? ["redis"] : [])])(
    "keeps a connection's live market whole while it subscribes to another (%s feed)",
    async (kind) => {
      const markets = t.server.catalog.require().markets.filter((m) => m.record.status === "active");
      const [a, b] = [markets[0]?.record.ticker as string, markets[1]?.record.ticker as string];
      const tape = new ScriptedTape(a);
      const { prefix, cleanup } = redisTestPrefix();
      // Answers wait for the next trades published, so that trades are always heard while one is pending.
      const feed =
        kind === "redis"
          ? await RedisMarketFeed.connect({ url: REDIS_TEST_URL, prefix, tickMs: 100 })
          : new SlowAnswers();
      const instance = await hubInstance(t.server.catalog, tape, feed);
      let writer: NodeJS.Timeout | undefined;
      try {
        const client = await recordingClient(instance.url);
        client.send({ type: "subscribe", channel: "trades", tickers: [a] });
        await client.until((f) => f.some((frame) => frame.type === "subscribed"));
        writer = setInterval(() => {
          tape.add(a);
          tape.add(b);
        }, 10);
        await client.until((f) => tradeIds(f).length >= 5);
        client.send({ type: "subscribe", channel: "trades", tickers: [b] });
        await client.until(
          (f) => f.filter((frame) => frame.type === "trade" && frame.market_ticker === b).length >= 5,
        );
        clearInterval(writer);
        const lastA = tape.add(a);
        await client.until((f) => tradeIds(f).includes(lastA));
        const ofA = client.frames
          .filter((f) => f.type === "trade" && f.market_ticker === a)
          .map((f) => f.trade_id);
        // Every trade of the market followed all along, once, in order, through the second subscription.
        expect(ofA).toEqual(tape.ids(a));
        expect(new Set(tradeIds(client.frames)).size).toBe(tradeIds(client.frames).length);
        await client.close();
      } finally {
        clearInterval(writer);
        await instance.stop();
        await cleanup();
      }
    },
  );

  it("answers a position it no longer keeps (or never gave) with a gap frame, then streams on", async () => {
    const tape = new ScriptedTape(ticker);
    let clock = Date.now();
    const feed = new MemoryMarketFeed({ retentionMs: 60_000, now: () => clock });
    const instance = await hubInstance(t.server.catalog, tape, feed);
    try {
      // Someone follows the tape all along, so it is read throughout.
      const keeper = await recordingClient(instance.url);
      keeper.send({ type: "subscribe", channel: "trades", all: true });
      await keeper.until((f) => f.some((frame) => frame.type === "subscribed"));
      const client = await recordingClient(instance.url);
      client.send({ type: "subscribe", channel: "trades", all: true });
      const first = tape.add();
      await client.until((f) => tradeIds(f).includes(first));
      const seen = lastSeq(client.frames);
      await client.close();
      const second = tape.add();
      await keeper.until((f) => tradeIds(f).includes(second));
      // More than the retention later, what the client missed is no longer kept.
      clock += 61_000;
      const third = tape.add();
      await keeper.until((f) => tradeIds(f).includes(third));

      const late = await recordingClient(instance.url);
      late.send({ type: "subscribe", channel: "trades", all: true, since: seen });
      await late.until((f) => f.some((frame) => frame.type === "subscribed"));
      const gap = late.frames.find((f) => f.type === "gap") as Frame;
      expect(gap).toMatchObject({ channel: "trades", type: "gap", seq: lastSeq(keeper.frames) });
      expect(tradeIds(late.frames)).toEqual([]);
      const next = tape.add();
      await late.until((f) => tradeIds(f).includes(next));
      const position = lastSeq(late.frames);

      // Trades while nobody followed the tape were never read: coming back from before that is a gap.
      await Promise.all([keeper.close(), late.close()]);
      await instance.hub.nextPoll();
      tape.add();
      await instance.hub.nextPoll();
      const back = await recordingClient(instance.url);
      back.send({ type: "subscribe", channel: "trades", all: true, since: position });
      await back.until((f) => f.some((frame) => frame.type === "subscribed"));
      expect(back.frames.map((f) => f.type)).toEqual(["gap", "subscribed"]);

      // A position from another deployment (beyond this one's head) is a gap too.
      const stranger = await recordingClient(instance.url);
      stranger.send({ type: "subscribe", channel: "trades", all: true, since: 10_000_000 });
      await stranger.until((f) => f.some((frame) => frame.type === "gap"));
      await Promise.all([back.close(), stranger.close()]);
    } finally {
      await instance.stop();
    }
  });

  it("says the upstream is stale (with its age) while it is silent, and when it recovers", async () => {
    const tape = new ScriptedTape(ticker);
    const instance = await hubInstance(t.server.catalog, tape, new MemoryMarketFeed(), { staleMs: 400 });
    try {
      const client = await recordingClient(instance.url);
      client.send({ type: "subscribe", channel: "trades", all: true });
      await client.until((f) => f.some((frame) => frame.type === "subscribed"));
      // A quiet market is not a stale feed: the tape answers, with nothing new.
      await instance.hub.nextPoll();
      // Nothing to wait on: the point is that nothing comes once more than staleMs (400) has passed.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(client.frames.filter((f) => f.type === "stale")).toEqual([]);

      tape.silent = true;
      const silentAt = Date.now();
      await client.until(
        (f) => f.filter((frame) => frame.type === "stale").length >= 2,
        5_000,
        "two stale frames",
      );
      const stale = client.frames.filter((f) => f.type === "stale");
      expect(stale[0]).toMatchObject({ channel: "trades", type: "stale" });
      expect(stale[0]?.age_ms as number).toBeGreaterThanOrEqual(400);
      // Repeated while it lasts, with a growing age.
      expect(stale[1]?.age_ms as number).toBeGreaterThan(stale[0]?.age_ms as number);
      expect(Date.now() - silentAt).toBeGreaterThanOrEqual(400);

      tape.silent = false;
      await client.until((f) => f.some((frame) => frame.type === "recovered"), 5_000, "a recovered frame");
      const recovered = client.frames.find((f) => f.type === "recovered") as Frame;
      expect(recovered.channel).toBe("trades");
      expect(recovered.silent_ms as number).toBeGreaterThanOrEqual(400);
      const id = tape.add();
      await client.until((f) => tradeIds(f).includes(id));
      await client.close();
    } finally {
      await instance.stop();
    }
  });
});

describe.skipIf(!redisAvailable)("two instances on one Redis", () => {
  it("poll once for both, send every trade once on each, and hand over once the leader's lease ends, losing and repeating nothing", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const tape = new ScriptedTape(ticker);
    const feed = () => RedisMarketFeed.connect({ url: REDIS_TEST_URL, prefix, tickMs: 100, leaseMs: 600 });
    const first = await hubInstance(t.server.catalog, tape, await feed());
    const second = await hubInstance(t.server.catalog, tape, await feed());
    let writer: NodeJS.Timeout | undefined;
    try {
      const [leader, follower] = first.hub.isLeader ? [first, second] : [second, first];
      expect(leader.hub.isLeader).toBe(true);
      expect(follower.hub.isLeader).toBe(false);
      const onLeader = await recordingClient(leader.url);
      const onFollower = await recordingClient(follower.url);
      for (const client of [onLeader, onFollower]) {
        client.send({ type: "subscribe", channel: "trades", all: true });
        await client.until((f) => f.some((frame) => frame.type === "subscribed"));
      }
      // One poller: the tape is read once per period, not once per instance.
      tape.requests = 0;
      for (let i = 0; i < 10; i++) await leader.hub.nextPoll();
      // The leader's ten periods (and one under way at either end) read it; a second poller would double that.
      expect(tape.requests).toBeLessThanOrEqual(12);

      // A trade every 20 ms, through the handover.
      writer = setInterval(() => tape.add(), 20);
      // Both clients have trades before the leader stops: each instance fans out on its own clock.
      for (const client of [onFollower, onLeader]) await client.until((f) => tradeIds(f).length >= 10);
      await leader.stop();
      await whenTrue(() => follower.hub.isLeader, 15_000, "the lead");
      const afterHandover = tape.add();
      await onFollower.until(
        (f) => tradeIds(f).includes(afterHandover),
        15_000,
        "a trade after the handover",
      );
      clearInterval(writer);
      const last = tape.add();
      await onFollower.until((f) => tradeIds(f).includes(last), 15_000, "the last trade");

      // Every trade, once, in order, on the instance that stayed; the same ones on the other until it stopped.
      const survived = tradeIds(onFollower.frames);
      const written = tape.ids();
      expect(survived).toEqual(written);
      const stopped = tradeIds(onLeader.frames);
      expect(stopped.length).toBeGreaterThanOrEqual(10);
      expect(stopped).toEqual(written.slice(0, stopped.length));
      // The same sequence numbers on both instances: a position is good anywhere in the deployment.
      const seqOf = (frames: Frame[]) =>
        new Map(frames.filter((f) => f.type === "trade").map((f) => [f.trade_id, f.seq]));
      const a = seqOf(onLeader.frames);
      const b = seqOf(onFollower.frames);
      expect(a.size).toBeGreaterThanOrEqual(10);
      for (const [id, seq] of a) expect(b.get(id)).toBe(seq);

      // A client of the stopped instance resumes on the other from its last position.
      const resumed = await recordingClient(follower.url);
      resumed.send({ type: "subscribe", channel: "trades", all: true, since: lastSeq(onLeader.frames) });
      await resumed.until((f) => f.some((frame) => frame.type === "subscribed"));
      expect(tradeIds(resumed.frames)).toEqual(written.slice(stopped.length));
      await Promise.all([onLeader.close(), onFollower.close(), resumed.close()]);
    } finally {
      clearInterval(writer);
      await first.stop();
      await second.stop();
      await cleanup();
    }
  }, 30_000);
});
