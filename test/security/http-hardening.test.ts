/**
 * The API listener's own hardening (issue 15): its limits are HTTP_LIMITS'; whatever Node's HTTP
 * server refuses by itself (a malformed request, a head too large, a request too slow) gets a
 * `{code,msg}` body like every other error; slow headers and slow bodies are cut at their time
 * limits; a stream asked for without an upgrade is a 426; a frame over the stream's max payload
 * closes the socket with 1009 and one warn line; a key in the URL, under any usual name, is refused
 * and never logged.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { isKeyParameter } from "../../src/api-keys/url-keys.js";
import { buildApp, redactQueryKeys } from "../../src/app/build-app.js";
import { loadConfig } from "../../src/config.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";
import type { ZodApp } from "../../src/http/types.js";
import type { ListenerTimeouts } from "../../src/limits.js";
import { HTTP_LIMITS } from "../../src/limits.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage } from "../../src/storage/database.js";
import type { Upstream } from "../../src/upstream/client.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { rawRequest } from "../support/raw-http.js";
import { refusingChain, unstartedTradingApi } from "../support/trading-api.js";

interface Venue {
  app: ZodApp;
  url: string;
  port: number;
  /** Every log line written since the venue started, parsed. */
  lines: Record<string, unknown>[];
}

const rateStore = new MemoryRateStore();
const venues: Venue[] = [];

/** An app with no keys and no limits, a JSON echo route and a stream, logging into `lines`. */
async function startVenue(timeouts?: Partial<ListenerTimeouts>): Promise<Venue> {
  const lines: Record<string, unknown>[] = [];
  const capture = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildApp({
    config: loadConfig({}, { LOG_LEVEL: "info" }),
    catalog: new CatalogHolder(),
    access: {
      mode: "development",
      keys: { lookup: () => undefined, check: async () => undefined },
      rateStore,
      limits: { anonymous: 0, standard: 0, pro: 0 },
    },
    logger: pino({ level: "info" }, capture),
    ...(timeouts ? { timeouts } : {}),
  });
  app.post("/echo", async (request) => request.body);
  app.get("/log-request", async (request) => {
    // What Fastify's own request logging writes: the request through pino's req serializer.
    request.log.info({ req: request }, "a request");
    return {};
  });
  app.get("/test-stream", { websocket: true }, (socket) => socket.send("hello"));
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const venue = { app, url, port: Number(new URL(url).port), lines };
  venues.push(venue);
  return venue;
}

/** Asserts a `{code,msg}` body of exactly those two string fields, and returns the code. */
function errorCode(body: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  expect(Object.keys(parsed).sort()).toEqual(["code", "msg"]);
  expect(typeof parsed.msg).toBe("string");
  expect(typeof parsed.code).toBe("string");
  return parsed.code as string;
}

let venue: Venue;
beforeAll(async () => {
  venue = await startVenue({ headersTimeoutMs: 600, requestTimeoutMs: 1_500 });
});
afterAll(async () => {
  for (const started of venues) await started.app.close();
  await rateStore.close();
});

describe("the listener's limits", () => {
  it("are HTTP_LIMITS' unless a test shortens the timeouts", async () => {
    const plain = await startVenue();
    const server = plain.app.server;
    expect(server.headersTimeout).toBe(HTTP_LIMITS.headersTimeoutMs);
    expect(server.requestTimeout).toBe(HTTP_LIMITS.requestTimeoutMs);
    expect(server.keepAliveTimeout).toBe(HTTP_LIMITS.keepAliveTimeoutMs);
    expect(server.timeout).toBe(HTTP_LIMITS.idleTimeoutMs);
    // Node keeps it, though its types do not say so.
    expect((server as typeof server & { maxHeaderSize?: number }).maxHeaderSize).toBe(
      HTTP_LIMITS.maxHeaderBytes,
    );
    expect(plain.app.initialConfig.bodyLimit).toBe(HTTP_LIMITS.apiBodyBytes);
    expect(venue.app.server.headersTimeout).toBe(600);
    expect(venue.app.server.requestTimeout).toBe(1_500);
  });
});

describe("errors Node's HTTP server raises itself are {code,msg}", () => {
  it("431 headers_too_large for a head over maxHeaderBytes, in a header or in the URL", async () => {
    const big = "a".repeat(HTTP_LIMITS.maxHeaderBytes + 1);
    const answer = await rawRequest(
      venue.port,
      `GET /health-check HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(errorCode(answer.body)).toBe("headers_too_large");
    const response = await fetch(`${venue.url}/health-check?q=${"b".repeat(100_000)}`);
    expect(response.status).toBe(431);
    expect(errorCode(await response.text())).toBe("headers_too_large");
  });

  it.each([
    ["a bad method", "GE T / HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["a bad Content-Length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}"],
    [
      "two Content-Lengths",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ],
    ["a header name with a space", "GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"],
    ["not HTTP at all", "\u0000\u0001\u0002hello\r\n\r\n"],
    ["a bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
  ])("400 bad_request for %s", async (_name, request) => {
    const answer = await rawRequest(venue.port, request);
    expect(answer.status).toBe(400);
    expect(answer.headers["x-request-id"]).toMatch(/^[\w-]{36}$/);
    expect(errorCode(answer.body)).toBe("bad_request");
  });

  it("400 invalid_json and 415 for a bad body or content type", async () => {
    const post = (body: string, type: string) =>
      fetch(`${venue.url}/echo`, { method: "POST", headers: { "content-type": type }, body });
    for (const [body, type, status, code] of [
      ["{x", "application/json", 400, "invalid_json"],
      ["", "application/json", 400, "invalid_json"],
      ['{"__proto__":{"a":1}}', "application/json", 400, "invalid_json"],
      ["{}", ";;;", 415, "unsupported_media_type"],
      ["{}", "text/plain", 415, "unsupported_media_type"],
      ["a=1", "application/x-www-form-urlencoded", 415, "unsupported_media_type"],
    ] as const) {
      const response = await post(body, type);
      expect(response.status, `${type} ${body}`).toBe(status);
      expect(errorCode(await response.text())).toBe(code);
    }
  });
});

describe("time limits", () => {
  it("cuts a slow body at requestTimeout with a {code,msg} 408", async () => {
    const answer = await rawRequest(
      venue.port,
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
      { drip: " " },
    );
    expect(answer.status).toBe(408);
    expect(errorCode(answer.body)).toBe("request_timeout");
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(1_400);
    expect(answer.closedAfterMs).toBeLessThan(3_000);
  });

  it("cuts slow headers at headersTimeout with a {code,msg} 408", async () => {
    const answer = await rawRequest(venue.port, "GET /health-check HTTP/1.1\r\nHost: x\r\n", { drip: "X" });
    expect(answer.status).toBe(408);
    expect(errorCode(answer.body)).toBe("request_timeout");
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(500);
    expect(answer.closedAfterMs).toBeLessThan(1_400);
  });

  it("logs each refusal as one line without the request it could not parse", async () => {
    venue.lines.length = 0;
    await rawRequest(venue.port, "GET /?api_key=og_SECRETinAbrokenREQUEST HTTP/1.1\r\nBad Header: 1\r\n\r\n");
    const refusals = venue.lines.filter((line) => line.code === "bad_request");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ level: 30, status: 400, reason: "HPE_INVALID_HEADER_TOKEN" });
    expect(JSON.stringify(venue.lines)).not.toContain("og_SECRET");
  });
});

describe("WebSocket routes", () => {
  it("answer plain HTTP with a {code,msg} 426 upgrade_required", async () => {
    const response = await fetch(`${venue.url}/test-stream`);
    expect(response.status).toBe(426);
    expect(response.headers.get("upgrade")).toBe("websocket");
    expect(errorCode(await response.text())).toBe("upgrade_required");
  });

  it("close a socket that sends a frame over the max payload with 1009, logging one warn line and no stack", async () => {
    const socket = new WebSocket(`${venue.url.replace("http", "ws")}/test-stream`);
    await new Promise((resolve, reject) => {
      socket.once("message", resolve);
      socket.once("error", reject);
    });
    venue.lines.length = 0;
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.send("x".repeat(HTTP_LIMITS.apiBodyBytes + 1));
    expect(await closed).toBe(1009);
    await vi.waitFor(() => expect(venue.lines.some((line) => Number(line.level) >= 40)).toBe(true), {
      timeout: 10_000,
      interval: 10,
    });
    const loud = venue.lines.filter((line) => Number(line.level) >= 40);
    expect(loud).toHaveLength(1);
    expect(loud[0]).toMatchObject({ level: 40, code: "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" });
    expect(JSON.stringify(venue.lines)).not.toMatch(/stack|RangeError|\bat [\w.]+ \(/);
  });
});

describe("keys in the URL", () => {
  const NAMES = [
    "api_key",
    "apikey",
    "apiKey",
    "API_KEY",
    "x-api-key",
    "X-Api-Key",
    "api-key",
    "key",
    "token",
    "Token",
    "access_token",
    "access-token",
    "%61pi-key",
    // Spellings that normalize to a key name: decoded, lower-cased, [a-z0-9] only.
    "api+key",
    "api%20key",
    "api_key[]",
    "apikey%00",
    "api.key",
    "api%5Fkey%5B%5D",
    // Names that contain a secret's word.
    "api_token",
    "apiToken",
    "access_key",
    "auth",
    "Authorization",
    "bearer",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "private_key",
    "credentials",
  ];

  it.each(NAMES)("?%s= is refused with 400 api_key_in_query and never logged", async (name) => {
    venue.lines.length = 0;
    const secret = `og_URLSECRET${name.replace(/\W/g, "")}`;
    for (const path of ["/log-request", "/test-stream", "/api/v1/nope"]) {
      const response = await fetch(`${venue.url}${path}?limit=1&${name}=${secret}`);
      expect(response.status, path).toBe(400);
      expect(errorCode(await response.text())).toBe("api_key_in_query");
    }
    const log = JSON.stringify(venue.lines);
    expect(log).toContain("/log-request");
    expect(log).not.toContain(secret);
  });

  it("are redacted by pino's request serializer as well as in the access line", async () => {
    venue.lines.length = 0;
    // Not refused (not a key name), so the route runs and logs the request itself.
    await fetch(`${venue.url}/log-request?cursor=visible&keyword=visible`);
    const logged = venue.lines.find((line) => line.msg === "a request") as { req?: { url?: string } };
    expect(logged?.req?.url).toBe("/log-request?cursor=visible&keyword=visible");
    // The serializer itself, given a key it would otherwise write.
    venue.app.log.info({ req: { method: "GET", url: "/x?access_token=og_SERIALIZED&a=1" } }, "direct");
    const direct = venue.lines.find((line) => line.msg === "direct") as { req?: { url?: string } };
    expect(direct?.req?.url).toBe("/x?access_token=[redacted]&a=1");
  });

  it("redacts every spelling of a key name in the access line, and keeps the rest of the URL", () => {
    expect(redactQueryKeys("/a?limit=1&api_key[]=S1&api+key=S2&api%20key=S3&apikey%00=S4&api.key=S5")).toBe(
      "/a?limit=1&api_key[]=[redacted]&api+key=[redacted]&api%20key=[redacted]&apikey%00=[redacted]&api.key=[redacted]",
    );
    expect(redactQueryKeys("/a?bearer=S1&secret=S2&password=S3&auth=S4&apiToken=S5&cursor=c&tickers=T")).toBe(
      "/a?bearer=[redacted]&secret=[redacted]&password=[redacted]&auth=[redacted]&apiToken=[redacted]&cursor=c&tickers=T",
    );
  });

  it("takes parameter names that only look like one (a public key, an account, a cursor)", async () => {
    const names = [
      "userPublicKey",
      "feeAccount",
      "sponsor",
      "cursor",
      "tickers",
      "keyword",
      "keys",
      "monkey",
      "destinationTokenAccount",
      "outputCloseAuthority",
      "tokenMint",
    ];
    for (const name of names) expect(isKeyParameter(name), name).toBe(false);
    const query = names.map((name) => `${name}=visible`).join("&");
    const response = await fetch(`${venue.url}/log-request?${query}`);
    expect(response.status).toBe(200);
  });

  it("never refuses a query parameter the API declares, on any route", async () => {
    const dir = tempDir();
    const storage = await openStorage({ DATA_DIR: dir.dir });
    const app = await buildApp({
      config: QUIET_DEVELOPMENT,
      catalog: new CatalogHolder(),
      access: openAccess(),
      trading: unstartedTradingApi(storage.db, refusingChain()),
      // Only for its routes' declarations: nothing here reaches the upstream.
      relay: new MarketRelay({} as Upstream),
    });
    try {
      const declared = new Set<string>();
      for (const path of ["/openapi.json", "/api/v1/openapi.json"]) {
        const response = await app.inject({ method: "GET", url: path });
        expect(response.statusCode, path).toBe(200);
        const document = response.json() as {
          paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
        };
        for (const item of Object.values(document.paths)) {
          for (const operation of Object.values(item)) {
            for (const parameter of operation.parameters ?? []) {
              if (parameter.in === "query") declared.add(parameter.name);
            }
          }
        }
      }
      // Both groups' documents were read: trade parameters, prediction-market ones and relayed ones.
      for (const name of ["userPublicKey", "feeAccount", "amount", "cursor", "seriesTickers", "startTs"]) {
        expect(declared, name).toContain(name);
      }
      expect([...declared].filter((name) => isKeyParameter(name))).toEqual([]);
    } finally {
      await app.close();
      await storage.close();
      await dir.cleanup();
    }
  });
});
