/**
 * The token bucket's arithmetic, and what a caller is told about it: a 429's Retry-After and the
 * `RateLimit` header's reset `t` name the same moment (the ratelimit-headers draft), the moment a
 * token is back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import { loadConfig } from "../../src/config.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";

describe("MemoryRateStore", () => {
  it("tells a refused caller to retry when the next token comes, in Retry-After and t alike", () => {
    let now = 1_000_000;
    const store = new MemoryRateStore(() => now);
    try {
      // 60 a minute: one token a second.
      for (let i = 0; i < 60; i++) expect(store.take("a", 60).allowed).toBe(true);
      const refused = store.take("a", 60);
      expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 1 });
      // 5 a minute: one token every 12 s; 5 s later, 7 s are left.
      for (let i = 0; i < 5; i++) store.take("b", 5);
      now += 5_000;
      expect(store.take("b", 5)).toMatchObject({ allowed: false, retryAfterSeconds: 7, resetSeconds: 7 });
    } finally {
      void store.close();
    }
  });

  it("with tokens left, gives the seconds until the bucket is full again as t", () => {
    let now = 1_000_000;
    const store = new MemoryRateStore(() => now);
    try {
      expect(store.take("a", 60)).toEqual({
        allowed: true,
        remaining: 59,
        retryAfterSeconds: 0,
        resetSeconds: 1,
      });
      for (let i = 0; i < 30; i++) store.take("a", 60);
      expect(store.take("a", 60)).toMatchObject({ remaining: 28, resetSeconds: 32 });
      // The last token taken: none left, so t is when the next one arrives.
      for (let i = 0; i < 27; i++) store.take("a", 60);
      now += 500;
      expect(store.take("a", 60)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 1 });
    } finally {
      void store.close();
    }
  });
});

describe("429 headers", () => {
  let app: ZodApp;
  let url: string;
  const rateStore = new MemoryRateStore();
  beforeAll(async () => {
    app = await buildApp({
      config: loadConfig({}, { LOG_LEVEL: "silent" }),
      catalog: new CatalogHolder(),
      access: {
        mode: "development",
        keys: { lookup: () => undefined, check: async () => undefined },
        rateStore,
        limits: { anonymous: 60, standard: 0, pro: 0 },
      },
    });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await rateStore.close();
  });

  it("agree: Retry-After equals the RateLimit header's t", async () => {
    let limited: { headers: Headers; body: unknown } | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      const response = await fetch(`${url}/api/v1/nope`);
      const body: unknown = await response.json();
      if (response.status === 429) limited = { headers: response.headers, body };
    }
    expect(limited?.body).toMatchObject({ code: "rate_limit_exceeded" });
    const retryAfter = limited?.headers.get("retry-after");
    // 60 a minute: the next token is a second away, which is what both headers say.
    expect(retryAfter).toBe("1");
    expect(limited?.headers.get("ratelimit")).toBe(`"anonymous";r=0;t=${retryAfter}`);
  });
});
