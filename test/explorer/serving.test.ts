/**
 * How the explorer is served: its page and assets open without a key in production (the data behind
 * them still needs one), hashed assets cached for a year and the page revalidated, a content-security
 * policy of this origin only, and `EXPLORER=false` leaving `/` unanswered.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import Fastify from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import { loadConfig } from "../../src/config.js";
import { toWireError } from "../../src/http/errors.js";
import { EXPLORER_BUILD_DIR, registerExplorer } from "../../src/http/explorer.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";
import type { SimulatorControls } from "../../src/http/sim-relay.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";

const apps: ZodApp[] = [];

async function app(settings: Record<string, string>, simulator?: SimulatorControls): Promise<ZodApp> {
  const config = loadConfig({}, { LOG_LEVEL: "silent", ...settings });
  const built = await buildApp({
    ...(simulator ? { simulator } : {}),
    config,
    catalog: new CatalogHolder(),
    access: {
      mode: config.MODE,
      keys: { lookup: () => undefined, check: async () => undefined },
      rateStore: new MemoryRateStore(),
      limits: { anonymous: 0, standard: 0, pro: 0 },
    },
  });
  apps.push(built);
  return built;
}

let script: string;
beforeAll(() => {
  // The page is built by `npm run build`; this builds it only when web/ changed since.
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  const found = readdirSync(join(EXPLORER_BUILD_DIR, "assets")).find((name) => name.endsWith(".js"));
  expect(found).toBeDefined();
  script = `/assets/${found}`;
}, 120_000);
afterAll(async () => {
  for (const built of apps) await built.close();
});

describe("serving the explorer", () => {
  it("serves the page and its assets without a key in production, and nothing else", async () => {
    const production = await app({ MODE: "production" });
    const page = await production.inject({ method: "GET", url: "/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain('<div id="app">');
    const asset = await production.inject({ method: "GET", url: script });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const settings = await production.inject({ method: "GET", url: "/explorer/config.json" });
    expect(settings.json()).toEqual({ mode: "production", sandbox: false, simulator: false });
    // The data is not open: the page has to ask for a key.
    const data = await production.inject({ method: "GET", url: "/api/v1/events" });
    expect(data.statusCode).toBe(401);
    expect(data.json()).toMatchObject({ code: "unauthorized" });
    // Only the built files are open, not whatever path is asked for.
    const other = await production.inject({ method: "GET", url: "/assets/../../package.json" });
    expect(other.statusCode).not.toBe(200);
  });

  it("offers the simulator panel in development only: a production venue has no /explorer/sim route", async () => {
    const controls: SimulatorControls = { url: "http://127.0.0.1:9", syncNow: async () => {} };
    const development = await app({ MODE: "development" }, controls);
    const production = await app({ MODE: "production" }, controls);
    const settingsOf = async (built: ZodApp) =>
      (await built.inject({ method: "GET", url: "/explorer/config.json" })).json();
    expect(await settingsOf(development)).toMatchObject({ mode: "development", simulator: true });
    expect(await settingsOf(production)).toMatchObject({ mode: "production", simulator: false });
    // Nothing listens where the controls point: the relay says so rather than hanging.
    const unreachable = await development.inject({ method: "GET", url: "/explorer/sim/status" });
    expect(unreachable.json()).toMatchObject({ code: "upstream_unavailable" });
    expect(development.hasRoute({ method: "POST", url: "/explorer/sim/clock" })).toBe(true);
    expect(production.hasRoute({ method: "POST", url: "/explorer/sim/clock" })).toBe(false);
    expect(production.hasRoute({ method: "GET", url: "/explorer/sim/status" })).toBe(false);
  });

  it("caches hashed assets for good, revalidates the page, and sends a CSP of this origin only", async () => {
    const development = await app({ MODE: "development" });
    const page = await development.inject({ method: "GET", url: "/" });
    expect(page.headers["cache-control"]).toBe("no-cache");
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    // Every script the page loads is one of ours, from this origin, under the policy (no inline script).
    const scripts = [...page.body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/assets\/[\w-]+\.js"/);
      expect(body).toBe("");
    }
    const asset = await development.inject({ method: "GET", url: script });
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    const icon = await development.inject({ method: "GET", url: "/favicon.svg" });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers["cache-control"]).toBe("no-cache");
  });

  it("sends the built files compressed to a browser that accepts it, the same bytes once decoded", async () => {
    const development = await app({ MODE: "development" });
    const plain = await development.inject({ method: "GET", url: script });
    const encoded = await development.inject({
      method: "GET",
      url: script,
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(encoded.headers["content-encoding"]).toBe("br");
    expect(encoded.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(String(encoded.headers.vary)).toMatch(/accept-encoding/i);
    expect(encoded.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(brotliDecompressSync(encoded.rawPayload).equals(plain.rawPayload)).toBe(true);
  });

  it("relays the sandbox's JSON-RPC only where the sandbox controls are offered, and only the page's methods", async () => {
    const relayApp = async (mode: "development" | "production", sandbox: boolean) => {
      const bare = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
      bare.setValidatorCompiler(validatorCompiler);
      bare.setSerializerCompiler(serializerCompiler);
      bare.setErrorHandler((error, _request, reply) => {
        const wire = toWireError(error);
        return reply.code(wire.status).send(wire.body);
      });
      // A port nothing listens on: a relayed call fails, a refused one never gets that far.
      registerExplorer(bare, { enabled: true, mode, sandbox, rpcUrl: "http://127.0.0.1:9" });
      apps.push(bare);
      return bare;
    };
    const call = (app: ZodApp, method: string) =>
      app.inject({
        method: "POST",
        url: "/explorer/rpc",
        payload: { jsonrpc: "2.0", id: 1, method, params: [] },
      });
    // A production page has no sandbox controls: the chain stays behind its own listener's checks.
    const production = await relayApp("production", false);
    expect((await call(production, "sendTransaction")).statusCode).toBe(404);
    const development = await relayApp("development", true);
    const refused = await call(development, "getProgramAccounts");
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: "bad_request" });
    expect((await call(development, "getSlot")).json()).toMatchObject({ code: "upstream_unavailable" });
  });

  it("answers 404 at / with EXPLORER=false", async () => {
    const off = await app({ MODE: "development", EXPLORER: "false" });
    const page = await off.inject({ method: "GET", url: "/" });
    expect(page.statusCode).toBe(404);
    expect(page.json()).toEqual({ code: "not_found", msg: "no route GET /" });
    expect((await off.inject({ method: "GET", url: script })).statusCode).toBe(404);
  });

  it("refuses an EXPLORER setting that is not a boolean, naming it", () => {
    expect(() => loadConfig({ EXPLORER: "maybe" })).toThrow(/EXPLORER/);
  });
});
