/**
 * `/quote-stream` resumes (issue 22, item 3): frames carry `seq` (the same on every instance) and
 * `ts`; a subscribe with `since` gets its acknowledgement with only the quotes that changed after it,
 * or a `gap` frame then the current quote when the position is not known (too old, from the future,
 * from another process); a bad `since` gets `bad_request`. Over one Redis, two instances agree on
 * positions and a client resumes on the other one, as `QuoteStreamClient` does by itself.
 */

import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebSocket as ServerSocket } from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { type PairGap, type QuoteFrame, QuoteStreamClient } from "../../src/client/streams.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";
import { SharedQuotes } from "../../src/trading/streams/shared-quotes.js";
import { signWithKit } from "../support/kit.js";
import { connectStream, serveStream, waitUntil } from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";

interface Frame {
  u?: number;
  ts?: number;
  seq?: number;
  subscribe?: { sb: string; sq: string; auto: boolean }[];
  unsubscribe?: { sb: string; sq: string; auto: boolean }[];
  updates?: Record<string, string>[];
  type?: string;
  sb?: string;
  sq?: string;
  all?: boolean;
  message?: string;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

const pair = { base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT };
const reverse = { base_mint: USDC_MINT, quote_mint: WRAPPED_SOL_MINT };
const isAck = (frame: Frame) => frame.subscribe !== undefined;
const solQuote = (frame: Frame) => frame.updates?.find((update) => update.sb === WRAPPED_SOL_MINT);

/** A hub of this test's own behind a listener; `sockets` are the server's ends, to drop. */
async function serveHub(options: ConstructorParameters<typeof QuoteStreamHub>[1] = {}) {
  const hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 50, ...options });
  hub.start();
  const sockets: ServerSocket[] = [];
  const served = await serveStream("/quote-stream", (socket) => {
    sockets.push(socket);
    hub.accept(socket);
  });
  return {
    hub,
    url: served.url,
    sockets,
    async close() {
      await hub.stop();
      await served.close();
    },
  };
}

/** Sells 500 SOL for USDC through `/order`: the SOL/USDC quote moves. */
async function moveSolPool(): Promise<void> {
  const seller = await generateKeyPairSigner();
  const chain = new RpcChain({ url: t.server.chain.rpcUrl });
  await chain.requestAirdrop(seller.address, 600_000_000_000n);
  const order = (await (
    await fetch(
      `${t.url}/order?inputMint=${WRAPPED_SOL_MINT}&outputMint=${USDC_MINT}&amount=500000000000&userPublicKey=${seller.address}&priceImpactTolerancePct=100`,
    )
  ).json()) as { transaction: string };
  await chain.sendTransaction(Buffer.from(await signWithKit(seller, order.transaction), "base64"));
}

describe("/quote-stream positions", () => {
  it("numbers frames; a resume gets the acknowledgement with only what changed after its position", async () => {
    const served = await serveHub();
    try {
      const first = await connectStream<Frame>(served.url);
      first.send({ op: "subscribe", ...pair });
      const ack = await first.next(isAck);
      expect(ack.seq).toBeGreaterThan(0);
      expect(Math.abs((ack.ts as number) - Date.now() / 1000)).toBeLessThan(5);
      const before = solQuote(ack);
      expect(before?.b).toMatch(/^\d+\.\d{8}$/);
      const seen = ack.seq as number;
      first.socket.close();
      // A frame pass after the close (it acknowledges another client's pair): the pair nobody follows
      // now is still priced, so its position stays exact.
      await waitUntil(() => served.hub.size === 0);
      const other = await connectStream<Frame>(served.url);
      other.send({ op: "subscribe", ...reverse });
      await other.next(isAck);
      other.socket.close();

      // Nothing changed since: the acknowledgement comes (no silence), the quote the client has does not.
      const resumed = await connectStream<Frame>(served.url);
      resumed.send({ op: "subscribe", ...pair, since: seen });
      const unchanged = await resumed.next(isAck);
      expect(unchanged.subscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT, auto: false }]);
      expect(unchanged.updates).toEqual([]);
      expect(unchanged.seq).toBeGreaterThan(seen);
      expect(resumed.messages.filter((frame) => frame.type === "gap")).toEqual([]);

      // The pool moves: the follower hears it at a new position; a resume from before gets the new quote.
      await moveSolPool();
      const moved = await resumed.next((frame) => solQuote(frame) !== undefined);
      expect(moved.seq).toBeGreaterThan(seen);
      expect(Number(solQuote(moved)?.b)).toBeLessThan(Number(before?.b));
      const late = await connectStream<Frame>(served.url);
      late.send({ op: "subscribe", ...pair, since: seen });
      const caughtUp = await late.next(isAck);
      expect(solQuote(caughtUp)).toEqual(solQuote(moved));
      // ...and one from the new position gets nothing again.
      const current = await connectStream<Frame>(served.url);
      current.send({ op: "subscribe", ...pair, since: moved.seq });
      expect((await current.next(isAck)).updates).toEqual([]);
      for (const client of [resumed, late, current]) client.socket.close();
    } finally {
      await served.close();
    }
  });

  it("stops pricing a pair at once when its last follower unsubscribes (only a dropped connection's pairs wait for a resume)", async () => {
    const served = await serveHub();
    try {
      const client = await connectStream<Frame>(served.url);
      client.send({ op: "subscribe", ...pair });
      const seen = (await client.next(isAck)).seq as number;
      client.send({ op: "unsubscribe", ...pair });
      await client.next((frame) => frame.unsubscribe !== undefined);
      // A later pass (it acknowledges another pair) forgets the pair nobody asked to keep.
      client.send({ op: "subscribe", ...reverse });
      await client.next((frame) => frame.subscribe?.[0]?.sb === USDC_MINT);
      // Priced again from nothing, the pair counts as changed: a resume gets its quote.
      client.send({ op: "subscribe", ...pair, since: seen });
      const again = await client.next((frame) => frame.subscribe?.[0]?.sb === WRAPPED_SOL_MINT);
      expect(solQuote(again)?.b).toMatch(/^\d+\.\d{8}$/);
      client.socket.close();
    } finally {
      await served.close();
    }
  });

  it("keeps at most maxLingeringPairs pairs of closed connections priced, dropping the oldest", async () => {
    const served = await serveHub({ maxLingeringPairs: 1 });
    try {
      const client = await connectStream<Frame>(served.url);
      client.send({ op: "subscribe", ...pair });
      const seen = (await client.next(isAck)).seq as number;
      client.socket.close();
      await waitUntil(() => served.hub.size === 0);
      const other = await connectStream<Frame>(served.url);
      other.send({ op: "subscribe", ...reverse });
      await other.next(isAck);
      other.socket.close();
      await waitUntil(() => served.hub.size === 0);
      // Two pairs linger now, one more than allowed: the next pass, which acknowledges a third pair,
      // forgets the older (SOL/USDC).
      const resumed = await connectStream<Frame>(served.url);
      const unknownBase = (await generateKeyPairSigner()).address;
      resumed.send({ op: "subscribe", base_mint: unknownBase, quote_mint: USDC_MINT });
      await resumed.next(isAck);
      resumed.send({ op: "subscribe", ...pair, since: seen });
      const again = await resumed.next((frame) => frame.subscribe?.[0]?.sb === WRAPPED_SOL_MINT);
      expect(solQuote(again)?.b).toMatch(/^\d+\.\d{8}$/);
      resumed.socket.close();
    } finally {
      await served.close();
    }
  });

  it("answers a position it does not know with a gap, then the current quote", async () => {
    const served = await serveHub({ retentionMs: 300 });
    try {
      const client = await connectStream<Frame>(served.url);
      client.send({ op: "subscribe", ...pair });
      const old = (await client.next(isAck)).seq as number;
      // A pair new to the stream is a new position; the old one then ages out of the retention.
      client.send({ op: "subscribe", ...reverse });
      const head = (await client.next(isAck)).seq as number;
      expect(head).toBeGreaterThan(old);
      await waitUntil(() => Date.now() > old + 300);

      for (const since of [old, Date.now() + 3_600_000, 1]) {
        const resumed = await connectStream<Frame>(served.url);
        resumed.send({ op: "subscribe", ...pair, since });
        // The gap first (nothing before it), then the fresh quote; both may arrive in one read.
        const first = await resumed.next(() => true);
        expect(first).toEqual({
          type: "gap",
          sb: WRAPPED_SOL_MINT,
          sq: USDC_MINT,
          seq: head,
          ts: expect.any(Number),
        });
        expect(solQuote(await resumed.next(isAck))?.b).toMatch(/^\d+\.\d{8}$/);
        resumed.socket.close();
      }
      // The latest position is known however old: the last the first client saw (a pool the test
      // before moved may still have changed a quote since `head`).
      const known = Math.max(
        head,
        ...client.messages.map((frame) => (typeof frame.seq === "number" ? frame.seq : 0)),
      );
      const latest = await connectStream<Frame>(served.url);
      latest.send({ op: "subscribe", ...reverse, since: known });
      expect((await latest.next(isAck)).updates).toEqual([]);
      latest.socket.close();
      client.socket.close();
    } finally {
      await served.close();
    }
  });

  it("refuses a since that is not a position with bad_request, subscribing nothing", async () => {
    const served = await serveHub();
    try {
      const client = await connectStream<Frame>(served.url);
      for (const since of [-1, 1.5, "12", null]) {
        client.send({ op: "subscribe", ...pair, since });
        const refusal = await client.next((frame) => frame.type !== undefined);
        expect(refusal).toMatchObject({
          type: "bad_request",
          message: expect.stringContaining("since must be a seq the stream sent"),
        });
      }
      client.send({ op: "subscribe_all_prediction_markets", since: -5 });
      expect((await client.next((frame) => frame.type !== undefined)).type).toBe("bad_request");
      client.send({ op: "subscribe", ...reverse });
      const ack = await client.next(isAck);
      expect(ack.subscribe).toEqual([{ sb: USDC_MINT, sq: WRAPPED_SOL_MINT, auto: false }]);
      client.socket.close();
    } finally {
      await served.close();
    }
  });

  it("resumes the prediction-market subscription: every pair acknowledged, only changed quotes sent", async () => {
    const served = await serveHub();
    try {
      const first = await connectStream<Frame>(served.url);
      first.send({ op: "subscribe_all_prediction_markets" });
      const ack = await first.next((frame) => (frame.subscribe?.length ?? 0) > 0);
      const pairs = ack.subscribe?.length ?? 0;
      expect(pairs).toBeGreaterThan(100);
      first.socket.close();

      const resumed = await connectStream<Frame>(served.url);
      resumed.send({ op: "subscribe_all_prediction_markets", since: ack.seq });
      const again = await resumed.next((frame) => (frame.subscribe?.length ?? 0) > 0);
      expect(again.subscribe?.length).toBe(pairs);
      expect(again.updates).toEqual([]);

      const unknown = await connectStream<Frame>(served.url);
      unknown.send({ op: "subscribe_all_prediction_markets", since: 7 });
      expect(await unknown.next((frame) => frame.type === "gap")).toMatchObject({ type: "gap", all: true });
      expect((await unknown.next((frame) => (frame.subscribe?.length ?? 0) > 0)).updates?.length).toBe(pairs);
      resumed.socket.close();
      unknown.socket.close();
    } finally {
      await served.close();
    }
  });
});

describe("QuoteStreamClient resuming", () => {
  it("resubscribes from its last position after a drop (no gap), and reports a gap after a restart", async () => {
    let served = await serveHub();
    // One address in front of whichever hub serves now, as a load balancer would be.
    const front = await serveStream("/quote-stream", (socket) => {
      const target = served;
      target.sockets.push(socket);
      target.hub.accept(socket);
    });
    const client = QuoteStreamClient.connect(
      front.url.replace(/^ws/, "http").replace(/\/quote-stream$/, ""),
      {
        backoffMs: 20,
      },
    );
    const frames: QuoteFrame[] = [];
    const gaps: PairGap[] = [];
    client.onMessage((message) => {
      if ("u" in message) frames.push(message);
    });
    client.onGap((gap) => gaps.push(gap));
    try {
      client.subscribe(WRAPPED_SOL_MINT, USDC_MINT);
      await waitUntil(() => frames.some((frame) => frame.subscribe));
      const position = client.position(WRAPPED_SOL_MINT, USDC_MINT);
      expect(position).toBe(frames[0]?.seq);
      expect(frames[0]?.updates).toHaveLength(1);

      // The connection drops; the client comes back and resumes: acknowledged, nothing to resend.
      frames.length = 0;
      for (const socket of served.sockets) socket.terminate();
      await waitUntil(() => frames.some((frame) => frame.subscribe));
      expect(frames[0]?.updates).toEqual([]);
      expect(gaps).toEqual([]);
      expect(client.position(WRAPPED_SOL_MINT, USDC_MINT)).toBe(position);

      // The server restarts (its positions are gone): a gap for the pair, then its current quote.
      frames.length = 0;
      const old = served;
      served = await serveHub();
      await old.close();
      await waitUntil(() => frames.some((frame) => frame.subscribe));
      expect(gaps).toEqual([
        { type: "gap", sb: WRAPPED_SOL_MINT, sq: USDC_MINT, seq: expect.any(Number), ts: expect.any(Number) },
      ]);
      expect(frames[0]?.updates).toHaveLength(1);
      expect(client.position(WRAPPED_SOL_MINT, USDC_MINT)).toBe(frames[0]?.seq);
    } finally {
      client.close();
      await served.close();
      await front.close();
    }
  });
});

/** One instance: a quote hub sharing through Redis, behind its own listener. */
async function instance(prefix: string) {
  const hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 50 });
  const shared = await SharedQuotes.connect({
    url: REDIS_TEST_URL,
    prefix,
    slotMs: 100,
    compute: (pairs) => hub.computeQuotes(pairs),
  });
  hub.share(shared);
  hub.start();
  const sockets: ServerSocket[] = [];
  const served = await serveStream("/quote-stream", (socket) => {
    sockets.push(socket);
    hub.accept(socket);
  });
  return {
    hub,
    shared,
    sockets,
    url: served.url,
    async stop() {
      await hub.stop();
      await served.close();
    },
  };
}

describe.skipIf(!redisAvailable)("/quote-stream positions over Redis", () => {
  it("are the same on every instance: a client resumes on another, and a new instance knows them", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const first = await instance(prefix);
    const second = await instance(prefix);
    const key = `${WRAPPED_SOL_MINT}|${USDC_MINT}`;
    let third: Awaited<ReturnType<typeof instance>> | undefined;
    try {
      // A client of the first instance has the pair priced by the leader for both.
      const watcher = await connectStream<Frame>(first.url);
      watcher.send({ op: "subscribe", ...pair });
      await waitUntil(
        () =>
          first.shared.publication?.values.has(key) === true &&
          second.shared.publication?.seq === first.shared.publication?.seq,
      );
      const published = first.shared.publication;
      expect(second.shared.publication?.values.get(key)).toEqual(published?.values.get(key));
      // Both instances frame it at the same position with the same quote.
      const a = await connectStream<Frame>(first.url);
      const b = await connectStream<Frame>(second.url);
      a.send({ op: "subscribe", ...pair });
      b.send({ op: "subscribe", ...pair });
      const fromA = await a.next(isAck);
      const fromB = await b.next(isAck);
      expect(fromA.seq).toBe(published?.seq);
      expect(fromB.seq).toBe(fromA.seq);
      expect(solQuote(fromA)).toEqual(solQuote(fromB));

      // A client of the first instance moves to the second with its position: nothing to resend.
      a.socket.close();
      const moved = await connectStream<Frame>(second.url);
      moved.send({ op: "subscribe", ...pair, since: fromA.seq });
      const resumed = await moved.next(isAck);
      expect(resumed.updates).toEqual([]);
      expect(moved.messages.filter((frame) => frame.type === "gap")).toEqual([]);

      // An instance that starts now learns the positions from Redis and resumes the client too.
      third = await instance(prefix);
      expect(third.shared.positions.knows(fromA.seq as number)).toBe(true);
      const late = await connectStream<Frame>(third.url);
      late.send({ op: "subscribe", ...pair, since: fromA.seq });
      expect(late.messages.filter((frame) => frame.type === "gap")).toEqual([]);
      await late.next(isAck);
      expect(late.messages.filter((frame) => frame.type === "gap")).toEqual([]);

      // The leader stops: the next one continues the positions, and an unchanged quote keeps its own.
      const leader = first.shared.isLeader ? first : second;
      const follower = leader === first ? second : first;
      const changedAt = published?.values.get(key)?.changedAt;
      await leader.stop();
      const heard = follower.shared.publication;
      // The next publication heard is the new leader's (the old one is stopped).
      await waitUntil(() => follower.shared.publication !== heard);
      expect(follower.shared.isLeader || third.shared.isLeader).toBe(true);
      expect(follower.shared.publication?.seq).toBeGreaterThanOrEqual(published?.seq ?? 0);
      expect(follower.shared.publication?.values.get(key)?.changedAt).toBe(changedAt);
      for (const client of [watcher, b, moved, late]) client.socket.close();
    } finally {
      await first.stop().catch(() => {});
      await second.stop().catch(() => {});
      await third?.stop().catch(() => {});
      await cleanup();
    }
  });
});
