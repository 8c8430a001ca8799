/**
 * The typed client's errors carry the catalogue's retry hint and the service's Retry-After, so a bot
 * can tell "wait and try again" (a server still loading) from "this request will never work".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import { MarketsClient, OddsgateApiError } from "../../src/client/markets.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";

let app: ZodApp;
let client: MarketsClient;

beforeAll(async () => {
  app = await buildApp({
    config: QUIET_DEVELOPMENT,
    // Never loaded: every catalogue read answers 503 not_ready.
    catalog: new CatalogHolder(),
    access: openAccess(),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  client = new MarketsClient({ baseUrl: `http://127.0.0.1:${typeof address === "object" && address?.port}` });
});
afterAll(async () => app?.close());

async function failure(call: Promise<unknown>): Promise<OddsgateApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OddsgateApiError);
  return error as OddsgateApiError;
}

describe("client errors", () => {
  it("marks a 503 retryable and carries its Retry-After", async () => {
    const error = await failure(client.getEvent("ANY-EVENT"));
    expect(error.status).toBe(503);
    expect(error.code).toBe("not_ready");
    expect(error.retryable).toBe(true);
    expect(error.retryAfterSeconds).toBe(1);
  });

  it("marks a refused request as not retryable, with no Retry-After", async () => {
    const error = await failure(client.listEvents({ limit: -1 }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("bad_request");
    expect(error.retryable).toBe(false);
    expect(error.retryAfterSeconds).toBeUndefined();
  });

  it("treats a 5xx without our body as retryable", () => {
    const error = new OddsgateApiError(502, "http_error", "<html>bad gateway</html>", null);
    expect(error.retryable).toBe(true);
    expect(new OddsgateApiError(404, "http_error", "gone", null).retryable).toBe(false);
  });
});
