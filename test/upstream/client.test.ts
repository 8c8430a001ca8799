/**
 * The upstream client against the simulator and a bare HTTP peer: the circuit breaker, the cache of
 * settled answers, coalescing, and Kalshi request signing.
 */
import { constants, generateKeyPairSync, verify } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { answerJson, UpstreamClient } from "../../src/upstream/client.js";
import { TEST_ANCHOR } from "../support/server.js";

let simulator: RunningSimulator;
const NOON = TEST_ANCHOR + 12 * 3_600;

beforeAll(async () => {
  simulator = await startSimulator({
    catalogue: generateDemoCatalogue({ anchor: TEST_ANCHOR }),
    now: () => NOON,
    port: 0,
  });
});
afterAll(async () => simulator?.close());

const requestsTo = (fragment: string) =>
  Object.entries(simulator.faults.stats().byPath)
    .filter(([path]) => path.includes(fragment))
    .reduce((sum, [, count]) => sum + count, 0);

describe("circuit breaker", () => {
  it("opens after repeated failures, stops calling, and closes after the upstream recovers", async () => {
    const client = new UpstreamClient({
      baseUrl: simulator.url,
      timeoutMs: 30_000,
      breaker: { volumeThreshold: 4, errorThresholdPercentage: 50, resetTimeoutMs: 300 },
    });
    try {
      simulator.faults.set({ kind: "status", status: 503, match: "/series" });
      for (let i = 0; i < 4; i++) {
        await expect(client.get("series")).rejects.toMatchObject({ code: "upstream_unavailable" });
      }
      expect(client.circuitOpen).toBe(true);
      const before = requestsTo("/series");
      await expect(client.get("series")).rejects.toThrow(/circuit open/);
      expect(requestsTo("/series")).toBe(before);

      simulator.faults.clear();
      // Refused as "circuit open" until the reset timeout (300 ms) lets a trial call through.
      const answer = await vi.waitFor(() => client.get("series"), { timeout: 10_000, interval: 50 });
      expect(answer.status).toBe(200);
      expect(client.circuitOpen).toBe(false);
    } finally {
      simulator.faults.clear();
      await client.close();
    }
  });

  it("does not count the upstream's 404 and 400 answers as failures", async () => {
    const client = new UpstreamClient({
      baseUrl: simulator.url,
      timeoutMs: 30_000,
      breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 },
    });
    try {
      for (let i = 0; i < 5; i++) expect((await client.get("events/NOPE-1")).status).toBe(404);
      expect(client.circuitOpen).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe("cache and coalescing", () => {
  it("keeps settled answers and asks again for the rest", async () => {
    const client = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
    try {
      const before = requestsTo("/series/KXHIGHNY");
      const first = await client.get("series/KXHIGHNY", undefined, { cacheable: true });
      const second = await client.get("series/KXHIGHNY", undefined, { cacheable: true });
      expect(second.body.equals(first.body)).toBe(true);
      expect(requestsTo("/series/KXHIGHNY")).toBe(before + 1);
      await client.get("series/KXHIGHNY");
      expect(requestsTo("/series/KXHIGHNY")).toBe(before + 2);
      // A refusal is never kept: the next call asks again.
      await client.get("series/NOPE", undefined, { cacheable: true });
      await client.get("series/NOPE", undefined, { cacheable: true });
      expect(requestsTo("/series/NOPE")).toBe(2);
    } finally {
      await client.close();
    }
  });

  it("parses a fresh answer once, for its reader and its observers alike, and caches only its bytes", async () => {
    const client = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
    const heard: unknown[] = [];
    client.observe((_path, _body, json) => heard.push(json));
    const parse = vi.spyOn(JSON, "parse");
    try {
      const fresh = await client.get("series/KXHIGHNY", undefined, { cacheable: true });
      // Parses of this body (the simulator in this process parses other things).
      const parsesOfBody = () =>
        parse.mock.calls.filter(([text]) => text === fresh.body.toString("utf8")).length;
      expect(answerJson(fresh)).toMatchObject({ series: { ticker: "KXHIGHNY" } });
      expect(heard).toEqual([answerJson(fresh)]);
      // The check that the body is JSON was its one parse: reading it and telling the archive took none.
      expect(parsesOfBody()).toBe(1);

      // The cache of settled answers holds the bytes alone; a cached answer is parsed when read.
      const cached = client.cached("series/KXHIGHNY");
      expect(cached?.json).toBeUndefined();
      expect(cached?.body.equals(fresh.body)).toBe(true);
      expect(answerJson(cached as NonNullable<typeof cached>)).toEqual(answerJson(fresh));
      expect(parsesOfBody()).toBe(2);
      expect(heard).toHaveLength(1);
    } finally {
      parse.mockRestore();
      await client.close();
    }
  });

  it("sends identical concurrent calls once", async () => {
    const client = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
    try {
      simulator.faults.set({ kind: "latency", ms: 200, match: "/series/KXHIGHCHI" });
      const before = requestsTo("/series/KXHIGHCHI");
      const answers = await Promise.all(Array.from({ length: 20 }, () => client.get("series/KXHIGHCHI")));
      expect(requestsTo("/series/KXHIGHCHI")).toBe(before + 1);
      for (const answer of answers) expect(answer.body.equals(answers[0]!.body)).toBe(true);
    } finally {
      simulator.faults.clear();
      await client.close();
    }
  });
});

describe("Kalshi request signing", () => {
  it("signs timestamp + method + path (no query) with RSA-PSS SHA-256", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const seen: http.IncomingHttpHeaders[] = [];
    const peer = http.createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
    const { port } = peer.address() as AddressInfo;
    const client = new UpstreamClient({
      baseUrl: `http://127.0.0.1:${port}/trade-api/v2`,
      timeoutMs: 30_000,
      credentials: { keyId: "key-123", privateKey },
    });
    try {
      await client.get("markets/trades", new URLSearchParams({ limit: "5" }));
      const headers = seen[0]!;
      expect(headers["kalshi-access-key"]).toBe("key-123");
      const timestamp = String(headers["kalshi-access-timestamp"]);
      expect(Math.abs(Number(timestamp) - Date.now())).toBeLessThan(10_000);
      const signed = Buffer.from(`${timestamp}GET/trade-api/v2/markets/trades`);
      const signature = Buffer.from(String(headers["kalshi-access-signature"]), "base64");
      const ok = verify(
        "sha256",
        signed,
        {
          key: publicKey,
          padding: constants.RSA_PKCS1_PSS_PADDING,
          saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
        },
        signature,
      );
      expect(ok).toBe(true);
    } finally {
      await client.close();
      await new Promise((resolve) => peer.close(resolve));
    }
  });
});
