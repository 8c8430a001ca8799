/**
 * Hostile fuzz over every operation both OpenAPI documents describe (issue 15), against a real
 * server: path parameters, query parameters (repeated, unknown, huge, unicode, numbers past 2^64,
 * negative, NaN), JSON bodies (malformed, huge, deeply nested, wrongly typed) and content types. Every
 * answer comes within 2 s, none is a 5xx, every non-2xx is a `{code,msg}` of two strings, and the
 * server still answers its health check afterwards. The per-API fuzzes (test/markets/fuzz.test.ts,
 * test/trading/fuzz.test.ts) go deeper into each route's own parameters; this one is driven by the
 * documents, so a new operation is fuzzed the moment it is documented.
 */
import { generateKeyPairSigner } from "@solana/kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { CASH_MINT, USDC_MINT } from "../../src/contract/markets.js";
import { HTTP_LIMITS } from "../../src/limits.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** An answer still missing after this long hangs: the fetch is aborted and the test fails (no time is asserted). */
const HANG_MS = 15_000;
/** Hostile requests per documented operation; about 30 operations, so about 1,200 requests in all. */
const RUNS_PER_OPERATION = 40;

interface Operation {
  method: "GET" | "POST";
  /** The documented path, `{name}` for each path parameter. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Top-level properties of the JSON body, for operations that take one. */
  bodyProperties?: string[];
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string }[];
        requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
      }
    >
  >;
}

let t: TestServer;
/**
 * Valid values by parameter (and body property) name, so that most requests carry a few hostile
 * inputs among valid ones and get past validation into the handlers (a firm `/order` with
 * `userPublicKey` issues a transaction and reserves output).
 */
let good: Record<string, string[]>;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue(), settings: { DEMO_CATALOGUE: "true" } });
  const catalog = t.server.catalog.require();
  const user = await generateKeyPairSigner();
  const markets = catalog.markets.slice(0, 3);
  const marketTickers = markets.map((market) => market.record.ticker);
  const eventTickers = catalog.events.slice(0, 2).map((event) => event.record.ticker);
  // Both settlement rails' mints: the CASH rail's are looked up and traded as the USDC rail's are.
  const mints = markets.flatMap((market) =>
    market.addresses.rails.flatMap((rail) => [rail.yesMint, rail.noMint]),
  );
  const now = Math.floor(Date.now() / 1000);
  good = {
    event_id: eventTickers,
    event_ticker: eventTickers,
    eventTicker: eventTickers,
    milestoneIds: ["4a2ec3c6-6496-e23f-8d2e-6048957b6f89", "a,b"],
    minimumStartDate: ["2026-11-01T00:00:00Z"],
    wallet: [user.address],
    minAmount: ["0", "1000000"],
    sortBy: ["createdAt", "amount"],
    sortOrder: ["asc", "desc"],
    depth: ["0", "3"],
    category: ["Sports", "Climate and Weather"],
    tags: ["Basketball"],
    ticker: [...marketTickers, ...eventTickers],
    market_ticker: marketTickers,
    series_ticker: catalog.events.slice(0, 2).map((event) => event.record.seriesTicker),
    mint: mints,
    tickers: marketTickers,
    addresses: mints,
    mints,
    inputMint: [USDC_MINT, CASH_MINT, WRAPPED_SOL_MINT, ...mints.slice(0, 1), ...mints.slice(-1)],
    outputMint: [WRAPPED_SOL_MINT, USDC_MINT, CASH_MINT, ...mints.slice(0, 1), ...mints.slice(-1)],
    amount: ["1000000", "1", "250000000"],
    userPublicKey: [user.address],
    slippageBps: ["50", "auto"],
    limit: ["1", "10"],
    startTs: [String(now - 3_600)],
    endTs: [String(now)],
    minTs: [String(now - 3_600)],
    maxTs: [String(now)],
    periodInterval: ["1", "60"],
    percentiles: ["5000", "2500,5000,7500"],
    withNestedMarkets: ["true"],
    status: ["active"],
  };
}, 120_000);
afterAll(async () => t?.stop());

/** The operations of one document, as documented. */
async function operationsOf(document: string): Promise<Operation[]> {
  const response = await fetch(`${t.url}${document}`);
  expect(response.status).toBe(200);
  const { paths } = (await response.json()) as OpenApiDocument;
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = operation.parameters ?? [];
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      operations.push({
        method: method.toUpperCase() as Operation["method"],
        path,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name),
        ...(operation.requestBody ? { bodyProperties: Object.keys(schema?.properties ?? {}) } : {}),
      });
    }
  }
  return operations;
}

const NUMBERS = [
  "18446744073709551615", // 2^64 - 1
  "18446744073709551616",
  "340282366920938463463374607431768211457",
  "9007199254740993",
  "-1",
  "-9223372036854775809",
  "0",
  "-0",
  "1e308",
  "1e309",
  "-1e-400",
  "NaN",
  "-NaN",
  "Infinity",
  "0x10",
  "1_000",
  "+1",
  " 1",
  "1.5",
  "00001",
];
const ODD = [
  "",
  " ",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "..",
  "../..",
  "%00",
  "%ZZ",
  "%E0%A4%A",
  "\u0000",
];

/** Big strings, up to 100 KB: one character or a short unicode run, repeated. */
const huge = fc
  .tuple(fc.integer({ min: 1_000, max: 100_000 }), fc.constantFrom("a", "9", "é", "😀", "%", "-", "\u202e"))
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)));

/** Hostile values of every kind but huge (which only the URL limit sees, as a 431). */
const hostile = fc.oneof(
  { arbitrary: fc.constantFrom(...NUMBERS, ...ODD), weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 20 }), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String), weight: 2 },
  { arbitrary: fc.double().map(String), weight: 1 },
);
/** A hostile value, now and then a huge one. */
const value = fc.oneof({ arbitrary: hostile, weight: 15 }, { arbitrary: huge, weight: 1 });

/** A valid value for `name` when there is one, else a hostile one; read when generated (`good` exists only then). */
const goodFor = (name: string) =>
  fc.constant(null).chain(() => (good[name] ? fc.constantFrom(...(good[name] as string[])) : value));

/** One query parameter's occurrences: usually one value, sometimes repeated. */
const occurrences = fc.oneof(
  { arbitrary: value.map((v) => [v]), weight: 4 },
  { arbitrary: fc.array(value, { minLength: 2, maxLength: 4 }), weight: 1 },
);

/**
 * Up to three documented parameters hostile (possibly repeated); the others valid, where a valid value
 * is known, or left out; and now and then unknown ones.
 */
function queryFor(operation: Operation) {
  const names = operation.queryParams;
  const documented = fc.tuple(
    ...names.map((name) =>
      fc.record({ hostile: occurrences, valid: goodFor(name), keep: fc.integer({ min: 0, max: 5 }) }),
    ),
  );
  const unknown = fc.array(fc.tuple(fc.oneof(fc.constant("x"), fc.string({ maxLength: 12 })), occurrences), {
    maxLength: 2,
  });
  return fc
    .tuple(
      // Sometimes none: a valid request must get through, to reach what lies behind validation.
      fc.oneof(
        { arbitrary: fc.constant([] as string[]), weight: 1 },
        { arbitrary: fc.subarray(names, { maxLength: Math.min(3, names.length) }), weight: 3 },
      ),
      documented,
      unknown,
    )
    .map(([mutated, values, extra]) =>
      [
        ...names.flatMap((name, i) => {
          const { hostile, valid, keep } = values[i] as { hostile: string[]; valid: string; keep: number };
          if (mutated.includes(name)) return hostile.map((v) => [name, v] as const);
          return good[name] && keep > 0 ? [[name, valid] as const] : [];
        }),
        ...extra.flatMap(([name, occurring]) => occurring.map((v) => [name, v] as const)),
      ]
        .map(([name, v]) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`)
        .join("&"),
    );
}

/** A path parameter: valid, hostile (encoded), or an odd string a client might send as is. */
const segmentFor = (name: string) =>
  fc.oneof(
    { arbitrary: goodFor(name).map(encodeURIComponent), weight: 3 },
    { arbitrary: value.map(encodeURIComponent), weight: 3 },
    { arbitrary: fc.constantFrom("..", "%2e%2e", "%2F", "%00", "%ZZ", "a%20b", "x".repeat(300)), weight: 1 },
  );

/** A JSON value with hostile leaves, shallow enough to generate quickly. */
const jsonLeaf = fc.oneof(
  value,
  fc.double(),
  fc.integer(),
  fc.constantFrom(null, true, false, 2 ** 64, -(2 ** 53) - 1, Number.MAX_VALUE),
);
const jsonValue = fc.oneof(
  jsonLeaf,
  fc.array(jsonLeaf, { maxLength: 8 }),
  fc.dictionary(fc.string({ maxLength: 8 }), jsonLeaf, { maxKeys: 4 }),
);

/** A body property: valid (as a list where the API takes one), or hostile. */
const propertyFor = (name: string) =>
  fc.oneof(
    {
      arbitrary: goodFor(name).map((v) => (["tickers", "mints", "addresses"].includes(name) ? [v] : v)),
      weight: 2,
    },
    { arbitrary: jsonValue, weight: 3 },
  );

function bodyFor(operation: Operation) {
  const properties = operation.bodyProperties ?? [];
  const names = [...properties, "__proto__", "constructor", "x"];
  const record = fc
    .tuple(
      fc.tuple(...properties.map((name) => fc.option(propertyFor(name), { nil: undefined }))),
      fc.dictionary(fc.constantFrom(...names), jsonValue, { maxKeys: 2 }),
    )
    .map(([values, extra]) =>
      JSON.stringify({
        ...Object.fromEntries(
          properties.map((name, i) => [name, values[i]]).filter(([, v]) => v !== undefined),
        ),
        ...extra,
      }),
    );
  return fc.oneof(
    { arbitrary: record, weight: 6 },
    // Arrays where an object is expected.
    { arbitrary: fc.array(jsonValue, { maxLength: 20 }).map((a) => JSON.stringify(a)), weight: 1 },
    {
      arbitrary: fc
        .integer({ min: 100, max: 12_000 })
        .map((n) => JSON.stringify(Object.fromEntries(names.map((name) => [name, Array(n).fill("x")])))),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(
        "",
        "{",
        "[",
        '{"a":',
        "{'a':1}",
        '{"a":1}garbage',
        "nul",
        "[]]",
        '"unterminated',
        "1e99999",
        "\u0000",
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
      ),
      weight: 2,
    },
    // Deep nesting, and bodies around and past the body limit.
    {
      arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
      weight: 1,
    },
    { arbitrary: huge.map((s) => JSON.stringify({ [names[0] as string]: s })), weight: 1 },
  );
}

/** Mostly JSON, so bodies reach the parser and the handlers; the rest wrong. */
const contentType = fc.oneof(
  {
    arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8", "APPLICATION/JSON"),
    weight: 6,
  },
  {
    arbitrary: fc.constantFrom(
      "application/json; charset=latin1",
      "application/vnd.api+json",
      "text/plain",
      "text/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      ";;;",
      "",
    ),
    weight: 2,
  },
);

interface Sent {
  method: string;
  url: string;
  contentType?: string;
  body?: string;
}

/** Sends a request and checks the answer: no hang, no 5xx, a `{code,msg}` body when not a 2xx. */
async function expectSafeAnswer(sent: Sent): Promise<void> {
  const response = await fetch(sent.url, {
    method: sent.method,
    headers: sent.contentType === undefined ? {} : { "content-type": sent.contentType },
    ...(sent.body === undefined ? {} : { body: sent.body }),
    signal: AbortSignal.timeout(HANG_MS),
  });
  const text = await response.text();
  const what = `${sent.method} ${sent.url.slice(0, 300)} [${sent.contentType ?? "-"}] ${(sent.body ?? "").slice(0, 300)} -> ${response.status} ${text.slice(0, 300)}`;
  expect(response.status, what).toBeLessThan(500);
  if (response.status >= 200 && response.status < 300) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  const { reason, ...error } = body as { reason?: unknown };
  expect(error, what).toEqual({ code: expect.any(String), msg: expect.any(String) });
  // The venue's own code behind a reference code, where the route answers in the reference's.
  if (reason !== undefined) expect(reason, what).toEqual(expect.any(String));
}

async function fuzzDocument(document: string, minimumOperations: number): Promise<void> {
  const operations = await operationsOf(document);
  expect(operations.length).toBeGreaterThanOrEqual(minimumOperations);
  for (const operation of operations) {
    const segments = fc.tuple(...operation.pathParams.map(segmentFor));
    const body = operation.bodyProperties ? bodyFor(operation) : fc.constant(undefined);
    const type = operation.bodyProperties ? contentType : fc.constant(undefined);
    await fc.assert(
      fc.asyncProperty(segments, queryFor(operation), body, type, async (values, query, payload, ct) => {
        let path = operation.path;
        operation.pathParams.forEach((name, i) => {
          path = path.replace(`{${name}}`, values[i] as string);
        });
        await expectSafeAnswer({
          method: operation.method,
          url: `${t.url}${path}${query ? `?${query}` : ""}`,
          ...(ct === undefined ? {} : { contentType: ct }),
          ...(payload === undefined ? {} : { body: payload }),
        });
      }),
      // A failure is reported as found: shrinking a real server's answers would cost more than it tells.
      { numRuns: RUNS_PER_OPERATION, endOnFailure: true },
    );
  }
}

describe("hostile fuzz of every documented operation", () => {
  it("/api/v1/openapi.json: in time, never a 5xx, every error {code,msg}", async () => {
    await fuzzDocument("/api/v1/openapi.json", 20);
  }, 90_000);

  it("/openapi.json: in time, never a 5xx, every error {code,msg}", async () => {
    await fuzzDocument("/openapi.json", 7);
  }, 90_000);

  it("the wrong method on every documented path, and a body over the limit on every POST", async () => {
    for (const document of ["/api/v1/openapi.json", "/openapi.json"]) {
      for (const operation of await operationsOf(document)) {
        const path = operation.path.replace(/\{[^}]+\}/g, "x");
        for (const method of ["PUT", "PATCH", "DELETE", operation.method === "GET" ? "POST" : "GET"]) {
          await expectSafeAnswer({ method, url: `${t.url}${path}` });
        }
        if (operation.method === "POST") {
          const body = JSON.stringify({ x: "a".repeat(HTTP_LIMITS.apiBodyBytes) });
          await expectSafeAnswer({
            method: "POST",
            url: `${t.url}${path}`,
            contentType: "application/json",
            body,
          });
        }
      }
    }
  });

  it("leaves the server answering its health check", async () => {
    const response = await fetch(`${t.url}/health-check`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok");
  });
});
