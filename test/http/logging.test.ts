import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactQueryKeys } from "../../src/app/build-app.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split("\n").filter(Boolean));
    done();
  },
});

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ catalogue: miniCatalogue(), logger: pino({ level: "info" }, capture) });
});
afterAll(async () => t?.stop());

describe("request logging", () => {
  it("writes one line per request with method, status and time", async () => {
    lines.length = 0;
    await fetch(`${t.url}/api/v1/event/KXHIGHNY-26NOV23`, { headers: { "x-request-id": "log-test-1" } });
    const mine = lines.map((l) => JSON.parse(l)).filter((l) => l.reqId === "log-test-1");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      msg: "request",
      method: "GET",
      status: 200,
      url: "/api/v1/event/KXHIGHNY-26NOV23",
    });
    expect(typeof mine[0].ms).toBe("number");
  });

  it("never writes an API key, whether sent as a header or pasted into the URL", async () => {
    lines.length = 0;
    await fetch(`${t.url}/api/v1/events?api_key=og_QUERYSECRET123&limit=1`, {
      headers: { "x-api-key": "og_HEADERSECRET456" },
    });
    await fetch(`${t.url}/api/v1/nope?apiKey=og_QUERYSECRET789`);
    await fetch(`${t.url}/api/v1/events?token=og_TOKENSECRET1&Access-Token=og_TOKENSECRET2`);
    await fetch(`${t.url}/api/v1/ws?api-key=og_STREAMSECRET3`);
    const text = lines.join("\n");
    expect(text).toContain("/api/v1/events");
    expect(text).not.toContain("og_QUERYSECRET123");
    expect(text).not.toContain("og_HEADERSECRET456");
    expect(text).not.toContain("og_QUERYSECRET789");
    for (const secret of ["og_TOKENSECRET1", "og_TOKENSECRET2", "og_STREAMSECRET3"]) {
      expect(text).not.toContain(secret);
    }
  });

  it("redacts key parameters whose names are percent-encoded, as the access check decodes them", () => {
    expect(redactQueryKeys("/a?%61pi_key=og_S1&limit=1&Api%5FKey=og_S2")).toBe(
      "/a?%61pi_key=[redacted]&limit=1&Api%5FKey=[redacted]",
    );
  });

  it("redacts every key-like query parameter and keeps the rest", () => {
    expect(redactQueryKeys("/a?limit=1&api_key=s1&x-api-key=s2&KEY=s3&apikey=s4&keyword=ok")).toBe(
      "/a?limit=1&api_key=[redacted]&x-api-key=[redacted]&KEY=[redacted]&apikey=[redacted]&keyword=ok",
    );
    expect(
      redactQueryKeys("/a?api-key=s1&token=s2&Access_Token=s3&access-token=s4&cursor=ok&apiKey=s5"),
    ).toBe(
      "/a?api-key=[redacted]&token=[redacted]&Access_Token=[redacted]&access-token=[redacted]&cursor=ok&apiKey=[redacted]",
    );
  });
});
