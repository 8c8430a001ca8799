/**
 * Cached relay answers go out compressed when the client accepts it: the same bytes once decoded, the
 * encoding the client asked for, never on a signed response and never on an answer sent only once.
 */
import crypto from "node:crypto";
import zlib from "node:zlib";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_ANCHOR, type TestServer } from "../support/server.js";

let t: TestServer;
let settledPath: string;
let livePath: string;

beforeAll(async () => {
  t = await startTestServer();
  const event = (await t.client.listEvents({ seriesTickers: ["KXHIGHNY"], status: "active" })).events[0]!;
  const path = (startTs: number, endTs: number) =>
    `/api/v1/event/KXHIGHNY/${event.ticker}/forecast_percentile_history?${new URLSearchParams({
      percentiles: "1000,2500,5000,7500,9000",
      startTs: String(startTs),
      endTs: String(endTs),
      periodInterval: "60",
    })}`;
  // A range wholly in the past is settled (kept in the cache); one ending in the future is not.
  settledPath = path(TEST_ANCHOR - 3 * 86_400, TEST_ANCHOR - 3_600);
  livePath = path(TEST_ANCHOR - 86_400, Math.floor(Date.now() / 1000) + 86_400);
});
afterAll(async () => t?.stop());

/** The raw answer, not decoded (undici's request leaves content-encoding to the caller). */
async function raw(path: string, headers: Record<string, string> = {}) {
  const answer = await request(`${t.url}${path}`, { headers });
  const body = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, headers: answer.headers, body };
}

describe("compressed cached relay answers", () => {
  it("sends a cached answer in the client's encoding, the same bytes once decoded", async () => {
    const plain = await raw(settledPath);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(4_096);
    expect(String(plain.headers.vary)).toMatch(/accept-encoding/i);

    const gzip = await raw(settledPath, { "accept-encoding": "gzip" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(String(gzip.headers.vary)).toMatch(/accept-encoding/i);
    expect(zlib.gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    expect(gzip.body.length).toBeLessThan(plain.body.length / 4);
    expect(Number(gzip.headers["content-length"])).toBe(gzip.body.length);

    const br = await raw(settledPath, { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(zlib.brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    // Compressed once: the next hit sends the very same bytes.
    expect((await raw(settledPath, { "accept-encoding": "br" })).body.equals(br.body)).toBe(true);
  });

  it("honours q-values: an encoding the client refuses is not used", async () => {
    const refused = await raw(settledPath, { "accept-encoding": "gzip;q=0, identity" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
    const preferred = await raw(settledPath, { "accept-encoding": "br;q=0.1, gzip;q=0.9" });
    expect(preferred.headers["content-encoding"]).toBe("gzip");
    const unknown = await raw(settledPath, { "accept-encoding": "zstd, compress" });
    expect(unknown.headers["content-encoding"]).toBeUndefined();
  });

  it("a fetch client reads the same JSON whatever it negotiates", async () => {
    const viaFetch = await fetch(`${t.url}${settledPath}`);
    const plain = await raw(settledPath);
    expect(Buffer.from(await viaFetch.arrayBuffer()).equals(plain.body)).toBe(true);
  });

  it("never compresses a signed response: its content digest is of the bytes the client reads", async () => {
    const plain = await raw(settledPath);
    const signed = await raw(settledPath, { "accept-encoding": "gzip, br", "x-sign-request": "true" });
    expect(signed.headers["content-encoding"]).toBeUndefined();
    expect(signed.body.equals(plain.body)).toBe(true);
    const digest = crypto.createHash("sha256").update(plain.body).digest("base64");
    expect(signed.headers["content-digest"]).toBe(`sha-256=:${digest}:`);
  });

  it("sends an answer that is not cached as it came (compressing it would cost more than it saves)", async () => {
    const live = await raw(livePath, { "accept-encoding": "gzip, br" });
    expect(live.status).toBe(200);
    expect(live.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(live.body.toString()).forecast_history.length).toBeGreaterThan(0);
  });

  it("an error answer is never encoded", async () => {
    const missing = await raw(settledPath.replace("KXHIGHNY/", "KXHIGHNY/NOPE-"), {
      "accept-encoding": "gzip",
    });
    expect(missing.status).toBe(404);
    expect(missing.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(missing.body.toString()).code).toBe("event_not_found");
  });
});
