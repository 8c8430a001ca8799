import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";

/** Development settings with no keys and no limits: these tests are about failures, not access. */
const deps = {
  config: { LOG_LEVEL: "silent", TRUST_PROXY: 0, MODE: "development" },
  access: {
    mode: "development",
    keys: { lookup: () => undefined, check: async () => undefined },
    rateStore: new MemoryRateStore(),
    limits: { anonymous: 0, standard: 0, pro: 0 },
  },
} as const;

/** A catalog that fails the way a bug would: with an error full of internals. */
class BrokenCatalog extends CatalogHolder {
  override require(): never {
    throw new TypeError(
      "Cannot read properties of undefined (reading 'json') at /srv/oddsgate/src/catalog.ts:42",
    );
  }
}

let app: ZodApp;
let url: string;
beforeAll(async () => {
  app = await buildApp({ ...deps, catalog: new BrokenCatalog() });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => app?.close());

describe("an unexpected failure", () => {
  it("answers 500 internal with the request id and no stack or internals", async () => {
    const response = await fetch(`${url}/api/v1/event/KXHIGHNY-26NOV23`, {
      headers: { "x-request-id": "crash-1" },
    });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("crash-1");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ code: "internal", msg: expect.any(String) });
    expect(text).not.toMatch(/TypeError|reading 'json'|\/srv\/|catalog\.ts|\bat\b/);
  });

  it("keeps serving afterwards", async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/api/v1/series`)).status).toBe(500);
    expect((await fetch(`${url}/api/v1/nope`)).status).toBe(404);
  });
});

describe("before the catalog has loaded", () => {
  it("reports not ready on health-check and data routes, with Retry-After", async () => {
    const loading = await buildApp({ ...deps, catalog: new CatalogHolder() });
    const base = await loading.listen({ host: "127.0.0.1", port: 0 });
    try {
      // The health check in its reference's code (HealthCheckServiceUnavailableCode), the venue's as `reason`.
      for (const [path, code] of [
        ["/health-check", { code: "mint_info_not_initialized", reason: "not_ready" }],
        ["/api/v1/events", { code: "not_ready" }],
      ] as const) {
        const response = await fetch(`${base}${path}`);
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("1");
        expect(await response.json()).toEqual({ ...code, msg: expect.stringContaining("loading") });
      }
    } finally {
      await loading.close();
    }
  });
});
