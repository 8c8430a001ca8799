/**
 * `/book-stream` resumes and says when the chain stands still (issue 22, item 3), on the pair
 * streams' shared rules: frames carry `seq` and `ts`; a subscribe with `since` is acknowledged without
 * the unchanged book, or after a `gap` frame with the current one; a bad `since` gets `bad_request`;
 * `stale` frames while the slot stands still, then `recovered`; `BookStreamClient` resumes by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebSocket as ServerSocket } from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import {
  type BookFrame,
  BookStreamClient,
  type ChainStaleness,
  type PairGap,
} from "../../src/client/streams.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { TradingBook } from "../../src/trading/spot/trading-book.js";
import { BOOK_LEVELS } from "../../src/trading/streams/book-levels.js";
import { BookStreamHub, type BookStreamOptions } from "../../src/trading/streams/book-stream.js";
import { connectStream, serveStream, waitUntil } from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";

interface Frame {
  u?: number;
  ts?: number;
  seq?: number;
  subscribe?: { sb: string; sq: string }[];
  updates?: { sb: string; sq: string; b?: unknown[] }[];
  skipped?: number;
  type?: string;
  message?: string;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
}, 120_000);
afterAll(async () => t?.stop());

const pair = { base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT };
const isAck = (frame: Frame) => frame.subscribe !== undefined;

/** A book hub of this test's own (over `book`) behind a listener; `sockets` are the server's ends. */
async function serveHub(options: BookStreamOptions = {}, book: TradingBook = t.server.trading.book) {
  const hub = new BookStreamHub(book, { frameMs: 50, ...options });
  hub.start();
  const sockets: ServerSocket[] = [];
  const served = await serveStream("/book-stream", (socket) => {
    sockets.push(socket);
    hub.accept(socket);
  });
  return {
    hub,
    sockets,
    url: served.url,
    base: served.url.replace(/^ws/, "http").replace(/\/book-stream$/, ""),
    async close() {
      await hub.stop();
      await served.close();
    },
  };
}

describe("/book-stream positions", () => {
  it("numbers frames; resumes without resending an unchanged book; a gap for a position it does not know", async () => {
    const served = await serveHub();
    try {
      const first = await connectStream<Frame>(served.url);
      first.send({ op: "subscribe", ...pair });
      const ack = await first.next(isAck);
      expect(ack.seq).toBeGreaterThan(0);
      expect(Math.abs((ack.ts as number) - Date.now() / 1000)).toBeLessThan(5);
      expect(ack.updates?.[0]?.b).toHaveLength(BOOK_LEVELS);
      first.socket.close();

      const resumed = await connectStream<Frame>(served.url);
      resumed.send({ op: "subscribe", ...pair, since: ack.seq });
      const again = await resumed.next(isAck);
      expect(again).toMatchObject({ seq: ack.seq, updates: [], skipped: 0 });
      expect(again.subscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT }]);

      const lost = await connectStream<Frame>(served.url);
      lost.send({ op: "subscribe", ...pair, since: (ack.seq as number) + 1 });
      expect(await lost.next((frame) => frame.type === "gap")).toEqual({
        type: "gap",
        sb: WRAPPED_SOL_MINT,
        sq: USDC_MINT,
        seq: ack.seq,
        ts: expect.any(Number),
      });
      expect((await lost.next(isAck)).updates?.[0]?.b).toHaveLength(BOOK_LEVELS);

      lost.send({ op: "subscribe", ...pair, since: "latest" });
      expect(await lost.next((frame) => frame.type !== undefined)).toEqual({
        type: "bad_request",
        message: expect.stringContaining("since must be a seq the stream sent"),
      });
      for (const client of [resumed, lost]) client.socket.close();
    } finally {
      await served.close();
    }
  });

  it("sends stale frames while the chain's slot stands still, then recovered", async () => {
    const book = t.server.trading.book;
    // The book as the hub sees it, with a clock the test can stop.
    let stopped: TradingBook["clock"] | undefined;
    const view = Object.create(book, { clock: { get: () => stopped ?? book.clock } }) as TradingBook;
    const served = await serveHub({ staleMs: 300 }, view);
    const client = BookStreamClient.connect(served.base, { backoffMs: 20 });
    const heard: ChainStaleness[] = [];
    client.onStale((state) => heard.push(state));
    try {
      await waitUntil(() => client.connected);
      stopped = book.clock;
      await waitUntil(() => heard.filter((h) => h.type === "stale").length >= 2);
      expect(heard[0]).toMatchObject({ type: "stale", age_ms: expect.any(Number) });
      expect(heard[0]?.type === "stale" && heard[0].age_ms).toBeGreaterThanOrEqual(300);
      stopped = undefined;
      await waitUntil(() => heard.some((h) => h.type === "recovered"));
      const recovered = heard.find((h) => h.type === "recovered");
      expect(recovered?.type === "recovered" && recovered.silent_ms).toBeGreaterThanOrEqual(600);
    } finally {
      client.close();
      await served.close();
    }
  });
});

describe("BookStreamClient", () => {
  it("resumes from its last position after a drop, and reports a gap after a restart", async () => {
    let served = await serveHub();
    const front = await serveStream("/book-stream", (socket) => {
      const target = served;
      target.sockets.push(socket);
      target.hub.accept(socket);
    });
    const frames: BookFrame[] = [];
    const gaps: PairGap[] = [];
    const client = BookStreamClient.connect(front.url.replace(/^ws/, "http").replace(/\/book-stream$/, ""), {
      backoffMs: 20,
    });
    client.onMessage((message) => {
      if ("u" in message) frames.push(message);
    });
    client.onGap((gap) => gaps.push(gap));
    try {
      client.subscribe(WRAPPED_SOL_MINT, USDC_MINT);
      await waitUntil(() => frames.some(isAck));
      const position = client.position(WRAPPED_SOL_MINT, USDC_MINT);
      expect(position).toBe(frames[0]?.seq);

      frames.length = 0;
      for (const socket of served.sockets) socket.terminate();
      await waitUntil(() => frames.some(isAck));
      expect(frames[0]?.updates).toEqual([]);
      expect(gaps).toEqual([]);

      frames.length = 0;
      const old = served;
      served = await serveHub();
      await old.close();
      await waitUntil(() => frames.some(isAck));
      expect(gaps).toMatchObject([{ type: "gap", sb: WRAPPED_SOL_MINT, sq: USDC_MINT }]);
      expect(frames[0]?.updates).toHaveLength(1);
    } finally {
      client.close();
      await served.close();
      await front.close();
    }
  });
});
