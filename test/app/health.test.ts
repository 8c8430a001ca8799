/**
 * Health for operators (issue 22 item 5, issue 20 item 3): `/health-check` answers reads as soon as
 * the catalogue is loaded and names what is starting or degraded; `/health-check/live` always
 * answers; `/health-check/ready` answers 200 only once the chain accounts are in place and storage and
 * the chain are up. Dependencies are cut with a TCP proxy the test closes, as a network would.
 */
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { buildApp } from "../../src/app/build-app.js";
import {
  chainProbe,
  HealthMonitor,
  type HealthReport,
  type Probe,
  redisProbe,
  storageProbe,
  upstreamProbe,
} from "../../src/app/health.js";
import type { RunningServer } from "../../src/app/start-server.js";
import { loadConfig } from "../../src/config.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createPostgresDatabase, REDIS_TEST_URL, redisTestPrefix } from "../support/services.js";
import { CuttableProxy, proxied, targetOf } from "../support/tcp-proxy.js";

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

describe("a server starting up", () => {
  let t: TestServer | undefined;
  afterAll(async () => t?.stop());

  it("answers reads and /live at once, and is ready only once the chain accounts are in place", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held: (server: RunningServer) => void = () => {};
    const holding = new Promise<RunningServer>((resolve) => {
      held = resolve;
    });
    const starting = startTestServer({
      catalogue: miniCatalogue(),
      beforeStartupWork: async (server) => {
        held(server);
        await gate;
      },
    });
    const { url } = await holding;

    const events = await get(url, "/api/v1/events");
    expect(events.status).toBe(200);
    expect(events.json().events.length).toBeGreaterThan(0);

    const health = await get(url, "/health-check");
    expect(health.status).toBe(200);
    expect(health.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(health.text).toBe("starting: chainAccounts");

    const live = await get(url, "/health-check/live");
    expect(live.status).toBe(200);
    const report: HealthReport = live.json();
    expect(report).toMatchObject({ status: "starting", live: true, ready: false });
    expect(report.parts.chainAccounts).toEqual({ ok: false, required: true, state: "starting" });
    expect(report.parts.catalogue).toMatchObject({
      ok: true,
      state: "loaded",
      events: miniCatalogue().events.length,
    });

    const ready = await get(url, "/health-check/ready");
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBe("1");
    expect(ready.json()).toEqual({ code: "not_ready", msg: "not ready: chainAccounts starting" });

    release();
    t = await starting;
    const after = await get(url, "/health-check/ready");
    expect(after.status).toBe(200);
    const done: HealthReport = after.json();
    expect(done).toMatchObject({ status: "ok", live: true, ready: true });
    expect(Object.keys(done.parts).sort()).toEqual(
      ["catalogue", "chain", "chainAccounts", "storage", "upstream"].sort(),
    );
    expect(done.parts.chainAccounts).toEqual({ ok: true, required: true, state: "ready" });
    expect(done.parts.storage).toMatchObject({ ok: true, required: true, state: "up" });
    expect(done.parts.chain).toMatchObject({
      ok: true,
      required: true,
      state: "up",
      slot: expect.any(Number),
    });
    expect(done.parts.upstream).toEqual({ ok: true, required: false, state: "closed" });
    expect((await get(url, "/health-check")).text).toBe("ok");
  });
});

describe("in production, with Redis cut", () => {
  const proxy = new CuttableProxy(targetOf(REDIS_TEST_URL));
  const redisKeys = redisTestPrefix();
  let t: TestServer;
  let secret: string;
  let storage: Storage;

  beforeAll(async () => {
    await proxy.open();
    t = await startTestServer({
      catalogue: miniCatalogue(),
      settings: {
        MODE: "production",
        RATE_LIMIT_STANDARD: "0",
        REDIS_URL: proxied(REDIS_TEST_URL, proxy),
        REDIS_PREFIX: redisKeys.prefix,
      },
    });
    storage = await openStorage(loadConfig({}, t.settings));
    ({ secret } = await createKey(storage.db, { name: "load balancer" }));
  });
  afterAll(async () => {
    await t?.stop();
    await storage?.close();
    await proxy.cut();
    await redisKeys.cleanup();
  });

  it("refuses a caller without a key on every health route", async () => {
    for (const path of ["/health-check", "/health-check/live", "/health-check/ready"]) {
      const answer = await get(t.url, path);
      expect(answer.status, path).toBe(401);
      expect(answer.json().code).toBe("unauthorized");
    }
  });

  it("names redis as degraded, stays ready (the API serves without it), and shows no internals", async () => {
    const key = { "x-api-key": secret };
    expect((await get(t.url, "/health-check", key)).text).toBe("ok");
    expect((await get(t.url, "/health-check/ready", key)).json().parts.redis).toMatchObject({ ok: true });

    await proxy.cut();
    // Probes are cached for a second: the report changes on the first probe after the cut.
    await expect
      .poll(async () => (await get(t.url, "/health-check", key)).text, { timeout: 5_000 })
      .toBe("degraded: redis");
    const ready = await get(t.url, "/health-check/ready", key);
    expect(ready.status).toBe(200);
    const report: HealthReport = ready.json();
    expect(report).toMatchObject({ status: "degraded", ready: true });
    expect(report.parts.redis).toEqual({ ok: false, required: false, state: "down" });
    for (const secretish of ["127.0.0.1", String(proxy.port), "redis://", t.settings.DATA_DIR as string])
      expect(ready.text).not.toContain(secretish);

    await proxy.open();
    await expect
      .poll(async () => (await get(t.url, "/health-check", key)).text, { timeout: 5_000 })
      .toBe("ok");
  });
});

/** An app over a loaded catalogue whose health report comes from `probes`. */
async function appWith(
  probes: Record<string, Probe>,
  options: {
    mode?: "development" | "production";
    cacheMs?: number;
    timeoutMs?: number;
    stuckMs?: number;
  } = {},
): Promise<{ app: ZodApp; url: string }> {
  const catalog = new CatalogHolder();
  const dir = tempDir();
  const loaded = await startStorageWithCatalogue(dir.dir);
  catalog.replace(loaded);
  const health = new HealthMonitor(probes, {
    mode: options.mode ?? "development",
    cacheMs: options.cacheMs ?? 0,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.stuckMs ? { stuckMs: options.stuckMs } : {}),
  });
  const app = await buildApp({ config: QUIET_DEVELOPMENT, catalog, access: openAccess(), health });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  apps.push({ app, close: () => Promise.all([health.close(), dir.cleanup()]) });
  return { app, url };
}

/** A real catalogue, loaded from SQLite storage the way the server loads it. */
async function startStorageWithCatalogue(dir: string) {
  const { saveCatalogue } = await import("../../src/markets/store.js");
  const storage = await openStorage({ DATA_DIR: dir });
  try {
    await saveCatalogue(storage.db, "health-test", miniCatalogue());
    const holder = new CatalogHolder();
    return await holder.load(storage.db);
  } finally {
    await storage.close();
  }
}

const apps: { app: ZodApp; close: () => Promise<unknown> }[] = [];
afterEach(async () => {
  for (const { app, close } of apps.splice(0)) {
    await app.close();
    await close();
  }
});

/** A chain whose getSlot the test controls. */
function fakeChain(getSlot: () => Promise<bigint>) {
  const calls = { count: 0 };
  return {
    calls,
    chain: {
      getSlot: () => {
        calls.count++;
        return getSlot();
      },
    },
  };
}

describe("PostgreSQL unreachable", () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: CuttableProxy;
  let storage: Storage;
  const dir = tempDir();

  beforeAll(async () => {
    database = await createPostgresDatabase();
    proxy = new CuttableProxy(targetOf(database.url));
    await proxy.open();
    storage = await openStorage({ DATA_DIR: dir.dir, DATABASE_URL: proxied(database.url, proxy) });
  });
  afterAll(async () => {
    await storage?.close();
    await proxy?.cut();
    await database?.drop();
    await dir.cleanup();
  });

  it("is not ready and names storage, then recovers when it is back", async () => {
    const { url } = await appWith({ storage: storageProbe(storage.db) }, { timeoutMs: 2_000 });
    expect((await get(url, "/health-check/ready")).status).toBe(200);

    await proxy.cut();
    const ready = await get(url, "/health-check/ready");
    expect(ready.status).toBe(503);
    expect(ready.json()).toEqual({
      code: "not_ready",
      msg: expect.stringMatching(/^not ready: storage (down|timeout)$/),
    });
    expect((await get(url, "/health-check")).text).toBe("degraded: storage");
    const live = await get(url, "/health-check/live");
    expect(live.status).toBe(200);
    expect(live.json()).toMatchObject({
      status: "degraded",
      ready: false,
      parts: { storage: { ok: false } },
    });

    await proxy.open();
    expect((await get(url, "/health-check/ready")).status).toBe(200);
  });
});

describe("the upstream's circuit breaker", () => {
  it("open: degraded naming upstream, still ready", async () => {
    // A port nothing listens on: every call fails, and one failure opens the breaker.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = new UpstreamClient({
      baseUrl: `http://127.0.0.1:${port}`,
      timeoutMs: 1_000,
      breaker: { volumeThreshold: 1, resetTimeoutMs: 60_000 },
    });
    try {
      const { url } = await appWith({ upstream: upstreamProbe(client) });
      expect((await get(url, "/health-check")).text).toBe("ok");
      await expect(client.get("markets")).rejects.toThrow();
      expect(client.circuitOpen).toBe(true);

      expect((await get(url, "/health-check")).text).toBe("degraded: upstream");
      const ready = await get(url, "/health-check/ready");
      expect(ready.status).toBe(200);
      expect(ready.json()).toMatchObject({
        status: "degraded",
        ready: true,
        parts: { upstream: { ok: false, required: false, state: "open" } },
      });
    } finally {
      await client.close();
    }
  });
});

describe("the chain", () => {
  it("hung: reported as a timeout within the bound, and not ready", async () => {
    const { chain } = fakeChain(() => new Promise(() => {}));
    const { url } = await appWith({ chain: chainProbe(chain) }, { timeoutMs: 100 });
    // The probe never settles: an answer at all, naming the timeout, is the bound at work.
    const ready = await get(url, "/health-check/ready");
    expect(ready.status).toBe(503);
    expect(ready.json().msg).toBe("not ready: chain timeout");
  });

  it("never answering: live until the probe has hung past its bound, then /live says restart", async () => {
    const { chain } = fakeChain(() => new Promise(() => {}));
    const hungRedis: Probe = { required: false, io: true, check: () => new Promise(() => {}) };
    const { url } = await appWith(
      { chain: chainProbe(chain), redis: hungRedis },
      { timeoutMs: 50, stuckMs: 300 },
    );
    const live = await get(url, "/health-check/live");
    expect(live.status).toBe(200);
    expect(live.json()).toMatchObject({ live: true, ready: false });
    // Only a required part's hung probe ends liveness: redis hangs as long and is named by nothing.
    await expect
      .poll(async () => (await get(url, "/health-check/live")).status, { timeout: 5_000, interval: 50 })
      .toBe(503);
    expect((await get(url, "/health-check/live")).json()).toEqual({
      code: "not_ready",
      msg: "not live: chain left a probe unanswered for over 0.3 s; restart the process",
    });
  });

  it("failing: down, with the failure shown in development only", async () => {
    const failing = () => Promise.reject(new Error("connect ECONNREFUSED 10.1.2.3:8899"));
    const development = await appWith({ chain: chainProbe(fakeChain(failing).chain) });
    // /ready waits for the probes; /live then answers from them.
    expect((await get(development.url, "/health-check/ready")).status).toBe(503);
    const shown: HealthReport = (await get(development.url, "/health-check/live")).json();
    expect(shown.parts.chain).toEqual({
      ok: false,
      required: true,
      state: "down",
      detail: "connect ECONNREFUSED 10.1.2.3:8899",
    });

    const production = await appWith({ chain: chainProbe(fakeChain(failing).chain) }, { mode: "production" });
    const ready = await get(production.url, "/health-check/ready");
    expect(ready.json().msg).toBe("not ready: chain down");
    const live = await get(production.url, "/health-check/live");
    expect(live.json().parts.chain).toEqual({ ok: false, required: true, state: "down" });
    expect(live.text).not.toContain("10.1.2.3");
  });

  it("stalled: a slot that has not moved for the stall time", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      let slot = 100n;
      const { url } = await appWith({ chain: chainProbe(fakeChain(async () => slot).chain, 10_000) });
      expect((await get(url, "/health-check/ready")).json().parts.chain).toMatchObject({
        state: "up",
        slot: 100,
      });
      vi.setSystemTime(Date.now() + 9_000);
      expect((await get(url, "/health-check/ready")).status).toBe(200);
      vi.setSystemTime(Date.now() + 2_000);
      const stalled = await get(url, "/health-check/ready");
      expect(stalled.status).toBe(503);
      expect(stalled.json().msg).toBe("not ready: chain stalled");
      slot = 101n;
      expect((await get(url, "/health-check/ready")).json().parts.chain).toMatchObject({
        state: "up",
        slot: 101,
      });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a load balancer polling hard", () => {
  it("probes once per cache period however many requests it sends", async () => {
    const { chain, calls } = fakeChain(async () => 7n);
    const { url } = await appWith({ chain: chainProbe(chain) }, { cacheMs: 60_000 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        get(url, ["/health-check", "/health-check/live", "/health-check/ready"][i % 3] as string),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(calls.count).toBe(1);
  });
});

describe("Redis in development", () => {
  it("shows why it is down", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { url } = await appWith({ redis: await redisProbe(`redis://127.0.0.1:${port}`) });
    const ready = await get(url, "/health-check/ready");
    expect(ready.status).toBe(200);
    expect(ready.json().parts.redis).toEqual({
      ok: false,
      required: false,
      state: "down",
      detail: expect.stringContaining("ECONNREFUSED"),
    });
  });
});

describe("before the catalogue has loaded", () => {
  it("is live, not ready, and /health-check answers the contract's 503", async () => {
    const app = await buildApp({
      config: QUIET_DEVELOPMENT,
      catalog: new CatalogHolder(),
      access: openAccess(),
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    apps.push({ app, close: async () => {} });
    const live = await get(url, "/health-check/live");
    expect(live.status).toBe(200);
    expect(live.json()).toMatchObject({
      status: "starting",
      ready: false,
      parts: { catalogue: { ok: false, required: true, state: "loading" } },
    });
    const ready = await get(url, "/health-check/ready");
    expect(ready.status).toBe(503);
    expect(ready.json()).toEqual({ code: "not_ready", msg: "not ready: catalogue loading" });
    const health = await get(url, "/health-check");
    expect(health.status).toBe(503);
    expect(health.json()).toMatchObject({ code: "mint_info_not_initialized", reason: "not_ready" });
  });
});
