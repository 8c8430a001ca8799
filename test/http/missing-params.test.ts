/** A 400 for a missing or invalid query parameter says which, and what it expects, in words. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

async function refusal(path: string): Promise<{ code: string; msg: string }> {
  const response = await fetch(`${t.url}${path}`);
  expect(response.status, path).toBe(400);
  return (await response.json()) as { code: string; msg: string };
}

describe("missing and invalid query parameters", () => {
  it("names a missing parameter and what it expects, not the validator's words", async () => {
    const { msg } = await refusal("/api/v1/event/ANY/candlesticks");
    expect(msg).toContain("query parameter startTs is required: startTs must be a non-negative integer");
    expect(msg).toContain("query parameter periodInterval is required");
    expect(msg).not.toMatch(/received undefined|Invalid input/);
  });

  it("lists the allowed values of an invalid option", async () => {
    const { msg } = await refusal("/api/v1/markets?status=bogus");
    expect(msg).toBe(
      "query parameter status must be one of initialized, active, inactive, closed, determined, finalized",
    );
  });
});
