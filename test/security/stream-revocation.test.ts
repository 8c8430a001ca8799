/**
 * A key's streams live no longer than the key (issue 15): revoking it, rotating it without grace, or
 * its grace running out closes every stream it opened, `/quote-stream` and `/api/v1/ws` alike, and the
 * sandbox chain's PubSub sockets, with 1008 at the key ring's next refresh; other keys' streams stay open.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { KeyRing } from "../../src/api-keys/key-ring.js";
import { createKey, hashSecret, revokeKey, rotateKey } from "../../src/api-keys/store.js";
import { loadConfig } from "../../src/config.js";
import { KEY_INVALIDATED_CLOSE } from "../../src/http/stream-peers.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";
import { startTestServer, type TestServer } from "../support/server.js";

const STREAMS = ["/quote-stream", "/api/v1/ws"];

let t: TestServer;
let storage: Storage;
beforeAll(async () => {
  t = await startTestServer({ settings: { MODE: "production" } });
  storage = await openStorage(loadConfig({}, t.settings));
}, 120_000);
afterAll(async () => {
  await storage?.close();
  await t?.stop();
});

interface Stream {
  socket: WebSocket;
  /** Resolves with the close code and reason, and when the close arrived. */
  closed: Promise<{ code: number; reason: string; at: number }>;
  /** Messages received after `stopCounting` was set. */
  late: number;
  /** Messages received in all. */
  received: number;
  stopCounting: number;
}

/** Opens `path` (of the HTTP API unless another WebSocket `base` is given) with `secret` in the x-api-key header. */
async function open(path: string, secret: string, base = t.url.replace("http", "ws")): Promise<Stream> {
  const socket = new WebSocket(`${base}${path}`, { headers: { "x-api-key": secret } });
  const stream: Stream = {
    socket,
    closed: new Promise((resolve) =>
      socket.once("close", (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })),
    ),
    late: 0,
    received: 0,
    stopCounting: Number.POSITIVE_INFINITY,
  };
  socket.on("message", () => {
    stream.received += 1;
    if (Date.now() > stream.stopCounting) stream.late += 1;
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  return stream;
}

/** Keeps a stream busy, so that a stream left open would keep receiving data. */
function subscribe(stream: Stream, path: string): void {
  if (path === "/quote-stream")
    stream.socket.send(JSON.stringify({ op: "subscribe_all_prediction_markets" }));
  else stream.socket.send(JSON.stringify({ type: "subscribe", channel: "prices", all: true }));
}

/** Resolves once every stream has received more than it had when called. */
async function moreData(streams: Stream[]): Promise<void> {
  const counts = streams.map((stream) => stream.received);
  await vi.waitFor(
    () => {
      for (const [i, stream] of streams.entries())
        expect(stream.received).toBeGreaterThan(counts[i] as number);
    },
    { timeout: 20_000, interval: 20 },
  );
}

/** Resolves at the next slot notification of a PubSub socket. */
function nextSlot(stream: Stream): Promise<void> {
  return new Promise((resolve) => {
    const hear = (data: WebSocket.RawData) => {
      if (JSON.parse(data.toString()).method !== "slotNotification") return;
      stream.socket.off("message", hear);
      resolve();
    };
    stream.socket.on("message", hear);
  });
}

/** Subscribes a PubSub socket to slots, and resolves once the first notification arrived. */
async function subscribeSlots(stream: Stream): Promise<void> {
  const first = nextSlot(stream);
  stream.socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "slotSubscribe" }));
  await first;
}

describe("open streams of a key that stops being valid", () => {
  it("are closed with 1008 at the key ring's next refresh after its revocation; other keys' streams stay open", async () => {
    const doomed = await createKey(storage.db, { name: "doomed", streams: true });
    const kept = await createKey(storage.db, { name: "kept", streams: true });
    const doomedStreams = await Promise.all(STREAMS.map((path) => open(path, doomed.secret)));
    const keptStreams = await Promise.all(STREAMS.map((path) => open(path, kept.secret)));
    STREAMS.forEach((path, i) => {
      subscribe(doomedStreams[i] as Stream, path);
      subscribe(keptStreams[i] as Stream, path);
    });
    // Every stream is being sent data.
    await moreData([...doomedStreams, ...keptStreams]);
    await revokeKey(storage.db, doomed.key.id);
    for (const stream of doomedStreams) {
      const { code, at } = await stream.closed;
      expect(code).toBe(KEY_INVALIDATED_CLOSE);
      stream.stopCounting = at;
    }
    // The refresh that closed the doomed streams judged the other key's too: they stay open.
    for (const stream of doomedStreams) expect(stream.late).toBe(0);
    for (const stream of keptStreams) {
      expect(stream.socket.readyState).toBe(WebSocket.OPEN);
      stream.socket.close();
    }
  }, 60_000);

  it("are closed when a rotation ends their secret: at once without grace, at the grace's end with it", async () => {
    const key = await createKey(storage.db, { name: "rotating", streams: true });
    const first = await open("/quote-stream", key.secret);
    const rotated = await rotateKey(storage.db, key.key.id, 0);
    const firstClosed = await first.closed;
    expect(firstClosed.code).toBe(KEY_INVALIDATED_CLOSE);

    const second = await open("/api/v1/ws", rotated.secret);
    // The grace period ends 1 s after this moment or later (rotateKey reads the clock after it).
    const gracedFrom = Date.now();
    const graced = await rotateKey(storage.db, key.key.id, 1);
    // Opening with the new secret makes the ring read the rotation.
    const third = await open("/api/v1/ws", graced.secret);
    // The old secret works through its grace period...
    expect(second.socket.readyState).toBe(WebSocket.OPEN);
    // ...and its stream ends once the period is over (never before: load only delays the close).
    const secondClosed = await second.closed;
    expect(secondClosed.code).toBe(KEY_INVALIDATED_CLOSE);
    expect(secondClosed.at - gracedFrom).toBeGreaterThanOrEqual(1_000);
    expect(third.socket.readyState).toBe(WebSocket.OPEN);
    third.socket.close();
  }, 60_000);
});

describe("open PubSub sockets of the sandbox chain, of a key that stops being valid", () => {
  it("are closed with 1008 at the key ring's next refresh after its revocation, their subscriptions dropped; another key's still notifies", async () => {
    const sandbox = t.server.chain.sandbox;
    if (!sandbox) throw new Error("the test server runs the sandbox chain");
    const doomed = await createKey(storage.db, { name: "pubsub doomed" });
    const kept = await createKey(storage.db, { name: "pubsub kept" });
    const doomedSocket = await open("", doomed.secret, sandbox.wsUrl);
    const keptSocket = await open("", kept.secret, sandbox.wsUrl);
    await Promise.all([subscribeSlots(doomedSocket), subscribeSlots(keptSocket)]);
    const subscriptions = sandbox.pubsubStats().subscriptions;
    await revokeKey(storage.db, doomed.key.id);
    // Bounded here: a socket left open must fail the test with this message, not time it out.
    let bound: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      doomedSocket.closed,
      new Promise<undefined>((resolve) => {
        bound = setTimeout(() => resolve(undefined), 15_000);
      }),
    ]);
    clearTimeout(bound);
    if (!closed) throw new Error("the PubSub socket of the revoked key was still open 15 s later");
    const { code, reason, at } = closed;
    expect(code).toBe(KEY_INVALIDATED_CLOSE);
    expect(reason).toMatch(/revoked/);
    doomedSocket.stopCounting = at;
    expect(sandbox.pubsubStats().subscriptions).toBe(subscriptions - 1);
    await nextSlot(keptSocket);
    await nextSlot(keptSocket);
    expect(keptSocket.socket.readyState).toBe(WebSocket.OPEN);
    expect(doomedSocket.late).toBe(0);
    keptSocket.socket.close();
  }, 60_000);
});

describe("KeyRing.onInvalidated", () => {
  it("reports the hashes of secrets that stopped being valid, once each", async () => {
    const dir = tempDir();
    const db = await openStorage({ DATA_DIR: dir.dir });
    const ring = new KeyRing(db.db);
    try {
      const a = await createKey(db.db, { name: "a" });
      const b = await createKey(db.db, { name: "b" });
      await ring.start();
      const reports: string[][] = [];
      const stop = ring.onInvalidated((hashes) => reports.push([...hashes]));
      await revokeKey(db.db, a.key.id);
      const rotated = await rotateKey(db.db, b.key.id, 0);
      await ring.refresh();
      await ring.refresh();
      expect(reports.flat().sort()).toEqual([hashSecret(a.secret), hashSecret(b.secret)].sort());
      expect(ring.lookup(rotated.secret)?.id).toBe(b.key.id);
      stop();
      await revokeKey(db.db, b.key.id);
      await ring.refresh();
      expect(reports.flat()).toHaveLength(2);
    } finally {
      await ring.stop();
      await db.close();
      await dir.cleanup();
    }
  });
});
