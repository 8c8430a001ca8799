/**
 * Signed responses (contract §10) end to end: RFC 9421 signatures with the venue's ed25519 key over
 * REST answers (errors included) for callers that send `x-sign-request: true`, the key's directory at
 * the well-known path in both modes, and the client's verifier refusing any change to what was signed.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createKey } from "../../src/api-keys/store.js";
import { keypairFromSeed } from "../../src/chain/ed25519.js";
import { readKeypairFile, writeKeypairFile } from "../../src/chain/keypair-file.js";
import { loadResponseSigningKey, responseSigningKeyFile } from "../../src/chain/venue-keys.js";
import { OddsgateApiError } from "../../src/client/http.js";
import { TradeClient } from "../../src/client/trade.js";
import {
  fetchSigningKey,
  type ReceivedResponse,
  ResponseSignatureError,
  type ResponseSignatureFailure,
  signingKeyFromDirectory,
  type VerifyResponseOptions,
  verifyResponse,
} from "../../src/client/verify-response.js";
import { loadConfig } from "../../src/config.js";
import {
  installResponseSigning,
  MAX_SIGNED_STREAM_BYTES,
  SIGNING_DIRECTORY_MEDIA_TYPE,
  SIGNING_DIRECTORY_PATH,
  signResponse,
} from "../../src/http/response-signing.js";
import { openStorage } from "../../src/storage/database.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

interface Fetched extends ReceivedResponse {
  headers: Headers;
}

async function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Fetched> {
  const response = await fetch(url, { method, headers });
  return {
    status: response.status,
    headers: response.headers,
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

const signed = (url: string, headers: Record<string, string> = {}, method = "GET") =>
  get(url, { "x-sign-request": "true", ...headers }, method);

/** The reason verification fails for, or "ok". */
function outcome(
  response: ReceivedResponse,
  options: VerifyResponseOptions,
): ResponseSignatureFailure | "ok" {
  try {
    verifyResponse(response, options);
    return "ok";
  } catch (error) {
    if (error instanceof ResponseSignatureError) return error.reason;
    throw error;
  }
}

function sha256Digest(body: Uint8Array): string {
  return `sha-256=:${crypto.createHash("sha256").update(body).digest("base64")}:`;
}

function withHeader(headers: Headers, name: string, value: string | null): Headers {
  const copy = new Headers(headers);
  if (value === null) copy.delete(name);
  else copy.set(name, value);
  return copy;
}

describe("the signature base, pinned", () => {
  // A fixed key (seed 0x01 × 32), body, id and time: every byte of the base is known in advance.
  const key = keypairFromSeed(new Uint8Array(32).fill(1));
  const body = Buffer.from('{"hello":"world"}');
  const parts = {
    status: 200,
    contentType: "application/json; charset=utf-8",
    body,
    requestId: "req-1",
    created: 1_700_000_000,
  };
  const expectedBase = [
    '"@status": 200',
    '"content-type": application/json; charset=utf-8',
    '"content-digest": sha-256=:k6I5cakU5erL8KjSUVTNownDwccvu5kU1Hxg88toFYg=:',
    '"x-request-id";req: req-1',
    `"@signature-params": ("@status" "content-type" "content-digest" "x-request-id";req);created=1700000000;keyid="${key.address}";alg="ed25519"`,
  ].join("\n");

  it("is RFC 9421 §2.5's, and node:crypto verifies the signature over it", () => {
    expect(key.address).toBe("AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9");
    const headers = signResponse(parts, key);
    expect(headers["content-digest"]).toBe(sha256Digest(body));
    expect(headers["signature-input"]).toBe(
      `sig1=("@status" "content-type" "content-digest" "x-request-id";req);created=1700000000;keyid="${key.address}";alg="ed25519"`,
    );
    const signature = /^sig1=:([A-Za-z0-9+/]+={0,2}):$/.exec(headers.signature)?.[1];
    expect(signature).toBeDefined();
    // Independently of both the signer and the verifier: the literal base, the raw key, node:crypto.
    const publicKey = crypto.createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(key.publicKey).toString("base64url") },
      format: "jwk",
    });
    expect(crypto.verify(null, Buffer.from(expectedBase), publicKey, Buffer.from(signature!, "base64"))).toBe(
      true,
    );
    // ed25519 is deterministic: the same input signs the same.
    expect(signResponse(parts, key).signature).toBe(headers.signature);

    const verified = verifyResponse(
      { status: 200, headers: { ...headers, "content-type": parts.contentType }, body },
      { publicKey: key.address, requestId: "req-1", now: parts.created },
    );
    expect(verified.signatureBase).toBe(expectedBase);
    expect(verified.components).toEqual([
      '"@status"',
      '"content-type"',
      '"content-digest"',
      '"x-request-id";req',
    ]);
  });

  it("leaves content-type out when none is sent, and the verifier then does not ask for it", () => {
    const headers = signResponse(
      { ...parts, status: 204, contentType: undefined, body: Buffer.alloc(0) },
      key,
    );
    expect(headers["signature-input"]).toContain('("@status" "content-digest" "x-request-id";req)');
    const response = { status: 204, headers, body: new Uint8Array(0) };
    expect(outcome(response, { publicKey: key.publicKey, requestId: "req-1", now: parts.created })).toBe(
      "ok",
    );
    // But a response with a content type its signature does not cover proves nothing about it.
    const typed = { ...response, headers: { ...headers, "content-type": "text/html" } };
    expect(outcome(typed, { publicKey: key.publicKey, requestId: "req-1", now: parts.created })).toBe(
      "incomplete",
    );
  });

  it("refuses to put an id that is not short and plain into a signature base", () => {
    for (const requestId of ["", "a b", "x\nsig", "é", "a".repeat(129)]) {
      expect(() => signResponse({ ...parts, requestId }, key)).toThrow(/request id/);
    }
  });

  it("refuses malformed signature headers with a typed error, not a crash", () => {
    const good = signResponse(parts, key);
    const base = { status: 200, body, headers: { ...good, "content-type": parts.contentType } };
    const options = { publicKey: key.address, requestId: "req-1", now: parts.created };
    const cases: [Record<string, string>, ResponseSignatureFailure][] = [
      [{ "signature-input": "sig1=(" }, "malformed"],
      [
        { "signature-input": `sig1=("@status");created=1700000000;keyid="${key.address}";alg="ed25519"` },
        "incomplete",
      ],
      [
        { "signature-input": good["signature-input"].replace('alg="ed25519"', 'alg="rsa-v1_5-sha256"') },
        "unsupported",
      ],
      [{ "signature-input": good["signature-input"].replace('"@status"', '"@method";req') }, "unsupported"],
      [
        { "signature-input": good["signature-input"].replace("created=1700000000", "created=1700000001") },
        "bad_signature",
      ],
      [{ signature: "sig1=:AAAA:" }, "bad_signature"],
      [{ signature: "sig2=:AAAA:" }, "missing"],
      [{ "content-digest": "sha-512=:AAAA:" }, "unsupported"],
      [{ "signature-input": "x".repeat(5000) }, "malformed"],
    ];
    for (const [change, reason] of cases) {
      expect(
        outcome({ ...base, headers: { ...base.headers, ...change } }, options),
        JSON.stringify(change),
      ).toBe(reason);
    }
  });
});

describe("signed responses in development mode", () => {
  let t: TestServer;
  let keyid: string;

  beforeAll(async () => {
    t = await startTestServer({
      catalogue: miniCatalogue(),
      settings: { DEMO_CATALOGUE: "true", CORS_ORIGINS: "https://app.example" },
    });
    keyid = (await fetchSigningKey(t.url)).keyid;
  });
  afterAll(async () => t?.stop());

  it("publishes the key kept in DATA_DIR at the well-known path, as a JWKS whose kid is the keyid", async () => {
    const stored = readKeypairFile(responseSigningKeyFile(String(t.settings.DATA_DIR)));
    const response = await get(`${t.url}${SIGNING_DIRECTORY_PATH}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(SIGNING_DIRECTORY_MEDIA_TYPE);
    const directory = JSON.parse(Buffer.from(response.body).toString());
    expect(directory).toEqual({
      keys: [
        {
          kty: "OKP",
          crv: "Ed25519",
          x: Buffer.from(stored.publicKey).toString("base64url"),
          kid: stored.address,
          use: "sig",
        },
      ],
    });
    expect(keyid).toBe(stored.address);
    expect(signingKeyFromDirectory(directory).publicKey).toEqual(stored.publicKey);
    // Kept owner-only, like the venue's other keys.
    expect(fs.statSync(responseSigningKeyFile(String(t.settings.DATA_DIR))).mode & 0o777).toBe(0o600);
  });

  it("signs GET /tokens for a caller that asks, and the client's verifier accepts it", async () => {
    const response = await signed(`${t.url}/tokens`, { "x-request-id": "client-42" });
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(50);
    expect(response.headers.get("x-request-id")).toBe("client-42");
    expect(response.headers.get("content-digest")).toBe(sha256Digest(response.body));
    const input = response.headers.get("signature-input");
    expect(input).toMatch(
      new RegExp(
        `^sig1=\\("@status" "content-type" "content-digest" "x-request-id";req\\);created=(\\d+);keyid="${keyid}";alg="ed25519"$`,
      ),
    );
    const created = Number(/created=(\d+)/.exec(input ?? "")?.[1]);
    expect(Math.abs(created - Date.now() / 1000)).toBeLessThan(10);
    expect(response.headers.get("signature")).toMatch(/^sig1=:[A-Za-z0-9+/]{86}==:$/);
    const verified = verifyResponse(response, { publicKey: keyid, requestId: "client-42" });
    expect(verified.keyid).toBe(keyid);
    expect(verified.created).toBe(created);
  });

  it("fails verification for any changed body byte, status, request id, key or age", async () => {
    const response = await signed(`${t.url}/tokens`, { "x-request-id": "tamper-1" });
    const options = { publicKey: keyid, requestId: "tamper-1" };
    expect(outcome(response, options)).toBe("ok");
    for (let at = 0; at < response.body.length; at++) {
      const body = Uint8Array.from(response.body);
      body[at] = (body[at] ?? 0) ^ 0x01;
      expect(outcome({ ...response, body }, options), `byte ${at}`).toBe("digest_mismatch");
    }
    // A body changed with a digest to match: the signature covers the digest.
    const forged = new TextEncoder().encode("[]");
    const reDigested = withHeader(response.headers, "content-digest", sha256Digest(forged));
    expect(outcome({ ...response, body: forged, headers: reDigested }, options)).toBe("bad_signature");
    expect(outcome({ ...response, status: 201 }, options)).toBe("bad_signature");
    expect(outcome({ ...response, status: 500 }, options)).toBe("bad_signature");
    expect(outcome(response, { ...options, requestId: "tamper-2" })).toBe("bad_signature");
    const typed = withHeader(response.headers, "content-type", "text/html");
    expect(outcome({ ...response, headers: typed }, options)).toBe("bad_signature");
    const untyped = withHeader(response.headers, "content-type", null);
    expect(outcome({ ...response, headers: untyped }, options)).toBe("malformed");
    const unsigned = withHeader(response.headers, "signature", null);
    expect(outcome({ ...response, headers: unsigned }, options)).toBe("missing");

    const other = keypairFromSeed(new Uint8Array(32).fill(7));
    expect(outcome(response, { ...options, publicKey: other.address })).toBe("wrong_key");
    // Another key's signature relabelled with the venue's keyid does not verify either.
    const created = Math.floor(Date.now() / 1000);
    const impostor = signResponse(
      {
        status: 200,
        contentType: "application/json; charset=utf-8",
        body: forged,
        requestId: "tamper-1",
        created,
      },
      other,
    );
    const relabelled = new Headers({
      ...impostor,
      "signature-input": impostor["signature-input"].replace(other.address, keyid),
      "content-type": "application/json; charset=utf-8",
    });
    expect(outcome({ status: 200, headers: relabelled, body: forged }, options)).toBe("bad_signature");

    const signedAt = verifyResponse(response, options).created;
    expect(outcome(response, { ...options, now: signedAt + 300 })).toBe("ok");
    expect(outcome(response, { ...options, now: signedAt + 301 })).toBe("expired");
    expect(outcome(response, { ...options, now: signedAt + 11, maxAgeSeconds: 10 })).toBe("expired");
    expect(outcome(response, { ...options, now: signedAt - 61 })).toBe("not_yet_valid");
  });

  it("signs errors: a 400 from /order, a malformed URL's 400 and a 405", async () => {
    const badOrder = await signed(`${t.url}/order?inputMint=nope&outputMint=${USDC}&amount=1`, {
      "x-request-id": "bad-order",
    });
    expect(badOrder.status).toBe(400);
    expect(JSON.parse(Buffer.from(badOrder.body).toString()).code).toBe("invalid_input_mint");
    expect(verifyResponse(badOrder, { publicKey: keyid, requestId: "bad-order" }).components).toContain(
      '"@status"',
    );
    expect(outcome({ ...badOrder, status: 200 }, { publicKey: keyid, requestId: "bad-order" })).toBe(
      "bad_signature",
    );
    const badUrl = await signed(`${t.url}/api/v1/event/%zz`, { "x-request-id": "err" });
    expect(badUrl.status).toBe(400);
    expect(outcome(badUrl, { publicKey: keyid, requestId: "err" })).toBe("ok");
    const wrongMethod = await fetch(`${t.url}/tokens`, {
      method: "DELETE",
      headers: { "x-sign-request": "true", "x-request-id": "method" },
    });
    const received = {
      status: wrongMethod.status,
      headers: wrongMethod.headers,
      body: new Uint8Array(await wrongMethod.arrayBuffer()),
    };
    expect(received.status).toBe(405);
    expect(outcome(received, { publicKey: keyid, requestId: "method" })).toBe("ok");
  });

  it("signs the markets API, the directory and the health check alike", async () => {
    for (const url of [
      `${t.url}/api/v1/series`,
      `${t.url}${SIGNING_DIRECTORY_PATH}`,
      `${t.url}/health-check`,
    ]) {
      const response = await signed(url, { "x-request-id": "many" });
      expect(response.status, url).toBe(200);
      expect(outcome(response, { publicKey: keyid, requestId: "many" }), url).toBe("ok");
    }
  });

  it("signs a HEAD answer over the content actually sent: none", async () => {
    const response = await signed(`${t.url}/tokens`, { "x-request-id": "head" }, "HEAD");
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(0);
    expect(response.headers.get("content-digest")).toBe(sha256Digest(new Uint8Array(0)));
    expect(outcome(response, { publicKey: keyid, requestId: "head" })).toBe("ok");
  });

  it("sends no signature headers to a caller that does not ask", async () => {
    const asks: Record<string, string>[] = [{}, { "x-sign-request": "false" }, { "x-sign-request": "1" }];
    for (const headers of asks) {
      const response = await get(`${t.url}/tokens`, headers);
      expect(response.status).toBe(200);
      for (const name of ["signature", "signature-input", "content-digest"]) {
        expect(response.headers.get(name), name).toBeNull();
      }
      expect(response.headers.get("x-request-id")).toMatch(UUID);
    }
  });

  it("makes up an x-request-id when none is sent, echoes it and signs it as the request's", async () => {
    const response = await signed(`${t.url}/tokens`);
    const id = response.headers.get("x-request-id");
    expect(id).toMatch(UUID);
    expect(outcome(response, { publicKey: keyid, requestId: id ?? "" })).toBe("ok");
  });

  it("replaces an x-request-id that is not short and plain, so the caller's own id does not verify", async () => {
    // A tab is not even a value the verifier puts in a signature base: it refuses it as malformed.
    const hostile: [string, ResponseSignatureFailure][] = [
      ["a".repeat(129), "bad_signature"],
      ["has space", "bad_signature"],
      ['quo"te', "bad_signature"],
      ["semi;colon", "bad_signature"],
      ["back\\slash", "bad_signature"],
      ["x-1\tsig2", "malformed"],
    ];
    for (const [offered, reason] of hostile) {
      const response = await signed(`${t.url}/tokens`, { "x-request-id": offered });
      expect(response.status).toBe(200);
      const echoed = response.headers.get("x-request-id") ?? "";
      expect(echoed, offered).toMatch(UUID);
      expect(response.headers.get("signature-input")).not.toContain(offered);
      expect(outcome(response, { publicKey: keyid, requestId: offered })).toBe(reason);
      // The venue's answer is still its own, under the id it gave the request.
      expect(outcome(response, { publicKey: keyid, requestId: echoed })).toBe("ok");
    }
    // The longest id accepted is echoed and signed as sent.
    const longest = "b".repeat(128);
    const response = await signed(`${t.url}/tokens`, { "x-request-id": longest });
    expect(response.headers.get("x-request-id")).toBe(longest);
    expect(outcome(response, { publicKey: keyid, requestId: longest })).toBe("ok");
  });

  it("adds the signature headers to the CORS setup's exposed headers, and lets browsers ask", async () => {
    const response = await signed(`${t.url}/tokens`, { origin: "https://app.example" });
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/, */);
    expect(exposed).toEqual(expect.arrayContaining(["x-request-id", "ratelimit", "retry-after"]));
    expect(exposed).toEqual(expect.arrayContaining(["signature", "signature-input", "content-digest"]));
    expect(new Set(exposed).size).toBe(exposed.length);
    const preflight = await fetch(`${t.url}/tokens`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-sign-request, x-request-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-sign-request");
  });

  it("never signs a WebSocket upgrade", async () => {
    const socket = new WebSocket(`${t.url.replace("http", "ws")}/quote-stream`, {
      headers: { "x-sign-request": "true" },
    });
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.on("upgrade", (response) => resolve(response.headers));
      socket.on("error", reject);
    });
    socket.close();
    expect(headers.signature).toBeUndefined();
    expect(headers["signature-input"]).toBeUndefined();
  });

  it("lets the typed client ask for and verify signatures", async () => {
    const client = new TradeClient({ baseUrl: t.url, verifySignatures: { publicKey: keyid } });
    expect((await client.tokens()).length).toBeGreaterThan(0);
    // An error answer is verified, then thrown as the API's error.
    await expect(client.order({ inputMint: "nope", outputMint: USDC, amount: 1 })).rejects.toBeInstanceOf(
      OddsgateApiError,
    );
    const wrongKey = new TradeClient({
      baseUrl: t.url,
      verifySignatures: { publicKey: keypairFromSeed(new Uint8Array(32).fill(9)).publicKey },
    });
    await expect(wrongKey.tokens()).rejects.toMatchObject({
      name: "ResponseSignatureError",
      reason: "wrong_key",
    });
    await expect(wrongKey.order({ inputMint: "nope", outputMint: USDC, amount: 1 })).rejects.toBeInstanceOf(
      ResponseSignatureError,
    );
  });
});

describe("signed responses in production mode", () => {
  let t: TestServer;
  let secret: string;
  let keyid: string;

  beforeAll(async () => {
    t = await startTestServer({ catalogue: miniCatalogue(), settings: { MODE: "production" } });
    const storage = await openStorage(loadConfig({}, t.settings));
    try {
      secret = (await createKey(storage.db, { name: "signing test" })).secret;
    } finally {
      await storage.close();
    }
    keyid = (await fetchSigningKey(t.url)).keyid;
  });
  afterAll(async () => t?.stop());

  it("serves the directory with a valid key, an unknown key and none", async () => {
    const callers: Record<string, string>[] = [{ "x-api-key": secret }, { "x-api-key": "og_unknown" }, {}];
    for (const headers of callers) {
      const response = await get(`${t.url}${SIGNING_DIRECTORY_PATH}`, headers);
      expect(response.status).toBe(200);
      expect(signingKeyFromDirectory(JSON.parse(Buffer.from(response.body).toString())).keyid).toBe(keyid);
    }
    // Still under access control otherwise: a key in the URL is refused.
    expect((await get(`${t.url}${SIGNING_DIRECTORY_PATH}?api_key=${secret}`)).status).toBe(400);
    // And only that path is public.
    expect((await get(`${t.url}/tokens`)).status).toBe(401);
  });

  it("exposes the signature headers to browsers without any CORS setup too", async () => {
    const response = await signed(`${t.url}/tokens`, { "x-api-key": secret });
    expect(response.headers.get("access-control-expose-headers")).toBe(
      "signature, signature-input, content-digest",
    );
  });

  it("signs a 401 refusal, a keyed answer and a 404", async () => {
    const refused = await signed(`${t.url}/tokens`, { "x-request-id": "no-key" });
    expect(refused.status).toBe(401);
    expect(outcome(refused, { publicKey: keyid, requestId: "no-key" })).toBe("ok");
    const answered = await signed(`${t.url}/tokens`, { "x-request-id": "keyed", "x-api-key": secret });
    expect(answered.status).toBe(200);
    expect(outcome(answered, { publicKey: keyid, requestId: "keyed" })).toBe("ok");
    // (Without CORS: with it, its catch-all OPTIONS route makes an unknown path a 405.)
    const unknown = await signed(`${t.url}/no/such/path`, { "x-request-id": "nope", "x-api-key": secret });
    expect(unknown.status).toBe(404);
    expect(outcome(unknown, { publicKey: keyid, requestId: "nope" })).toBe("ok");
  });

  it("never signs a refused WebSocket upgrade", async () => {
    const socket = new WebSocket(`${t.url.replace("http", "ws")}/quote-stream`, {
      headers: { "x-sign-request": "true" },
    });
    const refusal = await new Promise<{ status: number | undefined; headers: Record<string, unknown> }>(
      (resolve, reject) => {
        socket.on("unexpected-response", (_request, response) => {
          resolve({ status: response.statusCode, headers: response.headers });
          response.resume();
        });
        socket.on("error", reject);
      },
    );
    socket.terminate();
    expect(refusal.status).toBe(401);
    expect(refusal.headers.signature).toBeUndefined();
    expect(refusal.headers["content-digest"]).toBeUndefined();
  });
});

describe("the response-signing key", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-signing-"));
    dirs.push(dir);
    return dir;
  };

  it("is created once in DATA_DIR/chain/ and read back the same after a restart", () => {
    const dataDir = tempDir();
    const first = loadResponseSigningKey(dataDir);
    expect(responseSigningKeyFile(dataDir)).toBe(path.join(dataDir, "chain", "response-signing.json"));
    expect(loadResponseSigningKey(dataDir).address).toBe(first.address);
  });

  it("comes from an operator's file when one is named, which must exist", () => {
    const file = path.join(tempDir(), "shared-signing.json");
    expect(() => loadResponseSigningKey(tempDir(), file)).toThrow();
    const shared = keypairFromSeed(new Uint8Array(32).fill(3));
    writeKeypairFile(file, shared);
    expect(loadResponseSigningKey(tempDir(), file).address).toBe(shared.address);
  });
});

describe("the signing hook on its own", () => {
  const key = keypairFromSeed(new Uint8Array(32).fill(5));

  it("signs the bytes a stream sends, and fails a stream past its bound rather than sign part of it", async () => {
    expect(MAX_SIGNED_STREAM_BYTES).toBe(16 * 1024 * 1024);
    // Fastify's own ids would be req-1, req-2, ...: take the caller's, as build-app.ts does.
    const app = Fastify({ requestIdHeader: "x-request-id" });
    installResponseSigning(app, key, { now: () => 1_700_000_000_000, maxStreamBytes: 1_000 });
    app.get("/stream", async (_request, reply) =>
      reply.type("text/plain").send(Readable.from([Buffer.from("one "), "two ", new Uint8Array([0x33])])),
    );
    app.get("/large", async (_request, reply) =>
      reply.type("text/plain").send(Readable.from(["x".repeat(1_001)])),
    );
    app.get("/bytes", async (_request, reply) =>
      reply.type("application/octet-stream").send(Buffer.from([0, 1, 2])),
    );
    try {
      const headers = { "x-sign-request": "true", "x-request-id": "s" };
      const options = { publicKey: key.address, requestId: "s", now: 1_700_000_000 };
      const stream = await app.inject({ url: "/stream", headers });
      expect(stream.body).toBe("one two 3");
      expect(stream.headers["content-digest"]).toBe(sha256Digest(Buffer.from("one two 3")));
      expect(outcome(injected(stream), options)).toBe("ok");
      const bytes = await app.inject({ url: "/bytes", headers });
      expect(outcome(injected(bytes), options)).toBe("ok");
      const large = await app.inject({ url: "/large", headers });
      expect(large.statusCode).toBe(500);
      expect(large.body).not.toContain("xxxx");
      expect(outcome(injected(large), options)).toBe("ok");
    } finally {
      await app.close();
    }
  });
});

/** An injected response as the verifier takes it. */
function injected(response: {
  statusCode: number;
  headers: Record<string, string | number | string[] | undefined>;
  rawPayload: Buffer;
}): ReceivedResponse {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : String(value));
  }
  return { status: response.statusCode, headers, body: response.rawPayload };
}
