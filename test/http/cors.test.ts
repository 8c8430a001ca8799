import { describe, expect, it } from "vitest";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer } from "../support/server.js";

const preflight = (origin: string) => ({
  method: "OPTIONS",
  headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" },
});

describe("CORS", () => {
  it("is off unless CORS_ORIGINS is set", async () => {
    const t = await startTestServer({ catalogue: miniCatalogue() });
    try {
      const response = await fetch(`${t.url}/api/v1/series`, { headers: { origin: "https://app.example" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      expect((await fetch(`${t.url}/api/v1/series`, preflight("https://app.example"))).status).toBe(405);
    } finally {
      await t.stop();
    }
  });

  it("answers preflights for the configured origins only, before any key is required", async () => {
    const t = await startTestServer({
      catalogue: miniCatalogue(),
      settings: { MODE: "production", CORS_ORIGINS: "https://app.example, https://other.example" },
    });
    try {
      const allowed = await fetch(`${t.url}/api/v1/series`, preflight("https://app.example"));
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(allowed.headers.get("access-control-allow-headers")).toContain("x-api-key");
      const stranger = await fetch(`${t.url}/api/v1/series`, preflight("https://evil.example"));
      expect(stranger.headers.get("access-control-allow-origin")).toBeNull();
      // The actual request still needs its key.
      const unkeyed = await fetch(`${t.url}/api/v1/series`, { headers: { origin: "https://app.example" } });
      expect(unkeyed.status).toBe(401);
      expect(unkeyed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    } finally {
      await t.stop();
    }
  });
});
