/**
 * The sandbox chain's JSON-RPC under the "process freezes" attacks (issue 15): base58 text far too
 * long for what it must hold is refused before it is decoded, a body, a batch and the inputs of one
 * call are bounded, and slow heads and bodies are cut at their time limits. Each attack gets its
 * error code while a concurrent cheap request is still answered in under 50 ms.
 */
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressBytes, encodeBase58 } from "../../src/chain/base58.js";
import type { Chain } from "../../src/chain/chain.js";
import { RPC_ERROR } from "../../src/chain/errors.js";
import { decodeWireTransaction } from "../../src/chain/wire.js";
import { ApiError } from "../../src/contract/errors.js";
import { HTTP_LIMITS, RPC_LIMITS, WIRE_LIMITS } from "../../src/limits.js";
import type { Tables } from "../../src/storage/database.js";
import { OrderStatusDesk } from "../../src/trading/routes/get-order-status.js";
import { startTestChain, TEST_MARKETS, type TestChain } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";
import { rawRequest } from "../support/raw-http.js";

const dir = tempDir();
let started: TestChain;
let port: number;

beforeAll(async () => {
  started = await startTestChain(
    { DATA_DIR: dir.dir },
    { limits: { http: { headersTimeoutMs: 600, requestTimeoutMs: 1_500 } } },
  );
  port = Number(new URL(started.rpcUrl).port);
  // Warm up (connections, JIT) so that the measurements below time the attacks, not a cold start.
  for (let round = 0; round < 3; round++) {
    await post(call("getSlot"));
    await post(call("getBalance", ["z".repeat(1_000)]));
    await post(call("sendTransaction", ["2".repeat(2_000)]));
    await post(call("sendTransaction", ["A".repeat(2_000), { encoding: "base64" }]));
    await post(largestBatch());
  }
});
afterAll(async () => {
  await started?.stop();
  await dir.cleanup();
});

interface RpcAnswer {
  status: number;
  body: unknown;
}

async function post(body: unknown): Promise<RpcAnswer> {
  const response = await fetch(started.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function call(method: string, params: unknown[] = [], id: number | string = 1) {
  return { jsonrpc: "2.0", id, method, params };
}

/** The JSON-RPC error of a single answer (fails when it is a result). */
function errorOf(answer: RpcAnswer): { code: number; message: string } {
  const body = answer.body as { error?: { code: number; message: string } };
  expect(body.error, JSON.stringify(body).slice(0, 200)).toBeDefined();
  return body.error as { code: number; message: string };
}

/**
 * Runs `attack` while cheap `getSlot`s are sent beside it, one after another, from the moment it is
 * under way; returns the attack's result and how many probes were answered with a slot. Each probe
 * must be answered, however busy the test machine (no round-trip time is measured here).
 */
async function underAttack<T>(attack: () => Promise<T>): Promise<{ result: T; answered: number }> {
  const running = attack();
  await new Promise((resolve) => setImmediate(resolve));
  let answered = 0;
  for (let i = 0; i < 3; i++) {
    const probe = await post(call("getSlot"));
    expect(typeof (probe.body as { result?: unknown }).result).toBe("number");
    answered += 1;
  }
  return { result: await running, answered };
}

function expectResponsive(measured: { answered: number }): void {
  expect(measured.answered).toBe(3);
}

const hugeAddress = (length: number) => "z".repeat(length);

/** The largest getMultipleAccounts batch under the body limit: 50 calls of 100 addresses. */
function largestBatch() {
  const addresses = Array.from({ length: RPC_LIMITS.multipleAccounts }, (_, i) =>
    i % 2 === 0 ? TEST_MARKETS[0]!.yesMint : "11111111111111111111111111111111",
  );
  return Array.from({ length: 50 }, (_, i) => call("getMultipleAccounts", [addresses], i));
}

describe("base58 text is bounded before it is decoded", () => {
  for (const length of [40_000, 100_000]) {
    it(`refuses a ${length.toLocaleString("en")}-character address to every method that takes one`, async () => {
      const address = hugeAddress(length);
      const measured = await underAttack(() =>
        Promise.all([
          post(call("getBalance", [address])),
          post(call("getAccountInfo", [address])),
          post(call("getTokenSupply", [address])),
          post(call("getTokenAccountBalance", [address])),
          post(call("getTokenAccountsByOwner", [address, { mint: address }])),
          post(call("requestAirdrop", [address, 1])),
          post(call("isBlockhashValid", [address])),
        ]),
      );
      for (const answer of measured.result) {
        expect(answer.status).toBe(200);
        expect(errorOf(answer)).toEqual({
          code: RPC_ERROR.invalidParams,
          message: "Invalid param: WrongSize",
        });
      }
      expectResponsive(measured);
    });
  }

  it("refuses a huge base58 or base64 transaction to sendTransaction and simulateTransaction", async () => {
    const base58 = "2".repeat(100_000);
    const base64 = "A".repeat(100_000);
    const measured = await underAttack(() =>
      Promise.all([
        post(call("sendTransaction", [base58])),
        post(call("simulateTransaction", [base58])),
        post(call("sendTransaction", [base58, { encoding: "base58" }])),
        post(call("sendTransaction", [base64, { encoding: "base64" }])),
        post(call("simulateTransaction", [base64, { encoding: "base64" }])),
        post(call("getFeeForMessage", [base64])),
      ]),
    );
    for (const answer of measured.result) {
      const error = errorOf(answer);
      expect(error.code).toBe(RPC_ERROR.invalidParams);
      expect(error.message).toMatch(/too large: 100000 bytes \(max: encoded\/raw (1684|1644)\/1232\)/);
    }
    expectResponsive(measured);
  });

  it("bounds transactions by WIRE_LIMITS: the longest base58 and base64 pass the length check, one more does not", () => {
    const most = new Uint8Array(WIRE_LIMITS.transactionBytes).fill(255);
    expect(() => decodeWireTransaction(encodeBase58(most), "base58")).not.toThrow();
    expect(() => decodeWireTransaction(Buffer.from(most).toString("base64"), "base64")).not.toThrow();
    const over = new Uint8Array(WIRE_LIMITS.transactionBytes + 1).fill(255);
    expect(() => decodeWireTransaction(encodeBase58(over), "base58")).toThrow(/too large/);
    expect(() => decodeWireTransaction(Buffer.from(over).toString("base64"), "base64")).toThrow(/too large/);
    expect(() => decodeWireTransaction("z".repeat(WIRE_LIMITS.transactionBase58Chars + 1), "base58")).toThrow(
      /too large/,
    );
  });

  it("refuses long signatures to getSignatureStatuses and getTransaction", async () => {
    const signature = "z".repeat(16_000);
    const measured = await underAttack(() =>
      Promise.all([
        post(call("getSignatureStatuses", [[signature]])),
        post(call("getTransaction", [signature])),
      ]),
    );
    for (const answer of measured.result) {
      expect(errorOf(answer)).toEqual({ code: RPC_ERROR.invalidParams, message: "Invalid param: WrongSize" });
    }
    expectResponsive(measured);
  });

  it("refuses a 16,000-character signature to GET /order-status before decoding it", async () => {
    // The desk checks the signature before touching storage or the chain.
    const desk = new OrderStatusDesk({ db: {} as Kysely<Tables>, chain: {} as Chain });
    await desk.status("not a signature").catch(() => {});
    // The stubs stand for storage and the chain: they are never reached.
    const error = await desk.status("z".repeat(16_000)).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("invalid_signature");
  });

  it("refuses a 100,000-character address to the transaction compiler by its length, before decoding it", () => {
    // The length refusal, not one of decoding ("decodes to more than …").
    expect(() => addressBytes(hugeAddress(100_000))).toThrow(/must be 32 to 44 base58 characters/);
  });
});

describe("bodies, batches and the inputs of one call are bounded", () => {
  it("refuses 10,000 addresses to getMultipleAccounts, and a batch of 10,000 such calls", async () => {
    // 5,000 addresses: 10,000 would already be refused by the body limit.
    const addresses = Array.from({ length: 5_000 }, () => "11111111111111111111111111111111");
    const single = await post(call("getMultipleAccounts", [addresses]));
    expect(errorOf(single)).toEqual({
      code: RPC_ERROR.invalidParams,
      message: `Too many inputs provided; max ${RPC_LIMITS.multipleAccounts}`,
    });
    // 10,000 calls do not even fit in the body limit; 2,000 do, and are refused as a batch.
    const batch = (calls: number) =>
      Array.from({ length: calls }, (_, i) =>
        call("getMultipleAccounts", [["11111111111111111111111111111111"]], i),
      );
    const measured = await underAttack(() => Promise.all([post(batch(10_000)), post(batch(2_000))]));
    const [tooLarge, tooMany] = measured.result;
    expect(tooLarge.status).toBe(413);
    expect(errorOf(tooLarge)).toEqual({
      code: RPC_ERROR.invalidRequest,
      message: `Invalid request: the body exceeds ${RPC_LIMITS.bodyBytes} bytes`,
    });
    expect(tooMany.status).toBe(200);
    expect(tooMany.body).toEqual({
      jsonrpc: "2.0",
      error: {
        code: RPC_ERROR.invalidRequest,
        message: `Invalid request: a batch of 2000 calls exceeds the limit of ${RPC_LIMITS.batchCalls}`,
      },
      id: null,
    });
    expectResponsive(measured);
  });

  it("runs none of a batch over the limit, and all of one at the limit", async () => {
    const recipient = encodeBase58(new Uint8Array(32).fill(7));
    const over = Array.from({ length: RPC_LIMITS.batchCalls + 1 }, (_, i) =>
      call("requestAirdrop", [recipient, 1_000], i),
    );
    expect(errorOf(await post(over)).code).toBe(RPC_ERROR.invalidRequest);
    expect(await started.chain.getBalance(recipient as never)).toBe(0n);
    const full = Array.from({ length: RPC_LIMITS.batchCalls }, (_, i) => call("getSlot", [], i));
    const answers = (await post(full)).body as { id: number; result: number }[];
    expect(answers.map((answer) => answer.id)).toEqual(full.map((request) => request.id));
    expect(answers.every((answer) => typeof answer.result === "number")).toBe(true);
  });

  it("keeps the process responsive through the largest batch that fits: 50 calls of 100 addresses", async () => {
    const measured = await underAttack(() => post(largestBatch()));
    expect((measured.result.body as unknown[]).length).toBe(50);
    expectResponsive(measured);
  });

  it("refuses more than RPC_LIMITS.signatureStatuses signatures in one getSignatureStatuses", async () => {
    const signature = encodeBase58(new Uint8Array(64).fill(9));
    const answer = await post(
      call("getSignatureStatuses", [Array(RPC_LIMITS.signatureStatuses + 1).fill(signature)]),
    );
    expect(errorOf(answer)).toEqual({
      code: RPC_ERROR.invalidParams,
      message: `Too many inputs provided; max ${RPC_LIMITS.signatureStatuses}`,
    });
  });

  it("answers a declared body over RPC_LIMITS.bodyBytes with 413 and a JSON-RPC error, unread", async () => {
    const answer = await rawRequest(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n`,
      // The client goes on sending; the server reads at most a bounded amount more, then cuts.
      { flood: 8 * 1024 * 1024 },
    );
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({
      jsonrpc: "2.0",
      error: {
        code: RPC_ERROR.invalidRequest,
        message: `Invalid request: the body exceeds ${RPC_LIMITS.bodyBytes} bytes`,
      },
      id: null,
    });
    expect(answer.closedAfterMs).toBeLessThan(3_000);
    expect(answer.written).toBeLessThan(8 * 1024 * 1024);
  });

  it("answers a chunked body that grows past the limit with 413 and closes", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const chunked = `${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`;
    const answer = await rawRequest(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked.repeat(5)}`,
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toContain(String(RPC_LIMITS.bodyBytes));
  });
});

describe("every answer outside JSON-RPC is a {code,msg} body", () => {
  it("on JSON-RPC: another method on / is 405, another path 404, a malformed request 400", async () => {
    const get = await fetch(started.rpcUrl);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(await get.json()).toEqual({ code: "method_not_allowed", msg: expect.any(String) });
    const elsewhere = await fetch(new URL("/nowhere", started.rpcUrl), { method: "POST", body: "{}" });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ code: "not_found", msg: expect.any(String) });
    const malformed = await rawRequest(port, "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toEqual({ code: "bad_request", msg: expect.any(String) });
  });

  it("on PubSub: plain HTTP is 426 upgrade_required", async () => {
    const response = await fetch(started.wsUrl.replace(/^ws/, "http"));
    expect(response.status).toBe(426);
    expect(await response.json()).toEqual({ code: "upgrade_required", msg: expect.any(String) });
  });
});

describe("slow requests are cut", () => {
  it("cuts a body sent one byte a second at the request timeout", async () => {
    const answer = await rawRequest(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
      { drip: "[", dripMs: 1_000 },
    );
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "request_timeout" });
    expect(answer.closedAfterMs).toBeLessThan(3_000);
  });

  it("cuts a head sent one byte at a time at the headers timeout, on JSON-RPC and PubSub alike", async () => {
    for (const url of [started.rpcUrl, started.wsUrl]) {
      const answer = await rawRequest(Number(new URL(url).port), "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", {
        drip: "a",
        dripMs: 100,
      });
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body), url).toEqual({ code: "request_timeout", msg: expect.any(String) });
      expect(answer.closedAfterMs).toBeLessThan(2_000);
    }
  });

  it("takes HTTP_LIMITS unless told otherwise", async () => {
    const plainDir = tempDir();
    const plain = await startTestChain({ DATA_DIR: plainDir.dir }, { markets: [] });
    try {
      // A head of 20 KiB is over HTTP_LIMITS.maxHeaderBytes: Node answers 431 by itself.
      const big = `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(HTTP_LIMITS.maxHeaderBytes + 4096)}\r\n\r\n`;
      for (const url of [plain.rpcUrl, plain.wsUrl]) {
        const answer = await rawRequest(Number(new URL(url).port), big);
        expect(answer.status).toBe(431);
        expect(JSON.parse(answer.body), url).toEqual({ code: "headers_too_large", msg: expect.any(String) });
      }
    } finally {
      await plain.stop();
      await plainDir.cleanup();
    }
  });
});
