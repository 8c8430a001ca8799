/**
 * Hostile fuzz of the sandbox chain's JSON-RPC (issue 15): every method it implements, called over
 * real HTTP with random and hostile params (huge strings, deeply nested arrays, wrong types, numbers
 * at and past u64's max, base58 and base64 garbage, huge batches). The process never crashes, and
 * every answer is a well-formed JSON-RPC result or error within 2 s.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import { createRpcMethods } from "../../src/chain/sandbox/rpc-methods.js";
import { RPC_LIMITS } from "../../src/limits.js";
import { startTestChain, TEST_MARKETS, type TestChain } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";

/** A call still unanswered after this long hangs: the fetch is aborted and the test fails (no time is asserted). */
const HANG_MS = 15_000;

const dir = tempDir();
let started: TestChain;
let methods: string[];

beforeAll(async () => {
  started = await startTestChain({ DATA_DIR: dir.dir });
  methods = [...createRpcMethods(started.chain).keys()];
});
afterAll(async () => {
  await started?.stop();
  await dir.cleanup();
});

/** JSON text spliced in as it is: nesting deeper than JSON.stringify would take. */
class RawJson {
  constructor(readonly text: string) {}
}

function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${toJson(item)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const address = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => encodeBase58(bytes));
const signature = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((bytes) => encodeBase58(bytes));
const known = fc.constantFrom(
  TEST_MARKETS[0]!.yesMint,
  TEST_MARKETS[0]!.marketLedger,
  "11111111111111111111111111111111",
  "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  "So11111111111111111111111111111111111111112",
);
const base58Garbage = fc.oneof(
  fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 120 }),
  fc.integer({ min: 1_000, max: 60_000 }).map((n) => "z".repeat(n)),
  fc.string({
    unit: fc.constantFrom(...ALPHABET, "0", "O", "I", "l", "+", "/", "="),
    minLength: 30,
    maxLength: 100,
  }),
);
const transaction = fc.oneof(
  fc.uint8Array({ maxLength: 1_300 }).map((bytes) => Buffer.from(bytes).toString("base64")),
  fc.uint8Array({ maxLength: 1_300 }).map((bytes) => encodeBase58(bytes)),
);
const hugeString = fc.integer({ min: 10_000, max: 120_000 }).map((n) => "A".repeat(n));
const number = fc.oneof(
  fc.constantFrom(0, -1, 1, 2 ** 53 - 1, 2 ** 53, 2 ** 64 - 1, 2 ** 64, 1e308, -1e308, 0.5, -0),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const deep = fc.integer({ min: 10, max: 50_000 }).map((n) => new RawJson(`${"[".repeat(n)}${"]".repeat(n)}`));
const deepObject = fc
  .integer({ min: 10, max: 20_000 })
  .map((n) => new RawJson(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`));
const scalar = fc.oneof(
  address,
  known,
  signature,
  base58Garbage,
  transaction,
  number,
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.boolean(),
  fc.constant(null),
);
// getProgramAccounts' filters: Agave's three kinds, with hostile offsets, sizes and bytes.
const filter = fc.oneof(
  fc.constant("tokenAccountState"),
  fc.record({ dataSize: fc.oneof(fc.constantFrom(82, 165), number, scalar) }),
  fc.record({
    memcmp: fc.record(
      {
        offset: fc.oneof(fc.constantFrom(0, 32), number, scalar),
        bytes: fc.oneof(address, known, base58Garbage, hugeString, scalar),
        encoding: fc.oneof(fc.constantFrom("base58", "base64"), scalar),
      },
      { requiredKeys: [] },
    ),
  }),
  scalar,
);
const config = fc.record(
  {
    encoding: fc.oneof(
      fc.constantFrom("base64", "base58", "jsonParsed", "base64+zstd", "json", "binary", ""),
      scalar,
      deep,
    ),
    commitment: fc.oneof(fc.constantFrom("processed", "confirmed", "finalized"), scalar),
    dataSlice: fc.oneof(fc.record({ offset: number, length: number }), scalar, deep),
    maxSupportedTransactionVersion: fc.oneof(fc.constantFrom(0, 1, -1), scalar),
    minContextSlot: number,
    skipPreflight: fc.oneof(fc.boolean(), scalar),
    sigVerify: fc.oneof(fc.boolean(), scalar),
    replaceRecentBlockhash: fc.oneof(fc.boolean(), scalar),
    mint: fc.oneof(address, known, scalar),
    programId: fc.oneof(known, scalar),
    // getProgramAccounts, getSupply, getLargestAccounts, getVoteAccounts, getInflationReward.
    filters: fc.oneof(fc.array(filter, { maxLength: 6 }), scalar, deep),
    withContext: fc.oneof(fc.boolean(), scalar),
    filter: fc.oneof(fc.constantFrom("circulating", "nonCirculating"), scalar),
    excludeNonCirculatingAccountsList: fc.oneof(fc.boolean(), scalar),
    votePubkey: fc.oneof(address, scalar),
    epoch: number,
  },
  { requiredKeys: [] },
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: config },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: deepObject },
  { weight: 2, arbitrary: fc.array(fc.oneof(address, known, signature, scalar), { maxLength: 300 }) },
  { weight: 1, arbitrary: fc.array(signature, { minLength: 250, maxLength: 300 }) },
);
const params: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.array(value, { maxLength: 4 }) },
  { weight: 1, arbitrary: scalar },
  { weight: 1, arbitrary: config },
  { weight: 1, arbitrary: deep },
);

interface Answer {
  status: number;
  body: unknown;
}

async function send(body: string): Promise<Answer> {
  const response = await fetch(started.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(HANG_MS),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) };
}

/** Asserts one JSON-RPC response object: the id it answers, and exactly a result or an error. */
function expectWellFormed(answer: unknown, id: unknown): void {
  expect(answer).toBeTypeOf("object");
  const { jsonrpc, id: answeredId, result, error, ...rest } = answer as Record<string, unknown>;
  expect(rest).toEqual({});
  expect(jsonrpc).toBe("2.0");
  expect(answeredId === id || answeredId === null).toBe(true);
  expect((result === undefined) !== (error === undefined)).toBe(true);
  if (error !== undefined) {
    const { code, message, data } = error as Record<string, unknown>;
    expect(Number.isInteger(code)).toBe(true);
    expect(typeof message).toBe("string");
    expect((message as string).length).toBeLessThan(1_000);
    expect(data === undefined || typeof data === "object").toBe(true);
    // Internal errors would mean an input reached code that did not expect it.
    expect(code, `internal error: ${message}`).not.toBe(-32603);
  }
}

describe("every JSON-RPC method under hostile params", () => {
  it("answers each call with a well-formed result or error within 2 s, and keeps running", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...methods),
        params,
        fc.integer({ min: 0, max: 1e9 }),
        async (method, p, id) => {
          const body = toJson({ jsonrpc: "2.0", id, method, params: p });
          const answer = await send(body);
          if (Buffer.byteLength(body) > RPC_LIMITS.bodyBytes) {
            expect(answer.status).toBe(413);
            expectWellFormed(answer.body, null);
            return;
          }
          expect(answer.status).toBe(200);
          expectWellFormed(answer.body, id);
        },
      ),
      { numRuns: 1_500 },
    );
    for (const method of methods) {
      // Every method also with no params at all, and with params that are not an array.
      for (const p of [undefined, null, {}, "x", 1]) {
        const answer = await send(
          toJson({ jsonrpc: "2.0", id: 7, method, ...(p === undefined ? {} : { params: p }) }),
        );
        expectWellFormed(answer.body, 7);
      }
    }
    expect((await send(toJson({ jsonrpc: "2.0", id: 1, method: "getHealth" }))).body).toEqual({
      jsonrpc: "2.0",
      result: "ok",
      id: 1,
    });
  }, 180_000);

  it("answers batches of any size and content: one error past the limit, else one answer per call", async () => {
    const call = fc.oneof(
      { weight: 6, arbitrary: fc.record({ method: fc.constantFrom(...methods), params }) },
      { weight: 1, arbitrary: scalar },
      { weight: 1, arbitrary: fc.record({ jsonrpc: scalar, method: scalar, id: scalar }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 400 }), async (calls) => {
        const batch = calls.map((item, i) =>
          item !== null && typeof item === "object" && "params" in item
            ? { jsonrpc: "2.0", id: i, ...item }
            : item,
        );
        const body = toJson(batch);
        const answer = await send(body);
        if (Buffer.byteLength(body) > RPC_LIMITS.bodyBytes) {
          expect(answer.status).toBe(413);
          return;
        }
        expect(answer.status).toBe(200);
        if (batch.length === 0 || batch.length > RPC_LIMITS.batchCalls) {
          expectWellFormed(answer.body, null);
          expect((answer.body as { error: { code: number } }).error.code).toBe(-32600);
          return;
        }
        const answers = answer.body as unknown[];
        expect(answers).toHaveLength(batch.length);
        answers.forEach((item, i) => {
          const { id } = (batch[i] ?? {}) as { id?: unknown };
          expectWellFormed(item, typeof id === "string" || typeof id === "number" ? id : null);
        });
      }),
      { numRuns: 150 },
    );
  }, 180_000);

  it("answers garbage bodies with a parse error", async () => {
    const garbage = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
      fc.constantFrom("", "[", "{", '{"jsonrpc":"2.0"', "]", "nul", "1e99999", `${"[".repeat(100_000)}`),
    );
    await fc.assert(
      fc.asyncProperty(garbage, async (body) => {
        const answer = await send(body);
        // Garbage that happens to be JSON (a number, a string, an array) is answered as requests are.
        if (Array.isArray(answer.body)) {
          for (const item of answer.body) expectWellFormed(item, null);
        } else {
          expectWellFormed(answer.body, null);
        }
      }),
      { numRuns: 300 },
    );
    const answer = await send(randomBytes(64).toString("latin1"));
    expect((answer.body as { error: { code: number } }).error.code).toBe(-32700);
  }, 120_000);
});

// Account cheatcodes (development): params shaped like surfpool's updates, their fields hostile.
describe("account cheatcodes under hostile params", () => {
  const field = fc.oneof(number, scalar, hugeString, deep, address, known);
  const hex = fc.oneof(
    fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes).toString("hex")),
    fc.string({ unit: fc.constantFrom(..."0123456789abcdefgxX "), maxLength: 200 }),
  );
  const accountUpdate = fc.record(
    {
      lamports: field,
      data: fc.oneof(hex, field),
      owner: fc.oneof(address, known, base58Garbage, scalar),
      executable: fc.oneof(fc.boolean(), scalar),
      rentEpoch: field,
    },
    { requiredKeys: [] },
  );
  const authority = fc.oneof(address, fc.constant("null"), base58Garbage, scalar);
  const tokenUpdate = fc.record(
    {
      amount: field,
      delegate: authority,
      state: fc.oneof(fc.constantFrom("uninitialized", "initialized", "frozen", "closed"), scalar),
      delegatedAmount: field,
      closeAuthority: authority,
    },
    { requiredKeys: [] },
  );
  const target = fc.oneof({ weight: 4, arbitrary: address }, known, base58Garbage, scalar);
  const call = fc.oneof(
    fc.tuple(fc.constant("surfnet_setAccount"), fc.tuple(target, fc.oneof(accountUpdate, value))),
    fc.tuple(
      fc.constant("surfnet_setTokenAccount"),
      fc.tuple(
        target,
        fc.oneof(known, address, scalar),
        fc.oneof(tokenUpdate, value),
        fc.oneof(known, scalar),
      ),
    ),
    fc.tuple(
      fc.constant("surfnet_resetAccount"),
      fc.tuple(target, fc.oneof(fc.record({ includeOwnedAccounts: fc.oneof(fc.boolean(), scalar) }), value)),
    ),
  );

  it("answers each with a result or -32602, never an internal error, and keeps running", async () => {
    await fc.assert(
      fc.asyncProperty(call, fc.integer({ min: 0, max: 1e9 }), async ([method, p], id) => {
        const body = toJson({ jsonrpc: "2.0", id, method, params: p });
        const answer = await send(body);
        // Not `return expect(...)`: fast-check fails a property whose result is neither undefined nor true.
        if (Buffer.byteLength(body) > RPC_LIMITS.bodyBytes) {
          expect(answer.status).toBe(413);
          return;
        }
        expect(answer.status).toBe(200);
        expectWellFormed(answer.body, id);
      }),
      { numRuns: 400 },
    );
    expect((await send(toJson({ jsonrpc: "2.0", id: 1, method: "getHealth" }))).body).toMatchObject({
      result: "ok",
    });
  }, 180_000);
});
