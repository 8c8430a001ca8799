/**
 * The published API documents (issue 19): both OpenAPI documents pass a real validator, document
 * every route and every code of the error catalogue (and no other), and type query parameters as a
 * client sends them; the AsyncAPI document of the streams validates and describes the frames the
 * streams really send. From each OpenAPI document a client is generated (openapi-typescript), its
 * calls to every operation type-checked (the TypeScript compiler) and made with openapi-fetch against
 * the running server: each answer is one its operation documents, with a body its schema accepts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Parser as AsyncApiParser } from "@asyncapi/parser";
import type { Address } from "@solana/kit";
import { Ajv as AjvDraft7 } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { ERRORS } from "../../src/contract/errors.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { newFundedWallet } from "../support/kit.js";
import { startTestServer, TEST_ANCHOR, type TestServer } from "../support/server.js";
import { demoMint } from "../support/tokens.js";

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Json; explode?: boolean }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; responses?: Record<string, Json> };
}

const VENUE_SEED = "api-documents-test";
const SERIES = "KXHIGHNY";
const dJUP = demoMint(VENUE_SEED, "dJUP");
const DOCUMENTS = { markets: "/api/v1/openapi.json", trade: "/openapi.json" } as const;
type DocumentName = keyof typeof DOCUMENTS;
/** What only the server's plumbing serves: the documents themselves, the docs page and the explorer's page. */
const UNDOCUMENTED =
  /^(\/api\/v1\/openapi\.json|\/openapi\.json|\/asyncapi\.json|\/docs.*|\/\.well-known\/.*|\/|\/favicon\.svg|\/assets\/.*|\/explorer\/.*)$/;

let t: TestServer;
const documents = {} as Record<DocumentName, OpenApi>;
let asyncApi: Json;
/** Real values for the parameters the operations take, by name. */
let samples: {
  event: string;
  market: string;
  mint: string;
  uninitializedMint: string;
  wallet: Address;
  quote: Json;
  intent: Json;
};

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  for (const name of Object.keys(DOCUMENTS) as DocumentName[]) {
    documents[name] = (await (await fetch(`${t.url}${DOCUMENTS[name]}`)).json()) as OpenApi;
  }
  asyncApi = (await (await fetch(`${t.url}/asyncapi.json`)).json()) as Json;
  const events = await t.client.listEvents({
    seriesTickers: [SERIES],
    status: "active",
    withNestedMarkets: true,
  });
  const event = events.events.find((e) => (e.markets?.length ?? 0) >= 5);
  const market = event?.markets?.[0];
  if (!event || !market) throw new Error("the demo catalogue has no active KXHIGHNY event");
  const fresh = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 1 });
  const chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const wallet = await newFundedWallet(t.url, chain, 10_000_000_000n, [[USDC_MINT, 100_000_000n]]);
  const spot = `inputMint=${USDC_MINT}&outputMint=${dJUP}&amount=2000000`;
  samples = {
    event: event.ticker,
    market: market.ticker,
    mint: Object.values(market.accounts)[0]?.yesMint as string,
    uninitializedMint: Object.values(fresh.markets[0]?.accounts ?? {})[0]?.yesMint as string,
    wallet: wallet.address,
    quote: (await (await fetch(`${t.url}/quote?${spot}`)).json()) as Json,
    intent: (await (await fetch(`${t.url}/intent?${spot}`)).json()) as Json,
  };
}, 120_000);
afterAll(async () => t?.stop());

/** Every operation of a document, as `[method, path, operation]`. */
function operations(document: OpenApi): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, string, Operation] => [method, path, operation]),
  );
}

/** Every route of the server's app as `METHOD /path`, read off its router's tree (parameters as `{}`). */
function registeredRoutes(): string[] {
  const prefixes: string[] = [];
  return t.server.app
    .printRoutes({ commonPrefix: false })
    .split("\n")
    .flatMap((line) => {
      const found = /^((?:[│ ] {3})*)[└├]── (.+?)(?: \(([^)]+)\))?$/u.exec(line);
      if (!found?.[2]) return [];
      const depth = (found[1] ?? "").length / 4;
      prefixes[depth] = `${prefixes[depth - 1] ?? ""}${found[2]}`;
      prefixes.length = depth + 1;
      const path = prefixes[depth]!.replace(/:[^/]+/g, "{}");
      return (found[3] ?? "")
        .split(", ")
        .filter((method) => method !== "" && method !== "HEAD")
        .map((method) => `${method} ${path}`);
    });
}

/** The codes an error response allows (its schema's `code` enum). */
function documentedCodes(
  response: { content?: Record<string, { schema: Json }> },
  property: "code" | "reason" = "code",
): string[] {
  const schema = response.content?.["application/json"]?.schema as
    | { properties?: Record<string, { enum?: string[] }> }
    | undefined;
  return schema?.properties?.[property]?.enum ?? [];
}

describe("the OpenAPI documents", () => {
  it.each(Object.keys(DOCUMENTS) as DocumentName[])("%s validates with swagger-parser", async (name) => {
    await expect(SwaggerParser.validate(structuredClone(documents[name]) as never)).resolves.toBeDefined();
    expect(Object.keys(documents[name].components.schemas)).toContain("ErrorResponse");
  });

  it("document every route the server has, the health check, faucet and streams included", () => {
    // Parameters compared by place, not name: the router shows routes sharing a node under one.
    const documented = new Set(
      Object.values(documents).flatMap((document) =>
        operations(document).map(
          ([method, path]) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`,
        ),
      ),
    );
    const routes = registeredRoutes();
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes.filter(
      (route) => !documented.has(route) && !UNDOCUMENTED.test(route.split(" ")[1]!),
    );
    expect(missing).toEqual([]);
    for (const route of ["GET /health-check", "POST /dev/faucet", "GET /api/v1/ws", "GET /quote-stream"])
      expect(documented).toContain(route);
  });

  it("document every code of the catalogue, each at its status, and no other", () => {
    const seen = new Set<string>();
    for (const document of Object.values(documents)) {
      const responses = [
        ...operations(document).flatMap(([, , operation]) => Object.entries(operation.responses)),
        ...Object.values(document.components.responses ?? {}).map((response) => ["", response] as const),
      ];
      for (const [status, response] of responses) {
        for (const code of documentedCodes(response as never)) {
          seen.add(code);
          expect(Object.hasOwn(ERRORS, code), code).toBe(true);
          if (status) expect(String(ERRORS[code as keyof typeof ERRORS].status), code).toBe(status);
        }
        // The venue's own codes a reference code stands for, documented as the body's `reason`.
        for (const reason of documentedCodes(response as never, "reason")) {
          seen.add(reason);
          expect(Object.hasOwn(ERRORS, reason), reason).toBe(true);
        }
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(ERRORS).sort());
  });

  it("publish each operation the reference has under its operationId and tags, and its required parameters as required", () => {
    const reference = JSON.parse(
      readFileSync(fileURLToPath(new URL("../support/dflow-trade-openapi.json", import.meta.url)), "utf8"),
    ) as {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; tags: string[]; parameters?: { name: string; required?: boolean }[] }
        >
      >;
    };
    for (const [path, methods] of Object.entries(reference.paths))
      for (const [method, expected] of Object.entries(methods)) {
        const published = (documents.trade.paths[path] as Record<string, typeof expected> | undefined)?.[
          method
        ];
        expect(published, `${method} ${path}`).toMatchObject({
          operationId: expected.operationId,
          tags: expected.tags,
        });
        const required = (parameters?: { name: string; required?: boolean }[]) =>
          (parameters ?? [])
            .filter((parameter) => parameter.required)
            .map((parameter) => parameter.name)
            .sort();
        expect(required(published?.parameters), `${method} ${path}`).toEqual(
          expect.arrayContaining(required(expected.parameters)),
        );
      }
  });

  it("give each operation its own codes and a stream its upgrade's", () => {
    const event = documents.markets.paths["/api/v1/event/{event_id}"]!.get!;
    expect(documentedCodes(event.responses["404"]!)).toEqual(["event_not_found"]);
    expect(documentedCodes(event.responses["503"]!)).toEqual(["not_ready"]);
    const order = documents.trade.paths["/order"]!.get!;
    expect(documentedCodes(order.responses["400"]!)).toEqual(
      expect.arrayContaining(["invalid_input_mint", "route_not_found", "api_key_in_query"]),
    );
    expect(documentedCodes(order.responses["500"]!)).toEqual(["failed_to_construct_order"]);
    const stream = documents.trade.paths["/quote-stream"]!.get!;
    expect(Object.keys(stream.responses)).toEqual(expect.arrayContaining(["101", "403", "426"]));
    expect(documentedCodes(stream.responses["426"]!)).toEqual(["upgrade_required"]);
  });

  it("type query parameters as a client sends them", () => {
    const parameter = (document: OpenApi, path: string, name: string) =>
      document.paths[path]?.get?.parameters?.find((p) => p.in === "query" && p.name === name);
    const events = (name: string) => parameter(documents.markets, "/api/v1/events", name);
    expect(events("limit")?.schema.type).toBe("integer");
    expect(events("withNestedMarkets")?.schema.type).toBe("boolean");
    expect(events("seriesTickers")).toMatchObject({
      schema: { type: "array" },
      style: "form",
      explode: false,
    });
    const forecast = (name: string) =>
      parameter(
        documents.markets,
        "/api/v1/event/{series_ticker}/{event_id}/forecast_percentile_history",
        name,
      );
    expect(forecast("percentiles")?.schema).toMatchObject({ type: "array", items: { type: "integer" } });
    expect(forecast("percentiles")?.schema.example).toEqual([2500, 5000, 7500]);
    expect(forecast("startTs")?.schema).toMatchObject({ type: "integer", minimum: 0 });
    expect(forecast("periodInterval")?.schema.type).toBe("integer");
    expect(parameter(documents.trade, "/order", "amount")?.schema).toMatchObject({ type: "integer" });
    expect(parameter(documents.trade, "/order", "onlyDirectRoutes")?.schema.type).toBe("boolean");
    expect(parameter(documents.trade, "/order", "inputMint")?.schema.type).toBe("string");
  });

  it("type every trade query parameter as the reference's document does", () => {
    const reference = JSON.parse(
      readFileSync(join(import.meta.dirname, "../support/dflow-trade-openapi.json"), "utf8"),
    ) as OpenApi;
    const components = (reference as unknown as { components: { schemas: Record<string, Json> } }).components;
    // A schema's type, format and alternatives, with references followed and `null` left out.
    const typeOf = (schema: Json | undefined): string => {
      const { $ref, type, format, oneOf, anyOf } = (schema ?? {}) as {
        $ref?: string;
        type?: string | string[];
        format?: string;
        oneOf?: Json[];
        anyOf?: Json[];
      };
      if ($ref) return typeOf(components.schemas[$ref.replace("#/components/schemas/", "")]);
      const alternatives = oneOf ?? anyOf;
      if (alternatives) return `oneOf(${alternatives.map(typeOf).sort().join(",")})`;
      const types = [type ?? []].flat().filter((name) => name !== "null");
      return `${types.join("|")}${format ? `/${format}` : ""}`;
    };
    const differences: string[] = [];
    for (const [route, operations] of Object.entries(reference.paths)) {
      for (const parameter of operations.get?.parameters ?? []) {
        if (parameter.in !== "query") continue;
        const ours = documents.trade.paths[route]?.get?.parameters?.find((p) => p.name === parameter.name);
        if (ours && typeOf(ours.schema) !== typeOf(parameter.schema))
          differences.push(
            `${route} ${parameter.name}: ${typeOf(ours.schema)} vs ${typeOf(parameter.schema)}`,
          );
      }
    }
    expect(differences).toEqual([]);
  });

  it("are linked from the docs page, which shows both", async () => {
    const page = await (await fetch(`${t.url}/docs/`)).text();
    for (const path of Object.values(DOCUMENTS)) expect(page).toContain(path);
    for (const document of Object.values(documents))
      expect(JSON.stringify(document)).toContain("](/asyncapi.json)");
  });

  it("are sent compressed to a client that accepts it (the docs page loads them whole), the same document", async () => {
    for (const [name, path] of Object.entries(DOCUMENTS)) {
      const response = await fetch(`${t.url}${path}`, { headers: { "accept-encoding": "br" } });
      expect(response.headers.get("content-encoding")).toBe("br");
      expect(Number(response.headers.get("content-length"))).toBeLessThan(
        JSON.stringify(documents[name as DocumentName]).length / 4,
      );
      expect(await response.json()).toEqual(documents[name as DocumentName]);
    }
  });

  it("serves the reference page's script whole", async () => {
    const script = await fetch(`${t.url}/docs/js/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    const published = readFileSync("node_modules/@scalar/fastify-api-reference/dist/js/standalone.js");
    expect(Buffer.from(await script.arrayBuffer()).equals(published)).toBe(true);
  });
});

describe("the AsyncAPI document", () => {
  it("validates with the AsyncAPI parser", async () => {
    const diagnostics = await new AsyncApiParser().validate(JSON.stringify(asyncApi));
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    const addresses = Object.values(asyncApi.channels as Record<string, { address: string }>).map(
      (c) => c.address,
    );
    expect(addresses.sort()).toEqual([
      "/api/v1/ws",
      "/book-stream",
      "/priority-fees/stream",
      "/quote-stream",
    ]);
  });

  it("describes the messages the streams take and the frames they send", async () => {
    const ajv = new AjvDraft7({ strict: false });
    ajv.addSchema({ ...asyncApi, $id: "asyncapi" }, "asyncapi");
    const channels = asyncApi.channels as Record<
      string,
      { address: string; messages: Record<string, unknown> }
    >;
    const components = asyncApi.components as { messages: Record<string, { payload: { $ref: string } }> };
    const payload = (name: string) =>
      ajv.compile({ $ref: `asyncapi${components.messages[name]!.payload.$ref}` });
    const sent: Record<string, readonly Json[]> = {
      "/api/v1/ws": [
        { type: "subscribe", channel: "orderbook", tickers: [samples.market] },
        { type: "subscribe", channel: "prices", tickers: [samples.market] },
      ],
      "/quote-stream": [{ op: "subscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT }],
      "/book-stream": [{ op: "subscribe", base_mint: dJUP, quote_mint: USDC_MINT }],
      "/priority-fees/stream": [],
    };
    for (const [id, channel] of Object.entries(channels)) {
      const names = Object.keys(channel.messages);
      const operationsOf = Object.values(asyncApi.operations as Record<string, Json>).filter(
        (operation) => (operation.channel as { $ref: string }).$ref === `#/channels/${id}`,
      );
      const ofAction = (action: string) =>
        operationsOf
          .filter((operation) => operation.action === action)
          .flatMap((operation) =>
            (operation.messages as { $ref: string }[]).map((m) => m.$ref.split("/").at(-1)!),
          );
      const requests = ofAction("receive");
      const frames = ofAction("send");
      expect([...requests, ...frames].sort()).toEqual(names.sort());
      const messages = sent[channel.address] ?? [];
      // What the test sends is what the document says a client sends.
      for (const message of messages)
        expect(
          requests.some((name) => payload(name)(message)),
          JSON.stringify(message),
        ).toBe(true);
      const received = await exchange(channel.address, [...messages.map((m) => JSON.stringify(m)), "{}"]);
      const valid = received.filter((frame) => frames.some((name) => payload(name)(frame)));
      expect(valid, `${channel.address}: ${JSON.stringify(received).slice(0, 500)}`).toEqual(received);
      // Its own frames, not only the refusal of the stray "{}".
      expect(
        received.some((frame) => frame.type !== "bad_request"),
        channel.address,
      ).toBe(true);
      expect(received.filter((frame) => frame.type === "bad_request")).toHaveLength(1);
    }
  }, 30_000);
});

/**
 * Opens `address`, sends `messages` and collects frames until the last message's answer and at least
 * one other frame have come (bounded by time).
 */
async function exchange(address: string, messages: readonly string[]): Promise<Json[]> {
  const socket = new WebSocket(`${t.url.replace("http", "ws")}${address}`);
  const received: Json[] = [];
  try {
    // Listening from the start: a stream may send its first frame with the upgrade's answer.
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${address}: ${JSON.stringify(received)}`)), 15_000);
      socket.on("message", (data) => {
        received.push(JSON.parse(String(data)) as Json);
        const refused = received.some((frame) => frame.type === "bad_request");
        if (refused && received.some((frame) => frame.type !== "bad_request")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    for (const message of messages) socket.send(message);
    await done;
  } finally {
    socket.close();
  }
  return received;
}

/** Generates, type-checks and runs a client per document. */
describe("clients generated from the OpenAPI documents", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  let directory: string;
  let diagnostics: string[];

  beforeAll(async () => {
    directory = mkdtempSync(join(root, "test", ".generated-clients-"));
    const files: string[] = [];
    for (const name of Object.keys(DOCUMENTS) as DocumentName[]) {
      const types = astToString(await openapiTS(structuredClone(documents[name]) as never));
      writeFileSync(join(directory, `${name}-schema.d.ts`), types);
      const file = join(directory, `${name}-calls.ts`);
      writeFileSync(file, callsModule(name, documents[name]));
      files.push(file);
    }
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
    });
    diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
  }, 120_000);
  afterAll(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it("type-check: every call is what the generated types allow", () => {
    expect(diagnostics).toEqual([]);
  });

  it.each(Object.keys(DOCUMENTS) as DocumentName[])(
    "%s: every operation answers as documented",
    async (name) => {
      const document = documents[name];
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      ajv.addSchema({ ...document, $id: "document" }, "document");
      const module = (await import(pathToFileURL(join(directory, `${name}-calls.ts`)).href)) as {
        calls: (
          baseUrl: string,
        ) => Record<string, () => Promise<{ response: Response; data?: unknown; error?: unknown }>>;
      };
      const calls = module.calls(t.url);
      const answers: string[] = [];
      for (const [method, path, operation] of operations(document)) {
        const key = `${method} ${path}`;
        const call = calls[key];
        expect(call, key).toBeDefined();
        const { response, data, error } = await call!();
        const status = String(response.status);
        const documented = operation.responses[status];
        answers.push(`${key} ${status}`);
        expect(
          documented,
          `${key} answered an undocumented ${status}: ${JSON.stringify(error)}`,
        ).toBeDefined();
        const expected = expectation(method, path, operation);
        if (expected === "happy") expect(response.ok, `${key}: ${JSON.stringify(error)}`).toBe(true);
        else if (expected !== "documented") expect((error as { code?: string })?.code, key).toBe(expected);
        if (!response.ok) {
          expect(documentedCodes(documented!), key).toContain((error as { code: string }).code);
          continue;
        }
        const json = documented?.content?.["application/json"];
        if (!json) continue;
        const pointer = `document#/paths/${path.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}/responses/${status}/content/application~1json/schema`;
        const validate = ajv.compile({ $ref: pointer });
        expect(validate(data), `${key}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      expect(answers.length).toBe(operations(document).length);
    },
    60_000,
  );
});

/** Operations whose inputs the test cannot make valid: the documented error they answer instead. */
const EXPECTED_ERRORS: Readonly<Record<string, string>> = {
  // A signed open transaction needs a wallet's signature over one the venue issued.
  submit_intent_handler: "invalid_open_transaction",
  // No order was opened with the sample signature.
  order_status_handler: "not_found",
};

/**
 * What an operation should answer: a stream's upgrade refused with plain HTTP, an error the test
 * expects, a success where every input it needs had a real value, else any documented answer.
 */
function expectation(method: string, path: string, operation: Operation): "happy" | "documented" | string {
  if (operation.responses["101"]) return "upgrade_required";
  const expected = EXPECTED_ERRORS[operation.operationId];
  if (expected) return expected;
  const inputs = (operation.parameters ?? []).filter((p) => p.required);
  const known = inputs.every((p) => sample(path, p.name) !== undefined);
  const body = method === "post" ? BODIES[operation.operationId] !== undefined : true;
  return known && body ? "happy" : "documented";
}

/** A real value for parameter `name` of the operation at `path`, if the test has one. */
function sample(path: string, name: string): unknown {
  const ticker = path.startsWith("/api/v1/series")
    ? SERIES
    : path.startsWith("/api/v1/event/")
      ? samples.event
      : samples.market;
  const values: Record<string, unknown> = {
    event_id: samples.event,
    series_ticker: SERIES,
    ticker,
    market_ticker: samples.market,
    event_ticker: samples.event,
    mint: samples.mint,
    address: samples.wallet,
    q: SERIES,
    percentiles: [2500, 5000, 7500],
    startTs: TEST_ANCHOR - 3 * 3_600,
    endTs: TEST_ANCHOR,
    periodInterval: 60,
    limit: 2,
    withNestedMarkets: true,
    seriesTickers: [SERIES],
    inputMint: USDC_MINT,
    outputMint: dJUP,
    amount: 2_000_000,
    slippageBps: 50,
    onlyDirectRoutes: false,
    userPublicKey: samples.wallet,
    signature: "1".repeat(64),
    payer: samples.wallet,
    outcomeMint: samples.uninitializedMint,
  };
  return values[name];
}

/** Request bodies by operationId. */
const BODIES: Readonly<Record<string, () => unknown>> = {
  markets_batch: () => ({ tickers: [samples.market] }),
  filter_outcome_mints: () => ({ addresses: [samples.mint] }),
  swap_handler: () => ({ userPublicKey: samples.wallet, quoteResponse: samples.quote }),
  swap_instructions_handler: () => ({ userPublicKey: samples.wallet, quoteResponse: samples.quote }),
  submit_intent_handler: () => ({ quoteResponse: samples.intent, signedOpenTransaction: "AAAA" }),
  devFaucet: () => ({ wallet: samples.wallet, mint: USDC_MINT, amount: "1000000" }),
};

/** A stand-in of the type a schema names, for an input the test has no real value of. */
function standIn(schema: Json): unknown {
  const branch = ((schema.oneOf ?? schema.anyOf) as Json[] | undefined)?.[0];
  if (branch) return standIn(branch);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [standIn((schema.items ?? {}) as Json)];
    default:
      return "x";
  }
}

/** The value `value` as the parameter's schema types it (a number sent where text is asked, as text). */
function typed(value: unknown, schema: Json): unknown {
  if (schema.type === "string" && typeof value !== "string")
    return Array.isArray(value) ? value.join(",") : String(value);
  if (schema.type === "array" && !Array.isArray(value)) return [value];
  return value;
}

/** The TypeScript module that calls every operation of `document` with the generated client. */
function callsModule(name: DocumentName, document: OpenApi): string {
  const entries = operations(document).map(([method, path, operation]) => {
    const groups: Record<string, Record<string, unknown>> = {};
    for (const parameter of operation.parameters ?? []) {
      const value = sample(path, parameter.name);
      if (value === undefined && !parameter.required) continue;
      groups[parameter.in] ??= {};
      const group = groups[parameter.in]!;
      group[parameter.name] =
        value === undefined ? standIn(parameter.schema) : typed(value, parameter.schema);
    }
    const options: string[] = [];
    if (Object.keys(groups).length > 0) options.push(`params: ${JSON.stringify(groups)}`);
    const bodySchema = operation.requestBody?.content["application/json"]?.schema;
    // A body the test has no real value of is cast: that call is checked for its path and parameters.
    const body = BODIES[operation.operationId];
    if (bodySchema) options.push(body ? `body: ${JSON.stringify(body())}` : "body: {} as never");
    const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))?.[1];
    if (success?.content && !success.content["application/json"]) options.push(`parseAs: "text"`);
    return `  ${JSON.stringify(`${method} ${path}`)}: () => client.${method.toUpperCase()}(${JSON.stringify(path)}, { ${options.join(", ")} }),`;
  });
  return `import createClient from "openapi-fetch";
import type { paths } from "./${name}-schema.js";

export function calls(baseUrl: string) {
  const client = createClient<paths>({ baseUrl, querySerializer: { array: { style: "form", explode: false } } });
  return {
${entries.join("\n")}
  };
}
`;
}
