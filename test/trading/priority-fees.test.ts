/**
 * Priority fees: the percentile rule and its floors, the estimator over a stand-in chain, then the real
 * server: `GET /priority-fees` and `/priority-fees/stream` moving after bursts of real transactions that
 * paid compute-unit prices, the bodies validated against the reference schema, the sandbox JSON-RPC's
 * per-slot answer for those transactions, bad_request frames, slow consumers, the heartbeat, 503 before
 * the chain has been read, and the production upgrade check.
 */
import { EventEmitter, once } from "node:events";
import websocket from "@fastify/websocket";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { buildApp } from "../../src/app/build-app.js";
import { buildSignedTransaction } from "../../src/chain/build-transaction.js";
import type { Chain, SlotPrioritizationFees } from "../../src/chain/chain.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import {
  PRIORITY_FEE_FLOORS,
  PriorityFeeEstimator,
  type PriorityFeeLevels,
  priorityFeeLevels,
} from "../../src/trading/priority-fees.js";
import { PriorityFeeStreamHub } from "../../src/trading/routes/priority-fees-stream.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { expectProductionStreamAccess } from "../support/streams.js";
import { refusingChain, unstartedTradingApi } from "../support/trading-api.js";

const FLOORS = { mediumMicroLamports: 1_000, highMicroLamports: 5_000, veryHighMicroLamports: 10_000 };

/** A stand-in chain whose recent slots a test sets. */
class StubChain implements Pick<Chain, "getRecentPrioritizationFees"> {
  slots: SlotPrioritizationFees[] = [];
  failure: Error | undefined;
  reads = 0;

  async getRecentPrioritizationFees(): Promise<SlotPrioritizationFees[]> {
    this.reads += 1;
    if (this.failure) throw this.failure;
    return this.slots;
  }

  /** One slot holding these prices. */
  setPrices(slot: bigint, prices: bigint[]): void {
    const lowest = prices.reduce((low, price) => (price < low ? price : low), prices[0] ?? 0n);
    this.slots = [{ slot, prioritizationFee: lowest, computeUnitPrices: prices }];
  }
}

/** A WebSocket client that keeps every frame and lets a test wait for one (event-driven, no polling). */
async function openStream(url: string, options: WebSocket.ClientOptions = {}) {
  const socket = new WebSocket(url, options);
  const frames: Record<string, unknown>[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  socket.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as Record<string, unknown>);
    wake?.();
  });
  socket.on("close", () => wake?.());
  await once(socket, "open");
  /** The next frame not read yet that satisfies `predicate` (frames before it are read too). */
  const next = async (predicate: (frame: Record<string, unknown>) => boolean = () => true) => {
    for (;;) {
      while (read < frames.length) {
        const frame = frames[read++] as Record<string, unknown>;
        if (predicate(frame)) return frame;
      }
      if (socket.readyState !== WebSocket.OPEN)
        throw new Error(`stream closed; frames: ${JSON.stringify(frames)}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  return { socket, frames, next };
}

const levelsFrame = (levels: PriorityFeeLevels) => (frame: Record<string, unknown>) =>
  frame.mediumMicroLamports === levels.mediumMicroLamports &&
  frame.highMicroLamports === levels.highMicroLamports &&
  frame.veryHighMicroLamports === levels.veryHighMicroLamports;

describe("the percentile rule", () => {
  it("has the documented floors", () => {
    expect(PRIORITY_FEE_FLOORS).toEqual(FLOORS);
  });

  it("takes the 50th, 75th and 95th percentiles by nearest rank", () => {
    // 100 prices 10,000 … 1,000,000: the k-th percentile is the k-th smallest.
    const prices = Array.from({ length: 100 }, (_, i) => BigInt((100 - i) * 10_000));
    expect(priorityFeeLevels(prices)).toEqual({
      mediumMicroLamports: 500_000,
      highMicroLamports: 750_000,
      veryHighMicroLamports: 950_000,
    });
    // 7 prices: ranks ceil(3.5) = 4, ceil(5.25) = 6, ceil(6.65) = 7.
    expect(priorityFeeLevels([70n, 10n, 60n, 20n, 50n, 30n, 40n].map((p) => p * 1_000n))).toEqual({
      mediumMicroLamports: 40_000,
      highMicroLamports: 60_000,
      veryHighMicroLamports: 70_000,
    });
  });

  it("raises each level to its floor: no samples, nothing paid, or little paid", () => {
    expect(priorityFeeLevels([])).toEqual(FLOORS);
    expect(priorityFeeLevels([0n, 0n, 0n])).toEqual(FLOORS);
    expect(priorityFeeLevels([2_000n, 7_000n])).toEqual({
      mediumMicroLamports: 2_000,
      highMicroLamports: 7_000,
      veryHighMicroLamports: 10_000,
    });
  });

  it("caps a hostile price at the largest exact JSON integer", () => {
    const huge = 2n ** 64n - 1n;
    expect(priorityFeeLevels([huge])).toEqual({
      mediumMicroLamports: Number.MAX_SAFE_INTEGER,
      highMicroLamports: Number.MAX_SAFE_INTEGER,
      veryHighMicroLamports: Number.MAX_SAFE_INTEGER,
    });
  });
});

describe("PriorityFeeEstimator", () => {
  it("reports the floors until read, then the levels of the chain's prices, notifying only changes", async () => {
    const chain = new StubChain();
    const estimator = new PriorityFeeEstimator({ chain });
    const heard: PriorityFeeLevels[] = [];
    const stop = estimator.onChange((levels) => heard.push(levels));
    expect(estimator.ready).toBe(false);
    expect(estimator.levels()).toEqual(FLOORS);

    // The first read is heard even when it finds the floors: the levels are now known.
    await estimator.refresh();
    expect(estimator.ready).toBe(true);
    expect(heard).toEqual([FLOORS]);

    chain.setPrices(10n, [100_000n, 200_000n, 300_000n, 400_000n]);
    const levels = await estimator.refresh();
    const expected = {
      mediumMicroLamports: 200_000,
      highMicroLamports: 300_000,
      veryHighMicroLamports: 400_000,
    };
    expect(levels).toEqual(expected);
    expect(estimator.levels()).toEqual(expected);
    await estimator.refresh();
    // Other prices with the same levels: not a change either.
    chain.setPrices(11n, [150_000n, 200_000n, 300_000n, 400_000n]);
    await estimator.refresh();
    expect(heard).toEqual([FLOORS, expected]);

    stop();
    chain.setPrices(12n, [1n]);
    expect(await estimator.refresh()).toEqual(FLOORS);
    expect(heard).toHaveLength(2);
  });

  it("keeps the last levels when the chain cannot be read, and reports the failure", async () => {
    const chain = new StubChain();
    const errors: unknown[] = [];
    const estimator = new PriorityFeeEstimator({ chain }, { onError: (error) => errors.push(error) });
    chain.setPrices(3n, [50_000n]);
    await estimator.refresh();
    chain.failure = new Error("node down");
    await expect(estimator.refresh()).rejects.toThrow("node down");
    expect(estimator.levels().mediumMicroLamports).toBe(50_000);

    // On its schedule, the failure goes to onError and the refreshes go on.
    estimator.start();
    await estimator.nextRefresh();
    estimator.stop();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toBe(chain.failure);
    expect(estimator.levels().mediumMicroLamports).toBe(50_000);
  });
});

/** A signed transfer paying `microLamports` per compute unit (no SetComputeUnitPrice when 0). */
async function pricedTransfer(
  chain: Chain,
  from: KeyPairSigner,
  to: Address,
  lamports: bigint,
  microLamports: bigint,
): Promise<Uint8Array> {
  const transfer = getTransferSolInstruction({ source: from, destination: to, amount: lamports });
  const instructions =
    microLamports === 0n ? [transfer] : [getSetComputeUnitPriceInstruction({ microLamports }), transfer];
  return buildSignedTransaction(from, instructions, await chain.getLatestBlockhash());
}

async function rpcCall(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await response.json()) as { result?: unknown; error?: unknown };
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

describe("GET /priority-fees and /priority-fees/stream on the real server", () => {
  let t: TestServer;
  let chain: RpcChain;
  let estimator: PriorityFeeEstimator;
  let streamUrl: string;

  beforeAll(async () => {
    t = await startTestServer();
    chain = new RpcChain({ url: t.server.chain.rpcUrl, pollIntervalMs: 20 });
    estimator = t.server.trading.priorityFees;
    streamUrl = `${t.server.tradeUrl.replace("http", "ws")}/priority-fees/stream`;
  }, 120_000);
  afterAll(async () => t?.stop());

  async function getLevels(): Promise<unknown> {
    const response = await fetch(`${t.server.tradeUrl}/priority-fees`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body: unknown = await response.json();
    expect(validateAgainstReference("PriorityFeesResponse", body)).toEqual([]);
    return body;
  }

  it("answers the floors while every recent transaction paid no priority, valid against the reference", async () => {
    await estimator.refresh();
    expect(await getLevels()).toEqual(FLOORS);
  });

  it("sends the current levels on connect, and a bad_request for any message, staying open", async () => {
    const client = await openStream(streamUrl);
    try {
      expect(await client.next()).toEqual(FLOORS);
      client.socket.send(JSON.stringify({ op: "subscribe" }));
      expect(await client.next()).toEqual({
        type: "bad_request",
        message: expect.stringContaining("no messages"),
      });
      client.socket.send("not json");
      expect(await client.next()).toEqual({ type: "bad_request", message: "messages must be JSON text" });
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      client.socket.close();
    }
  });

  it("raises the levels after a burst of transfers paying 1,000,000 µlamports per unit, on GET and the stream", async () => {
    const client = await openStream(streamUrl);
    try {
      expect(await client.next()).toEqual(FLOORS);
      const payer = await generateKeyPairSigner();
      const recipient = (await generateKeyPairSigner()).address;
      await chain.requestAirdrop(payer.address, 1_000_000_000n);
      // Every transaction so far paid nothing (the venue's start-up funding, the airdrop): at most 9 of
      // them leave 20 priced ones above the 50th percentile (nearest rank 15 of 29 at most).
      const unpriced = Number(await rpcCall(t.server.chain.rpcUrl, "getTransactionCount"));
      expect(unpriced).toBeLessThanOrEqual(9);

      const burst = await Promise.all(
        Array.from({ length: 20 }, async (_, i) =>
          chain.sendTransaction(
            await pricedTransfer(chain, payer, recipient, 1_000_000n + BigInt(i), 1_000_000n),
          ),
        ),
      );
      const raised = {
        mediumMicroLamports: 1_000_000,
        highMicroLamports: 1_000_000,
        veryHighMicroLamports: 1_000_000,
      };
      expect(await estimator.refresh()).toEqual(raised);
      expect(await getLevels()).toEqual(raised);
      await client.next(levelsFrame(raised));

      // The node's own answer: every slot the burst landed in, filtered by the account only it wrote.
      const slots = new Set((await chain.getSignatureStatuses(burst)).map((status) => Number(status?.slot)));
      const perSlot = (await rpcCall(t.server.chain.rpcUrl, "getRecentPrioritizationFees", [
        [recipient],
      ])) as {
        slot: number;
        prioritizationFee: number;
      }[];
      for (const slot of slots) expect(perSlot).toContainEqual({ slot, prioritizationFee: 1_000_000 });

      // Then 40 transfers that pay nothing: now most recent transactions paid nothing, and medium falls back
      // to its floor; 20 of at most 69 prices still reach the 75th (rank 52 of 69 beyond 49 unpriced).
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) =>
          chain.sendTransaction(await pricedTransfer(chain, payer, recipient, 2_000_000n + BigInt(i), 0n)),
        ),
      );
      const mixed = {
        mediumMicroLamports: 1_000,
        highMicroLamports: 1_000_000,
        veryHighMicroLamports: 1_000_000,
      };
      expect(await estimator.refresh()).toEqual(mixed);
      expect(await getLevels()).toEqual(mixed);
      await client.next(levelsFrame(mixed));

      // Every frame is the reference's shape, and each says something the one before did not.
      for (const frame of client.frames)
        expect(validateAgainstReference("PriorityFeesResponse", frame)).toEqual([]);
      for (let i = 1; i < client.frames.length; i++)
        expect(client.frames[i]).not.toEqual(client.frames[i - 1]);
    } finally {
      client.socket.close();
    }
  });

  it("answers plain HTTP on the stream's path with a {code,msg} 426", async () => {
    const response = await fetch(`${t.server.tradeUrl}/priority-fees/stream`);
    expect(response.status).toBe(426);
    expect(await response.json()).toEqual({
      code: "upgrade_required",
      msg: expect.stringContaining("WebSocket"),
    });
  });
});

describe("/priority-fees/stream connection rules", () => {
  let estimator: PriorityFeeEstimator;
  let stub: StubChain;
  let hub: PriorityFeeStreamHub;
  let url: string;
  const app = Fastify();

  beforeAll(async () => {
    stub = new StubChain();
    estimator = new PriorityFeeEstimator({ chain: stub });
    await estimator.refresh();
    hub = new PriorityFeeStreamHub(estimator, { pingMs: 20, silenceMs: 60, maxMessagesPerSecond: 2 });
    hub.start();
    await app.register(websocket);
    app.get("/stream", { websocket: true }, (socket) => hub.accept(socket));
    url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}/stream`;
  });
  afterAll(async () => {
    hub.stop();
    await app.close();
  });

  it("closes a peer that stops answering pings, keeps one that answers", async () => {
    const silent = await openStream(url, { autoPong: false });
    const lively = await openStream(url);
    await once(silent.socket, "close");
    expect(lively.socket.readyState).toBe(WebSocket.OPEN);
    lively.socket.close();
  });

  it("refuses messages past the rate with bad_request frames", async () => {
    const client = await openStream(url);
    try {
      await client.next();
      for (let i = 0; i < 4; i++) client.socket.send("{}");
      const answers = [await client.next(), await client.next(), await client.next(), await client.next()];
      expect(answers.map((frame) => frame.message)).toEqual([
        expect.stringContaining("no messages"),
        expect.stringContaining("no messages"),
        "more than 2 messages per second",
        "more than 2 messages per second",
      ]);
    } finally {
      client.socket.close();
    }
  });
});

/** A stand-in server-side socket: records frames, reports the `bufferedAmount` a test sets. */
class FakeSocket extends EventEmitter {
  bufferedAmount = 0;
  readonly frames: unknown[] = [];
  closedWith: number | undefined;

  send(data: string): void {
    this.frames.push(JSON.parse(data));
    this.emit("frame");
  }

  close(code: number): void {
    this.closedWith = code;
    this.emit("close");
  }

  ping(): void {}

  terminate(): void {
    this.close(1006);
  }
}

describe("/priority-fees/stream slow consumers", () => {
  it("holds frames back from a socket that does not read, sends it the latest once it does, closes it if it never does", async () => {
    const stub = new StubChain();
    const estimator = new PriorityFeeEstimator({ chain: stub });
    await estimator.refresh();
    const hub = new PriorityFeeStreamHub(estimator, {
      checkMs: 5,
      maxChecksBehind: 3,
      maxBufferedBytes: 1_000,
    });
    hub.start();
    try {
      const fast = new FakeSocket();
      const slow = new FakeSocket();
      hub.accept(fast as unknown as WebSocket);
      hub.accept(slow as unknown as WebSocket);
      expect(slow.frames).toEqual([FLOORS]);

      slow.bufferedAmount = 1_001;
      stub.setPrices(1n, [20_000n]);
      await estimator.refresh();
      stub.setPrices(2n, [30_000n]);
      await estimator.refresh();
      expect(fast.frames).toHaveLength(3);
      expect(slow.frames).toEqual([FLOORS]);

      // It reads: the next check sends only the latest levels.
      const caughtUp = once(slow, "frame");
      slow.bufferedAmount = 0;
      await caughtUp;
      expect(slow.frames).toEqual([FLOORS, fast.frames[2]]);

      // It stops reading for good: closed after maxChecksBehind checks, with nothing more queued.
      slow.bufferedAmount = 1_001;
      stub.setPrices(3n, [40_000n]);
      await estimator.refresh();
      await once(slow, "close");
      expect(slow.closedWith).toBe(1013);
      expect(slow.frames).toHaveLength(2);
      expect(hub.size).toBe(1);
    } finally {
      hub.stop();
    }
  });
});

describe("a trade API whose priority fees have not been read yet", () => {
  const dir = tempDir();
  let storage: Storage;
  let app: ZodApp;

  beforeAll(async () => {
    storage = await openStorage({ DATA_DIR: dir.dir });
    app = await buildApp({
      config: QUIET_DEVELOPMENT,
      catalog: new CatalogHolder(),
      access: openAccess(),
      trading: unstartedTradingApi(storage.db, refusingChain()),
    });
  });
  afterAll(async () => {
    await app?.close();
    await storage?.close();
    await dir.cleanup();
  });

  it("answers 503 not_ready rather than levels it has not read", async () => {
    const response = await app.inject({ method: "GET", url: "/priority-fees" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ code: "not_ready", msg: expect.stringContaining("priority fee") });
  });
});

describe("/priority-fees/stream access in production", () => {
  it("needs a key with the streams permission, in a header", () =>
    expectProductionStreamAccess("/priority-fees/stream"));
});
