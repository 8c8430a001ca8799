/**
 * PubSub answers every frame that is not a request the way Agave (and our own JSON-RPC over HTTP)
 * does: a frame that is not a request object gets -32600 Invalid request with id null, and a method
 * that is not one of PubSub's own, such as `__proto__` or `constructor`, gets -32601 Method not found.
 * A notification (a request without id, such as web3.js's keep-alive ping) still gets no answer.
 */
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
