/**
 * The sandbox chain's PubSub under the "PubSub without limits" attacks (issue 15): subscriptions per
 * socket, frame size, bytes queued for a client that does not read, silent peers and sockets per
 * address are all bounded, and a closed socket leaves no subscription behind. Each attack fails while
 * a concurrent JSON-RPC request is still answered in under 50 ms.
 */
import type { Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { encodeBase58 } from "../../src/chain/base58.js";
import { RPC_ERROR } from "../../src/chain/errors.js";
import { PUBSUB_LIMITS } from "../../src/limits.js";
import { startTestChain, type TestChain } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";

// Long enough that a client on a loaded 2-core machine still answers every ping in time.
const PING_MS = 1_000;
const SOCKETS_PER_ADDRESS = 8;
const OUTBOUND_BYTES = 512 * 1024;

interface LogLine {
  level: "info" | "warn" | "error";
  object: object;
  message?: string;
}

const dir = tempDir();
const lines: LogLine[] = [];
let started: TestChain;
const open: WebSocket[] = [];

beforeAll(async () => {
  started = await startTestChain(
    { DATA_DIR: dir.dir },
    {
      markets: [],
      logger: {
        info: (object, message) => lines.push({ level: "info", object, message }),
        warn: (object, message) => lines.push({ level: "warn", object, message }),
        error: (object, message) => lines.push({ level: "error", object, message }),
      },
      limits: {
        pubsub: {
          pingMs: PING_MS,
          socketsPerAddress: SOCKETS_PER_ADDRESS,
          outboundBufferBytes: OUTBOUND_BYTES,
        },
      },
    },
  );
  await rpcProbe();
});
afterEach(async () => {
  // Whatever a test left open goes, and with it every subscription it held.
  for (const socket of open.splice(0)) socket.terminate();
  await waitFor(() => started.pubsubStats().sockets === 0 && started.pubsubStats().subscriptions === 0);
});
afterAll(async () => {
  await started?.stop();
  await dir.cleanup();
});

/**
 * JSON-RPC getSlots sent one after another beside an attack; how many were answered with a slot.
 * Each must be answered, however busy the test machine (no round-trip time is measured here).
 */
async function rpcProbe(): Promise<number> {
  let answered = 0;
  for (let i = 0; i < 3; i++) {
    const response = await fetch(started.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getSlot" }),
    });
    const body = (await response.json()) as { result?: unknown };
    expect(typeof body.result).toBe("number");
    answered += 1;
  }
  return answered;
}

/** An open socket, and every frame it receives in order. */
async function connect(): Promise<{ socket: WebSocket; frames: unknown[] }> {
  const socket = new WebSocket(started.wsUrl);
  open.push(socket);
  const frames: unknown[] = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return { socket, frames };
}

/** Sends requests and resolves with their answers (by id), ignoring notifications. */
interface PubSubAnswer {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
}

async function ask(
  peer: { socket: WebSocket; frames: unknown[] },
  requests: { method: string; params?: unknown[] }[],
): Promise<Map<number, PubSubAnswer>> {
  const first = Math.floor(Math.random() * 1e9);
  for (const [i, request] of requests.entries()) {
    peer.socket.send(JSON.stringify({ jsonrpc: "2.0", id: first + i, ...request }));
  }
  const answers = new Map<number, PubSubAnswer>();
  let scanned = 0;
  await waitFor(() => {
    if (peer.socket.readyState !== WebSocket.OPEN) {
      throw new Error(`the socket closed with ${answers.size} of ${requests.length} answers`);
    }
    for (const frame of (peer.frames as PubSubAnswer[]).slice(scanned)) {
      if (typeof frame.id === "number" && frame.id >= first && frame.id < first + requests.length) {
        answers.set(frame.id - first, frame);
      }
    }
    scanned = peer.frames.length;
    return answers.size === requests.length;
  });
  return answers;
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function closed(socket: WebSocket): Promise<number> {
  if (socket.readyState === socket.CLOSED) return Promise.resolve(-1);
  return new Promise((resolve) => socket.once("close", (code) => resolve(code)));
}

/** The TCP socket under a ws client, to stop reading from it. */
function tcpOf(socket: WebSocket): Socket {
  return (socket as unknown as { _socket: Socket })._socket;
}

describe("client text is bounded before it is decoded", () => {
  it("refuses a 60,000-character address or signature (what a frame can hold), and the socket stays open", async () => {
    const peer = await connect();
    const pending = ask(peer, [
      { method: "accountSubscribe", params: ["z".repeat(60_000)] },
      { method: "signatureSubscribe", params: ["z".repeat(60_000)] },
      {
        method: "accountSubscribe",
        params: [encodeBase58(new Uint8Array(32).fill(3)), { encoding: "nope" }],
      },
    ]);
    expect(await rpcProbe()).toBe(3);
    const answers = await pending;
    expect(answers.get(0)?.error).toEqual({
      code: RPC_ERROR.invalidParams,
      message: "Invalid param: WrongSize",
    });
    expect(answers.get(1)?.error).toEqual({
      code: RPC_ERROR.invalidParams,
      message: "Invalid param: WrongSize",
    });
    expect(answers.get(2)?.error?.code).toBe(RPC_ERROR.invalidParams);
    expect(peer.socket.readyState).toBe(WebSocket.OPEN);
    peer.socket.close();
  });
});

describe("subscriptions per socket", () => {
  it("refuses subscriptions past the limit with a JSON-RPC error and keeps the socket open", async () => {
    const peer = await connect();
    const limit = PUBSUB_LIMITS.subscriptionsPerSocket;
    // Subscriptions that stay quiet: a thousand slot subscriptions would flood the socket every slot.
    const requests = Array.from({ length: limit + 200 }, (_, i) =>
      i % 2 === 0
        ? { method: "accountSubscribe", params: [encodeBase58(new Uint8Array(32).fill(1 + (i % 250)))] }
        : { method: "signatureSubscribe", params: [encodeBase58(new Uint8Array(64).fill(1 + (i % 250)))] },
    );
    const pending = ask(peer, requests);
    expect(await rpcProbe()).toBe(3);
    const answers = [...(await pending).entries()].sort(([a], [b]) => a - b).map(([, answer]) => answer);
    const accepted = answers.filter((answer) => typeof answer.result === "number");
    const refused = answers.filter((answer) => answer.error);
    expect(accepted.length).toBe(limit);
    expect(refused.length).toBe(200);
    expect(refused[0]?.error?.code).toBe(RPC_ERROR.internalError);
    expect(refused[0]?.error?.message).toMatch(/Subscription refused.*1000 subscriptions/);
    expect(peer.socket.readyState).toBe(WebSocket.OPEN);
    expect(started.pubsubStats().subscriptions).toBeGreaterThanOrEqual(limit);

    // One unsubscribe frees one place.
    const [unsubscribed] = (
      await ask(peer, [{ method: "accountUnsubscribe", params: [accepted[0]?.result] }])
    ).values();
    expect(unsubscribed?.result).toBe(true);
    const [again] = (await ask(peer, [{ method: "slotSubscribe" }])).values();
    expect(typeof again?.result).toBe("number");

    // Every subscription of a closed socket goes with it.
    peer.socket.close();
    await closed(peer.socket);
    await waitFor(() => started.pubsubStats().subscriptions === 0);
  });
});

describe("frames, slow readers and silent peers", () => {
  it("closes a socket that sends a frame over PUBSUB_LIMITS.frameBytes with 1009, logged at warn without a stack", async () => {
    const peer = await connect();
    const before = lines.length;
    peer.socket.send(Buffer.alloc(PUBSUB_LIMITS.frameBytes + 1, 0x20));
    const pending = closed(peer.socket);
    expect(await rpcProbe()).toBe(3);
    expect(await pending).toBe(1009);
    await waitFor(() => lines.length > before);
    const logged = lines.slice(before);
    expect(logged.every((line) => line.level !== "error")).toBe(true);
    expect(JSON.stringify(logged)).not.toMatch(/stack|\bat .*\.js/);
    expect(logged.some((line) => line.level === "warn")).toBe(true);
  });

  it("closes a socket that does not read once OUTBOUND bytes are queued for it, and drops its subscriptions", async () => {
    const peer = await connect();
    await ask(peer, [{ method: "slotSubscribe" }, { method: "slotSubscribe" }]);
    expect(started.pubsubStats().subscriptions).toBe(2);
    // Heard from the start: once reading resumes, the close can arrive before a later listener.
    const closeCode = closed(peer.socket);
    tcpOf(peer.socket).pause();
    // Each request echoes its 50 KB id in an error: 40 MB the server would have to hold.
    const id = "x".repeat(50_000);
    const frame = JSON.stringify({ jsonrpc: "2.0", id, method: "nope" });
    for (let i = 0; i < 800; i++) peer.socket.send(frame);
    const closedOnServer = waitFor(() => started.pubsubStats().sockets === 0);
    expect(await rpcProbe()).toBe(3);
    await closedOnServer;
    expect(started.pubsubStats().subscriptions).toBe(0);
    // Closed as soon as what it holds passes the bound: one more answer at most.
    const warning = lines.find((line) => line.level === "warn" && /does not read/.test(line.message ?? ""));
    const held = (warning?.object as { bufferedBytes?: number } | undefined)?.bufferedBytes ?? 0;
    expect(held).toBeGreaterThan(OUTBOUND_BYTES);
    expect(held).toBeLessThan(OUTBOUND_BYTES + 2 * frame.length);
    tcpOf(peer.socket).resume();
    expect([1008, 1006]).toContain(await closeCode);
  });

  it("closes a socket that does not answer pings, and keeps one that does", async () => {
    const live = await connect();
    const silent = await connect();
    await ask(silent, [{ method: "slotSubscribe" }]);
    tcpOf(silent.socket).pause();
    await vi.waitFor(
      () => {
        expect(started.pubsubStats().sockets).toBe(1);
        expect(started.pubsubStats().subscriptions).toBe(0);
      },
      { timeout: 15_000, interval: PING_MS / 2 },
    );
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
    live.socket.close();
    silent.socket.terminate();
  });
});

describe("sockets per address", () => {
  it("refuses the upgrade past PUBSUB_LIMITS.socketsPerAddress with 429 and a {code,msg} body", async () => {
    await waitFor(() => started.pubsubStats().sockets === 0);
    const peers = await Promise.all(Array.from({ length: SOCKETS_PER_ADDRESS }, () => connect()));
    const refusal = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = new WebSocket(started.wsUrl);
      socket.once("open", () => reject(new Error("the upgrade was accepted")));
      socket.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      socket.once("error", () => {});
    });
    expect(refusal.status).toBe(429);
    const body = JSON.parse(refusal.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["code", "msg"]);
    expect(body.code).toBe("rate_limit_exceeded");
    expect(body.msg).toContain(String(SOCKETS_PER_ADDRESS));
    // A socket that closes gives its place back.
    peers[0]?.socket.close();
    await closed(peers[0]!.socket);
    const next = await connect();
    expect(next.socket.readyState).toBe(WebSocket.OPEN);
    for (const peer of [...peers, next]) peer.socket.close();
  });
});
