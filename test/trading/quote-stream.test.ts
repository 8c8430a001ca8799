/**
 * /quote-stream with real `ws` clients: acknowledgements, the first frame's current quote, updates
 * only on change (after a trade moves a pool), error frames for bad messages, subscribe-all for the
 * prediction markets, the heartbeat closing a silent peer, and the upgrade's access rules; with stand-in
 * sockets, slow consumers (frames held back and coalesced, then the connection closed) and a frame pass
 * written over several event-loop turns.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";
import { signWithKit } from "../support/kit.js";
import { connectStream, FakeSocket, serveStream, waitUntil } from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { expectProductionStreamAccess } from "../support/streams.js";

interface Frame {
  u: number;
  ts: number;
  subscribe?: { sb: string; sq: string; auto: boolean }[];
  unsubscribe?: { sb: string; sq: string; auto: boolean }[];
  updates: Record<string, string>[];
  type?: string;
  message?: string;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

/** A client that records every message it receives. */
const connect = (url: string, options: WebSocket.ClientOptions = {}) => connectStream<Frame>(url, options);

const streamUrl = () => `${t.url.replace("http", "ws")}/quote-stream`;
const pair = { base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT };

describe("/quote-stream", () => {
  it("answers plain HTTP with a {code,msg} 426 that says to open a WebSocket", async () => {
    for (const method of ["GET", "HEAD"]) {
      const response = await fetch(`${t.url}/quote-stream`, { method });
      expect(response.status, method).toBe(426);
      expect(response.headers.get("upgrade")).toBe("websocket");
      if (method === "GET") {
        expect(await response.json()).toEqual({
          code: "upgrade_required",
          msg: expect.stringContaining("WebSocket"),
        });
      }
    }
  });

  it("acknowledges a subscription and sends the pair's current quote, then only changes", async () => {
    const client = await connect(streamUrl());
    try {
      client.send({ op: "subscribe", ...pair });
      const first = await client.next((frame) => frame.subscribe !== undefined);
      expect(first.subscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT, auto: false }]);
      expect(first.u).toBeGreaterThan(0);
      const quote = first.updates.find((update) => update.sb === WRAPPED_SOL_MINT) as Record<string, string>;
      for (const field of ["b", "B", "a", "A"]) expect(quote[field]).toMatch(/^\d+\.\d{8}$/);
      // About 180 USDC per SOL, bid below ask, sizes worth about 10 USDC.
      expect(Number(quote.b)).toBeGreaterThan(170);
      expect(Number(quote.a)).toBeGreaterThan(Number(quote.b));
      expect(Number(quote.B) * Number(quote.b)).toBeGreaterThan(9.5);
      expect(Number(quote.B) * Number(quote.b)).toBeLessThan(10.5);

      // Nothing moves: no update for the pair in the next slots.
      client.messages.length = 0;
      // Nothing to wait on: the point is that no frame comes over a few slots (400 ms each).
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      expect(client.messages.flatMap((frame) => frame.updates)).toEqual([]);

      // A large sale of SOL moves the pools: the next frames carry the lower bid.
      const seller = await generateKeyPairSigner();
      const chain = new RpcChain({ url: t.server.chain.rpcUrl });
      await chain.requestAirdrop(seller.address, 600_000_000_000n);
      const order = (await (
        await fetch(
          `${t.url}/order?inputMint=${WRAPPED_SOL_MINT}&outputMint=${USDC_MINT}&amount=500000000000&userPublicKey=${seller.address}&priceImpactTolerancePct=100`,
        )
      ).json()) as { transaction: string };
      await chain.sendTransaction(Buffer.from(await signWithKit(seller, order.transaction), "base64"));
      const moved = await client.next((frame) =>
        frame.updates.some((update) => update.sb === WRAPPED_SOL_MINT),
      );
      const after = moved.updates.find((update) => update.sb === WRAPPED_SOL_MINT) as Record<string, string>;
      expect(Number(after.b)).toBeLessThan(Number(quote.b));

      client.send({ op: "unsubscribe", ...pair });
      const gone = await client.next((frame) => frame.unsubscribe !== undefined);
      expect(gone.unsubscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT, auto: false }]);
    } finally {
      client.socket.close();
    }
  });

  it("answers bad messages with an error frame and stays open", async () => {
    const client = await connect(streamUrl());
    try {
      client.socket.send("not json");
      expect(await client.next((frame) => frame.type === "bad_request")).toMatchObject({
        type: "bad_request",
        message: expect.stringContaining("JSON"),
      });
      client.send({ op: "subscribe", base_mint: "nope", quote_mint: USDC_MINT });
      expect((await client.next((frame) => frame.type === "bad_request")).message).toContain("base_mint");
      client.send({ op: "dance" });
      await client.next((frame) => frame.type === "bad_request");
      // Still open and serving; a pair it does not trade gets a per-pair error.
      client.send({ op: "subscribe", base_mint: "11111111111111111111111111111111", quote_mint: USDC_MINT });
      const frame = await client.next((f) => f.subscribe !== undefined);
      expect(frame.updates).toEqual([
        { sb: "11111111111111111111111111111111", sq: USDC_MINT, e: "unknown_pair" },
      ]);
    } finally {
      client.socket.close();
    }
  });

  it("subscribes to every prediction market at once", async () => {
    const client = await connect(streamUrl());
    try {
      client.send({ op: "subscribe_all_prediction_markets" });
      const frame = await client.next((f) => (f.subscribe?.length ?? 0) > 0);
      expect(frame.subscribe?.length).toBeGreaterThan(100);
      expect(frame.subscribe?.every((ack) => ack.auto && ack.sq === USDC_MINT)).toBe(true);
      expect(frame.updates.length).toBe(frame.subscribe?.length);
      client.send({ op: "unsubscribe_all_prediction_markets" });
      const gone = await client.next((f) => (f.unsubscribe?.length ?? 0) > 0);
      expect(gone.unsubscribe?.length).toBe(frame.subscribe?.length);
    } finally {
      client.socket.close();
    }
  });

  it("closes a peer that stops answering pings, and keeps one that answers", async () => {
    const hub = new QuoteStreamHub(t.server.trading.book, { pingMs: 100, silenceMs: 1_500 });
    hub.start();
    const { url, close } = await serveStream("/quote-stream", (socket) => hub.accept(socket));
    try {
      const silent = await connect(url, { autoPong: false });
      const lively = await connect(url);
      const closed = new Promise((resolve) => silent.socket.once("close", resolve));
      await closed;
      expect(lively.socket.readyState).toBe(WebSocket.OPEN);
      lively.socket.close();
    } finally {
      await hub.stop();
      await close();
    }
  });
});

describe("/quote-stream access in production", () => {
  it("needs a key with the streams permission, in a header", () =>
    expectProductionStreamAccess("/quote-stream"));
});

const accept = (hub: QuoteStreamHub, socket: FakeSocket<Frame>) => hub.accept(socket.asSocket);

describe("/quote-stream frame passes", () => {
  it("holds frames back from a consumer that is behind, sends it the latest when it catches up, and closes it if it stays behind", async () => {
    const hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 20, maxFramesBehind: 10 });
    const socket = new FakeSocket<Frame>();
    accept(hub, socket);
    hub.start();
    try {
      socket.bufferedAmount = 2 << 20;
      socket.receive({ op: "subscribe", ...pair });
      // Nothing to wait on: no frame may reach a consumer that is behind over a few passes (20 ms each).
      await new Promise((resolve) => setTimeout(resolve, 90));
      expect(socket.frames).toEqual([]);
      expect(socket.closedWith).toBeUndefined();

      // Caught up: one frame with what was held back, the acknowledgement and the pair's quote.
      socket.bufferedAmount = 0;
      await waitUntil(() => socket.frames.length > 0);
      expect(socket.frames[0]?.subscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT, auto: false }]);
      expect(socket.frames[0]?.updates.map((update) => update.sb)).toEqual([WRAPPED_SOL_MINT]);

      // Behind for more than ten frames in a row: closed.
      socket.bufferedAmount = 2 << 20;
      await waitUntil(() => socket.closedWith !== undefined);
      expect(socket.closedWith).toBe(1013);
      expect(hub.size).toBe(0);
    } finally {
      await hub.stop();
    }
  });

  it("writes a long pass in slices, one slot for all its frames, and quotes a pair subscribed during it", async () => {
    const hub = new QuoteStreamHub(t.server.trading.book, { frameMs: 50 });
    const fanouts: number[] = [];
    hub.onFanout((seconds) => fanouts.push(seconds));
    let sends = 0;
    let sendsBeforeOtherWork: number | undefined;
    const sockets: FakeSocket<Frame>[] = [];
    const slowSend = () => {
      sends += 1;
      if (sends === 1) {
        // Other work is let in while the pass goes on...
        setImmediate(() => {
          sendsBeforeOtherWork = sends;
        });
        // ...and a connection not yet served subscribes to a pair nobody followed when the pass began.
        sockets.at(-1)?.receive({ op: "subscribe", base_mint: USDC_MINT, quote_mint: WRAPPED_SOL_MINT });
      }
      // A write that takes 0.1 ms: 300 of them outlast one slice.
      const until = performance.now() + 0.1;
      while (performance.now() < until);
    };
    for (let i = 0; i < 300; i++) {
      const socket = new FakeSocket<Frame>(slowSend);
      sockets.push(socket);
      accept(hub, socket);
      socket.receive({ op: "subscribe", ...pair });
    }
    hub.start();
    try {
      await waitUntil(() => sockets.every((socket) => socket.frames.length > 0) && fanouts.length > 0);
      expect(sendsBeforeOtherWork).toBeLessThan(300);
      expect(new Set(sockets.map((socket) => socket.frames[0]?.u)).size).toBe(1);
      expect(fanouts[0]).toBeGreaterThanOrEqual(0.03);
      const last = sockets.at(-1)?.frames[0] as Frame;
      expect(last.subscribe?.map((ack) => ack.sb)).toEqual([WRAPPED_SOL_MINT, USDC_MINT]);
      expect(last.updates.map((update) => [update.sb, update.sq])).toEqual([
        [WRAPPED_SOL_MINT, USDC_MINT],
        [USDC_MINT, WRAPPED_SOL_MINT],
      ]);
      expect(Number(last.updates[1]?.b)).toBeGreaterThan(0);
    } finally {
      await hub.stop();
    }
  });
});
