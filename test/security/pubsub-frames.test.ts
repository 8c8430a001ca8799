/**
 * PubSub answers every frame that is not a request the way Agave (and our own JSON-RPC over HTTP)
 * does: a frame that is not a request object gets -32600 Invalid request with id null, and a method
 * that is not one of PubSub's own, such as `__proto__` or `constructor`, gets -32601 Method not found.
 * A notification (a request without id, such as web3.js's keep-alive ping) still gets no answer.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RPC_ERROR } from "../../src/chain/errors.js";
import { startTestChain, type TestChain } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";

const dir = tempDir();
let started: TestChain;
let socket: WebSocket;
const frames: unknown[] = [];
let arrived: () => void = () => {};

beforeAll(async () => {
  started = await startTestChain({ DATA_DIR: dir.dir }, { markets: [] });
  socket = new WebSocket(started.wsUrl);
  socket.on("message", (data) => {
    frames.push(JSON.parse(String(data)));
    arrived();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
});
afterAll(async () => {
  socket?.terminate();
  await started?.stop();
  await dir.cleanup();
});

let probes = 0;

/**
 * Every frame PubSub sends in answer to `raw`: `raw` is followed by a probe request, whose answer
 * comes after any answer to `raw` (both are answered in order), so no answer at all shows as none.
 */
async function answersTo(raw: string): Promise<unknown[]> {
  const probe = `probe-${probes++}`;
  frames.length = 0;
  socket.send(raw);
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: probe, method: "slotUnsubscribe", params: [-1] }));
  const isProbe = (frame: unknown) => (frame as { id?: unknown }).id === probe;
  while (!frames.some(isProbe)) await new Promise<void>((resolve) => (arrived = resolve));
  return frames.filter((frame) => !isProbe(frame));
}

/** The one answer of the chain's JSON-RPC over HTTP to `raw` as a body. */
async function httpAnswerTo(raw: string): Promise<unknown> {
  const response = await fetch(started.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: raw,
  });
  return response.json();
}

const invalidRequest = {
  jsonrpc: "2.0",
  error: { code: RPC_ERROR.invalidRequest, message: "Invalid request" },
  id: null,
};

describe("PubSub frames that are not requests", () => {
  for (const raw of [
    "null",
    "[]",
    "42",
    '"x"',
    "true",
    '{"id":{}}',
    '{"id":[1],"method":"slotSubscribe"}',
    "{}",
  ]) {
    it(`answers ${raw} with -32600 and id null, as JSON-RPC over HTTP does`, async () => {
      expect(await answersTo(raw)).toEqual([invalidRequest]);
      expect(await httpAnswerTo(raw)).toEqual(invalidRequest);
    });
  }

  it("answers an object without a string method, with an id, with -32600 and that id", async () => {
    expect(await answersTo('{"jsonrpc":"2.0","id":7,"method":12}')).toEqual([{ ...invalidRequest, id: 7 }]);
  });

  for (const method of ["__proto__", "constructor", "toString", "hasOwnProperty", "nope"]) {
    it(`answers method ${method} with -32601 Method not found, as JSON-RPC over HTTP does`, async () => {
      const raw = JSON.stringify({ jsonrpc: "2.0", id: 3, method, params: [1] });
      const notFound = {
        jsonrpc: "2.0",
        error: { code: RPC_ERROR.methodNotFound, message: "Method not found" },
        id: 3,
      };
      expect(await answersTo(raw)).toEqual([notFound]);
      expect(await httpAnswerTo(raw)).toEqual(notFound);
    });
  }

  it("still answers no notification (a request without id), such as web3.js's keep-alive ping", async () => {
    expect(await answersTo('{"jsonrpc":"2.0","method":"ping"}')).toEqual([]);
    expect(socket.readyState).toBe(WebSocket.OPEN);
  });
});

// The subscriptions added for logs, programs and roots (and signature configs), with hostile params.
describe("PubSub subscribe methods under hostile params", () => {
  const address = fc.constantFrom(
    "11111111111111111111111111111111",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    "So11111111111111111111111111111111111111112",
  );
  const scalar = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant("1".repeat(3_000)),
  );
  const filter = fc.oneof(
    fc.record({ dataSize: fc.oneof(fc.integer(), scalar) }),
    fc.record({
      memcmp: fc.record(
        {
          offset: fc.oneof(fc.integer(), scalar),
          bytes: fc.oneof(address, scalar),
          encoding: fc.oneof(fc.constantFrom("base58", "base64"), scalar),
        },
        { requiredKeys: [] },
      ),
    }),
    scalar,
  );
  const config = fc.record(
    {
      encoding: fc.oneof(fc.constantFrom("base64", "base58", "jsonParsed", "base64+zstd"), scalar),
      commitment: fc.oneof(fc.constantFrom("processed", "confirmed", "finalized"), scalar),
      filters: fc.oneof(fc.array(filter, { maxLength: 6 }), scalar),
      dataSlice: fc.oneof(fc.record({ offset: fc.integer(), length: fc.integer() }), scalar),
      enableReceivedNotification: fc.oneof(fc.boolean(), scalar),
    },
    { requiredKeys: [] },
  );
  const logsFilter = fc.oneof(
    fc.constantFrom("all", "allWithVotes"),
    fc.record({ mentions: fc.oneof(fc.array(fc.oneof(address, scalar), { maxLength: 3 }), scalar) }),
    scalar,
  );
  const request = fc.oneof(
    fc.record({
      method: fc.constant("logsSubscribe"),
      params: fc.tuple(logsFilter, fc.oneof(config, scalar)),
    }),
    fc.record({
      method: fc.constant("programSubscribe"),
      params: fc.tuple(fc.oneof(address, scalar), fc.oneof(config, scalar)),
    }),
    fc.record({ method: fc.constant("rootSubscribe"), params: fc.array(scalar, { maxLength: 2 }) }),
    fc.record({
      method: fc.constant("signatureSubscribe"),
      params: fc.tuple(fc.constant("1".repeat(64)), fc.oneof(config, scalar)),
    }),
    fc.record({
      method: fc.constantFrom("logsUnsubscribe", "programUnsubscribe", "rootUnsubscribe"),
      params: fc.array(fc.oneof(fc.integer(), scalar), { maxLength: 2 }),
    }),
  );

  it("answers each with a subscription, a boolean or -32602, and keeps the socket open", async () => {
    let id = 1_000;
    await fc.assert(
      fc.asyncProperty(request, async ({ method, params }) => {
        const [answer] = await answersTo(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })).then(
          (all) => all.filter((frame) => (frame as { id?: unknown }).id === id),
        );
        const { result, error } = answer as { result?: unknown; error?: { code: number } };
        if (error)
          expect(error.code, JSON.stringify({ method, params }).slice(0, 300)).toBe(RPC_ERROR.invalidParams);
        else expect(["number", "boolean"]).toContain(typeof result);
        if (typeof result === "number" && method.endsWith("Subscribe")) {
          await answersTo(
            JSON.stringify({
              jsonrpc: "2.0",
              id: ++id,
              method: method.replace("Subscribe", "Unsubscribe"),
              params: [result],
            }),
          );
        }
      }),
      { numRuns: 300 },
    );
    expect(socket.readyState).toBe(WebSocket.OPEN);
  }, 120_000);
});
