/**
 * The API reference at /docs/ in Chromium against a whole server: it renders the venue's documents
 * from this server alone (no request leaves 127.0.0.1: no CDN, no outside fonts, no telemetry) and
 * the whole page transfers under 1 MB (its 3.4 MB script goes out compressed). A screenshot goes to
 * test-output/explorer/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const ONE_MB = 1_000_000;

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  t = await startTestServer();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("the API reference page", () => {
  it("renders from this server alone, in under 1 MB transferred", async () => {
    const context = await browser.context({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const requested: string[] = [];
      const finished: Request[] = [];
      const inFlight = new Set<Request>();
      page.on("request", (request) => {
        requested.push(request.url());
        inFlight.add(request);
      });
      page.on("requestfinished", (request) => {
        finished.push(request);
        inFlight.delete(request);
      });
      page.on("requestfailed", (request) => inFlight.delete(request));
      await page.goto(`${t.url}/docs/`);
      // Drawn from the first document: an operation of it, and the link to download it.
      await page.getByText("Prometheus metrics of this instance").first().waitFor({ timeout: 30_000 });
      await page.getByText("Download OpenAPI Document").first().waitFor();
      // Every request the page made has ended (not "networkidle", whose quiet window a loaded machine can miss for 30 s).
      await expect.poll(() => [...inFlight].map((request) => request.url()), { timeout: 30_000 }).toEqual([]);
      const outside = requested.filter((url) => !/^(https?|wss?):\/\/127\.0\.0\.1[:/]/.test(url));
      expect(outside.filter((url) => !url.startsWith("data:") && !url.startsWith("blob:"))).toEqual([]);
      let transferred = 0;
      for (const request of finished) {
        const sizes = await request.sizes();
        transferred += sizes.responseBodySize + sizes.responseHeadersSize;
      }
      console.log(`/docs/ transferred ${transferred} bytes in ${finished.length} requests`);
      expect(transferred).toBeGreaterThan(100_000);
      expect(transferred).toBeLessThan(ONE_MB);
      const script = finished.find((request) => request.url().endsWith("/docs/js/scalar.js"));
      expect((await script?.response())?.headers()["content-encoding"]).toMatch(/^(br|gzip)$/);
      await page.screenshot({ path: join(OUTPUT, "docs-desktop.png") });
    } finally {
      await context.close();
    }
  }, 60_000);
});
