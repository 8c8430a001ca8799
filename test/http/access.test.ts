/** Access control end to end: keys, modes, the URL-key refusal, and rate limits (contract §4). */
import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createKey,
  hashSecret,
  type IssuedKey,
  listKeys,
  revokeKey,
  rotateKey,
} from "../../src/api-keys/store.js";
import { startServer } from "../../src/app/start-server.js";
import { MarketsClient, OddsgateApiError } from "../../src/client/markets.js";
import { type ConfigInput, loadConfig } from "../../src/config.js";
import { openStorage } from "../../src/storage/database.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, TEST_ANCHOR, type TestServer } from "../support/server.js";
import { REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";

/** Every route of the service, with a body that is valid where it takes one. */
const ROUTES: { method: "GET" | "POST"; path: string; body?: unknown }[] = [
  { method: "GET", path: "/api/v1/event/KXHIGHNY-26NOV23?withNestedMarkets=true" },
  { method: "GET", path: "/api/v1/events" },
  { method: "GET", path: "/api/v1/market/KXHIGHNY-26NOV23-B47.5" },
  { method: "GET", path: "/api/v1/market/by-mint/{mint}" },
  { method: "GET", path: "/api/v1/markets" },
  { method: "POST", path: "/api/v1/markets/batch", body: { tickers: ["KXHIGHNY-26NOV23-B47.5"] } },
  { method: "GET", path: "/api/v1/outcome_mints" },
  { method: "POST", path: "/api/v1/filter_outcome_mints", body: { addresses: ["x"] } },
  { method: "GET", path: "/api/v1/series" },
  { method: "GET", path: "/api/v1/series/KXHIGHNY" },
  { method: "GET", path: "/api/v1/tags_by_categories" },
  { method: "GET", path: "/api/v1/filters_by_sports" },
  { method: "GET", path: "/api/v1/search?q=nba" },
  // Relayed to the upstream (the simulator, serving the demo catalogue, which has this event too).
  {
    method: "GET",
    path: `/api/v1/event/KXHIGHNY/KXHIGHNY-26NOV23/forecast_percentile_history?percentiles=5000&startTs=${TEST_ANCHOR}&endTs=${TEST_ANCHOR + 3_600}&periodInterval=60`,
  },
  {
    method: "GET",
    path: `/api/v1/event/by-mint/{mint}/forecast_percentile_history?percentiles=5000&startTs=${TEST_ANCHOR}&endTs=${TEST_ANCHOR + 3_600}&periodInterval=60`,
  },
  {
    method: "GET",
    path: `/api/v1/event/KXHIGHNY-26NOV23/candlesticks?startTs=${TEST_ANCHOR}&endTs=${TEST_ANCHOR + 3_600}&periodInterval=60`,
  },
  { method: "GET", path: "/api/v1/trades?limit=5" },
  { method: "GET", path: "/api/v1/openapi.json" },
  // The trade API, over the demo pools.
  { method: "GET", path: "/tokens-with-decimals" },
  { method: "GET", path: "/tokens" },
  { method: "GET", path: "/venues" },
  {
    method: "GET",
    path: "/order?inputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&outputMint=So11111111111111111111111111111111111111112&amount=1000000",
  },
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/health-check" },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/docs/" },
];

interface Call {
  status: number;
  headers: Headers;
  body: { code?: string; msg?: string };
}

async function call(
  base: string,
  route: (typeof ROUTES)[number],
  headers: Record<string, string> = {},
  query = "",
) {
  const separator = route.path.includes("?") ? "&" : "?";
  const response = await fetch(`${base}${route.path}${query ? `${separator}${query}` : ""}`, {
    method: route.method,
    headers: { ...headers, ...(route.body ? { "content-type": "application/json" } : {}) },
    ...(route.body ? { body: JSON.stringify(route.body) } : {}),
  });
  const text = await response.text();
  let body: Call["body"] = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Text bodies (health-check, metrics, docs) carry no error code.
  }
  return { status: response.status, headers: response.headers, body } satisfies Call;
}

/**
 * A second instance over the first's storage. It uses the first's sandbox chain: one process at a
 * time runs the chain of a database.
 */
/** A second instance on the first one's database; it uses the first one's chain, with a key of its own. */
async function startSecondInstance(first: {
  t: TestServer;
  issue: (options: { name: string }) => Promise<IssuedKey>;
}) {
  const { secret } = await first.issue({ name: "second instance" });
  return startServer(
    loadConfig(
      {},
      {
        ...first.t.settings,
        PORT: "0",
        SOLANA_RPC_URL: first.t.server.chain.rpcUrl,
        SOLANA_RPC_KEY: secret,
      },
    ),
  );
}

/** Starts a server over the mini catalogue and issues keys on its storage. */
async function startWithKeys(settings: ConfigInput) {
  const t = await startTestServer({ catalogue: miniCatalogue(), settings });
  const storage = await openStorage(loadConfig({}, t.settings));
  const issue = (options: Parameters<typeof createKey>[1]) => createKey(storage.db, options);
  return {
    t,
    storage,
    issue,
    async stop() {
      await t.stop();
      await storage.close();
    },
  };
}

describe("production mode", () => {
  let server: Awaited<ReturnType<typeof startWithKeys>>;
  let valid: IssuedKey;
  let revoked: IssuedKey;
  let mint: string;

  beforeAll(async () => {
    server = await startWithKeys({ MODE: "production", RATE_LIMIT_STANDARD: "0", DEMO_CATALOGUE: "true" });
    valid = await server.issue({ name: "valid" });
    revoked = await server.issue({ name: "revoked" });
    await revokeKey(server.storage.db, revoked.key.id);
    const client = new MarketsClient({ baseUrl: server.t.url, apiKey: valid.secret });
    const market = await client.getMarket("KXHIGHNY-26NOV23-B47.5");
    mint = Object.values(market.accounts)[0]!.yesMint;
    for (const route of ROUTES) route.path = route.path.replace("{mint}", mint);
  });
  afterAll(async () => server?.stop());

  it.each(ROUTES.map((r, index) => [r.method, r.path.replace(/\?.*/, ""), index] as const))(
    "%s %s: no key 401, revoked key 401, key in the query 400, valid key 200",
    async (_method, _path, index) => {
      const route = ROUTES[index]!;
      const base = server.t.url;
      const anonymous = await call(base, route);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.code).toBe("unauthorized");
      const withRevoked = await call(base, route, { "x-api-key": revoked.secret });
      expect(withRevoked.status).toBe(401);
      expect(withRevoked.body.code).toBe("unauthorized");
      for (const name of ["api_key", "apiKey", "x-api-key", "api-key", "key", "token", "access_token"]) {
        const inQuery = await call(base, route, { "x-api-key": valid.secret }, `${name}=${valid.secret}`);
        expect(inQuery.status, name).toBe(400);
        expect(inQuery.body.code).toBe("api_key_in_query");
      }
      const ok = await call(base, route, { "x-api-key": valid.secret });
      expect(ok.status).toBe(200);
    },
  );

  it("refuses unknown keys and unknown routes alike without a valid key", async () => {
    expect((await call(server.t.url, { method: "GET", path: "/api/v1/nope" })).status).toBe(401);
    const wrong = await call(server.t.url, ROUTES[1]!, { "x-api-key": "og_not-a-real-key" });
    expect(wrong.status).toBe(401);
    const validNotFound = await call(
      server.t.url,
      { method: "GET", path: "/api/v1/nope" },
      { "x-api-key": valid.secret },
    );
    expect(validNotFound.status).toBe(404);
  });

  it("accepts a key the moment it is created, without waiting for the next refresh", async () => {
    // An earlier miss may have just refreshed: this first use waits out the miss throttle, not a periodic refresh.
    const fresh = await server.issue({ name: "fresh" });
    expect((await call(server.t.url, ROUTES[1]!, { "x-api-key": fresh.secret })).status).toBe(200);
  });

  it("lets the typed client authenticate with its apiKey option", async () => {
    const client = new MarketsClient({ baseUrl: server.t.url, apiKey: valid.secret });
    expect((await client.listEvents()).events).toHaveLength(3);
    const anonymous = new MarketsClient({ baseUrl: server.t.url });
    await expect(anonymous.listEvents()).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("declares the api_key security scheme in the OpenAPI document", async () => {
    const response = await fetch(`${server.t.url}/api/v1/openapi.json`, {
      headers: { "x-api-key": valid.secret },
    });
    const document = (await response.json()) as {
      components: { securitySchemes: Record<string, unknown> };
      security: unknown;
    };
    expect(document.components.securitySchemes.api_key).toEqual({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
    });
    expect(document.security).toEqual([{ api_key: [] }]);
  });

  it("honours a rotation: the old secret stops at once without grace, lingers with it", async () => {
    const key = await server.issue({ name: "rotating" });
    const events = ROUTES[1]!;
    const rotated = await rotateKey(server.storage.db, key.key.id, 0);
    const status = (secret: string) => async () =>
      (await call(server.t.url, events, { "x-api-key": secret })).status;
    // The new secret is unknown to the ring: its first use makes the ring read the rotation.
    expect(await status(rotated.secret)()).toBe(200);
    expect(await status(key.secret)()).toBe(401);
    const graced = await rotateKey(server.storage.db, key.key.id, 60);
    expect(await status(graced.secret)()).toBe(200);
    expect(await status(rotated.secret)()).toBe(200);
    // A short grace runs out: the old secret is refused afterwards.
    const final = await rotateKey(server.storage.db, key.key.id, 1);
    expect(await status(final.secret)()).toBe(200);
    expect(await status(graced.secret)()).toBe(200);
    await expect.poll(status(graced.secret), { timeout: 10_000, interval: 100 }).toBe(401);
    expect(await status(final.secret)()).toBe(200);
  });
});

describe("revocation across instances", () => {
  it("takes effect on every instance sharing the database at its next key refresh", async () => {
    const first = await startWithKeys({ MODE: "production" });
    const second = await startSecondInstance(first);
    try {
      const key = await first.issue({ name: "doomed" });
      const events = ROUTES[1]!;
      // A new key is accepted by every instance at its first use there (a miss makes the ring look).
      for (const base of [first.t.url, second.url])
        expect((await call(base, events, { "x-api-key": key.secret })).status).toBe(200);
      await revokeKey(first.storage.db, key.key.id);
      // Refused on each instance once its key ring's periodic refresh (REFRESH_MS, 0.4 s) reads the revocation.
      for (const base of [first.t.url, second.url]) {
        const status = async () => (await call(base, events, { "x-api-key": key.secret })).status;
        await expect.poll(status, { timeout: 10_000, interval: 20 }).toBe(401);
      }
    } finally {
      await second.close();
      await first.stop();
    }
  });
});

describe("development mode rate limits", () => {
  let server: Awaited<ReturnType<typeof startWithKeys>>;
  beforeAll(async () => {
    server = await startWithKeys({
      RATE_LIMIT_ANONYMOUS: "5",
      RATE_LIMIT_STANDARD: "3",
      RATE_LIMIT_PRO: "1000",
    });
  });
  afterAll(async () => server?.stop());

  it("serves anonymous callers, then answers 429 with Retry-After once their bucket is empty", async () => {
    const route = { method: "GET" as const, path: "/api/v1/series" };
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const ok = await call(server.t.url, route);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("ratelimit-policy")).toBe('"anonymous";q=5;w=60');
      expect(ok.headers.get("x-ratelimit-limit")).toBe("5");
      expect(ok.headers.get("ratelimit")).toMatch(/^"anonymous";r=\d+;t=\d+$/);
      remaining.push(ok.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const limited = await call(server.t.url, route);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limit_exceeded");
    expect(limited.body.msg).toContain("5 requests per minute");
    // One token comes back every 12 s at 5 per minute.
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(11);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(12);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    // The RateLimit header's reset names the same moment as Retry-After.
    expect(limited.headers.get("ratelimit")).toBe(`"anonymous";r=0;t=${limited.headers.get("retry-after")}`);
  });

  it("does not let X-Forwarded-For pick a fresh bucket unless TRUST_PROXY is set", async () => {
    const spoofed = await call(
      server.t.url,
      { method: "GET", path: "/api/v1/series" },
      { "x-forwarded-for": "203.0.113.9" },
    );
    expect(spoofed.status).toBe(429);
  });

  it("limits a key by its tier, in its own bucket", async () => {
    const standard = await server.issue({ name: "standard", tier: "standard" });
    const pro = await server.issue({ name: "pro", tier: "pro" });
    const route = { method: "GET" as const, path: "/api/v1/series" };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call(server.t.url, route, { "x-api-key": standard.secret })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const proCall = await call(server.t.url, route, { "x-api-key": pro.secret });
    expect(proCall.status).toBe(200);
    expect(proCall.headers.get("ratelimit-policy")).toBe('"pro";q=1000;w=60');
  });
});

describe("development mode keys it never issued", () => {
  it("serves a key it never issued as anonymous, says so, and still refuses a revoked or rotated-away one", async () => {
    const server = await startWithKeys({ RATE_LIMIT_ANONYMOUS: "100" });
    try {
      const route = { method: "GET" as const, path: "/api/v1/series" };
      const issued = await server.issue({ name: "dev" });
      const rotating = await server.issue({ name: "rotating" });
      // A client left a real DFlow key in its environment: it is no credential here, and no refusal.
      const foreign = await call(server.t.url, route, { "x-api-key": "dflow_live_4f9c2e7a1b" });
      expect(foreign.status).toBe(200);
      expect(foreign.headers.get("x-api-key-status")).toBe("unknown");
      expect(foreign.headers.get("ratelimit-policy")).toBe('"anonymous";q=100;w=60');
      // A known key is served as itself, with no such header.
      const known = await call(server.t.url, route, { "x-api-key": issued.secret });
      expect(known.status).toBe(200);
      expect(known.headers.get("x-api-key-status")).toBeNull();
      expect(known.headers.get("ratelimit-policy")).toBe('"standard";q=600;w=60');
      // Revoked: refused as in production, on every instance's next look at storage.
      await revokeKey(server.storage.db, issued.key.id);
      let revoked = await call(server.t.url, route, { "x-api-key": issued.secret });
      await vi.waitFor(
        async () => {
          revoked = await call(server.t.url, route, { "x-api-key": issued.secret });
          expect(revoked.status, "revoked").toBe(401);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(revoked.body.code).toBe("unauthorized");
      // Rotated away without grace, as this instance saw it valid before.
      const seen = await call(server.t.url, route, { "x-api-key": rotating.secret });
      expect(seen.headers.get("ratelimit-policy")).toBe('"standard";q=600;w=60');
      await rotateKey(server.storage.db, rotating.key.id);
      await expect
        .poll(async () => (await call(server.t.url, route, { "x-api-key": rotating.secret })).status, {
          timeout: 10_000,
          interval: 50,
        })
        .toBe(401);
    } finally {
      await server.stop();
    }
  });
});

describe("TRUST_PROXY", () => {
  it("believes only the address the trusted proxy added, so clients cannot pick their bucket", async () => {
    const server = await startWithKeys({ RATE_LIMIT_ANONYMOUS: "1", TRUST_PROXY: "1" });
    try {
      const route = { method: "GET" as const, path: "/api/v1/series" };
      // What one proxy in front appends: "<whatever the client claimed>, <the client's real address>".
      const via = (claimed: string, real: string) => ({ "x-forwarded-for": `${claimed}, ${real}` });
      expect((await call(server.t.url, route, via("10.0.0.1", "203.0.113.1"))).status).toBe(200);
      expect((await call(server.t.url, route, via("10.0.0.2", "203.0.113.1"))).status).toBe(429);
      expect((await call(server.t.url, route, via("10.0.0.2", "203.0.113.2"))).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe("refused requests", () => {
  it("draw from the caller's address bucket and carry the rate-limit headers", async () => {
    const server = await startWithKeys({ MODE: "production", RATE_LIMIT_ANONYMOUS: "2" });
    try {
      const route = { method: "GET" as const, path: "/api/v1/series" };
      const guesses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const refused = await call(server.t.url, route, { "x-api-key": `og_guess${i}` });
        expect(refused.headers.get("ratelimit-policy")).toBe('"anonymous";q=2;w=60');
        guesses.push(refused.status);
      }
      expect(guesses).toEqual([401, 401, 429]);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(!redisAvailable)("shared limits through Redis", () => {
  const redis = redisTestPrefix();
  afterEach(async () => redis.cleanup());

  it("enforces one bucket across two instances", async () => {
    const settings = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: redis.prefix, RATE_LIMIT_ANONYMOUS: "6" };
    const first = await startWithKeys(settings);
    const second = await startSecondInstance(first);
    try {
      const route = { method: "GET" as const, path: "/api/v1/series" };
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await call(i % 2 ? second.url : first.t.url, route)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    } finally {
      await second.close();
      await first.stop();
    }
  });
});

describe("secrets at rest and in logs", () => {
  it("stores only a hash of each key, nowhere the secret", async () => {
    const server = await startWithKeys({ MODE: "production" });
    try {
      const issued = await server.issue({ name: "at rest" });
      const rotated = await rotateKey(server.storage.db, issued.key.id, 30);
      const rows = await server.storage.db.selectFrom("api_keys").selectAll().execute();
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(issued.secret);
      expect(dump).not.toContain(rotated.secret);
      expect(dump).toContain(hashSecret(rotated.secret));
      // The SQLite files themselves, write-ahead log included.
      for (const file of ["oddsgate.db", "oddsgate.db-wal"]) {
        const bytes = fs.readFileSync(path.join(String(server.t.settings.DATA_DIR), file));
        expect(bytes.includes(issued.secret)).toBe(false);
        expect(bytes.includes(rotated.secret)).toBe(false);
      }
    } finally {
      await server.stop();
    }
  });

  it("never writes a key to the log, offered in a header or in the URL, valid or not", async () => {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const t = await startTestServer({
      catalogue: miniCatalogue(),
      settings: { MODE: "production" },
      logger: pino({ level: "trace" }, capture),
    });
    const storage = await openStorage(loadConfig({}, t.settings));
    try {
      const key = await createKey(storage.db, { name: "logged?" });
      const base = t.url;
      await fetch(`${base}/api/v1/events`, { headers: { "x-api-key": key.secret } });
      await fetch(`${base}/api/v1/events?api_key=${key.secret}`);
      await fetch(`${base}/api/v1/events`, { headers: { "x-api-key": "og_WRONGwrongWRONG" } });
      await fetch(`${base}/api/v1/nope?key=${key.secret}`, { headers: { "x-api-key": key.secret } });
      await fetch(`${base}/api/v1/events?token=${key.secret}&access_token=${key.secret}`);
      await fetch(`${base}/quote-stream?api-key=${key.secret}`, { headers: { "x-api-key": key.secret } });
      await t.stop();
      const log = lines.join("");
      expect(log).toContain("/api/v1/events");
      expect(log).not.toContain(key.secret);
      expect(log).not.toContain("og_WRONGwrongWRONG");
      expect((await listKeys(storage.db))[0]?.lastUsedAt).not.toBeNull();
    } finally {
      await storage.close();
    }
  });
});

describe("client errors", () => {
  it("carries the code of a refused request", async () => {
    const server = await startWithKeys({ MODE: "production" });
    try {
      const client = new MarketsClient({ baseUrl: server.t.url, apiKey: "og_unknown" });
      const error = await client.listSeries().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OddsgateApiError);
      expect(error).toMatchObject({ status: 401, code: "unauthorized" });
    } finally {
      await server.stop();
    }
  });
});
