/**
 * The explorer in Chromium against a production listener: the page loads without a key, asks for one,
 * keeps it in session storage and sends it only in the x-api-key header (never in a URL), shows no
 * sandbox controls, and polls instead of streaming (a browser cannot put a header on an upgrade).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { loadConfig } from "../../src/config.js";
import { openStorage } from "../../src/storage/database.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

/** The page's storages (the test runs without the DOM's types). */
interface PageStorage {
  sessionStorage: { getItem(name: string): string | null };
  localStorage: { getItem(name: string): string | null };
}

const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");

let t: TestServer;
let key: string;
let url: string;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  t = await startTestServer({
    catalogue: miniCatalogue(),
    settings: { MODE: "production", RATE_LIMIT_STANDARD: "0" },
  });
  url = t.url;
  const storage = await openStorage(loadConfig({}, t.settings));
  try {
    key = (await createKey(storage.db, { name: "explorer" })).secret;
  } finally {
    await storage.close();
  }
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("the explorer on a production instance", () => {
  it("asks for a key, sends it only as x-api-key, and hides the sandbox", async () => {
    const context = await browser.context({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const requests: { url: string; key: string | undefined }[] = [];
      page.on("request", (request) =>
        requests.push({ url: request.url(), key: request.headers()["x-api-key"] }),
      );
      await page.goto(`${url}/`);
      const prompt = page.getByRole("heading", { name: "API key" });
      await prompt.waitFor();
      await expect.poll(() => page.getByTestId("stream-state").getAttribute("data-state")).toBe("polling");
      await page.screenshot({ path: join(OUTPUT, "production-key-desktop.png") });
      await page.getByLabel("Key").fill(key);
      await page.getByRole("button", { name: "Use key" }).click();
      await page.locator('[data-testid="event-link"]').first().waitFor();
      expect(
        await page.evaluate(() =>
          (globalThis as unknown as PageStorage).sessionStorage.getItem("oddsgate.apiKey"),
        ),
      ).toBe(key);
      expect(
        await page.evaluate(() =>
          (globalThis as unknown as PageStorage).localStorage.getItem("oddsgate.apiKey"),
        ),
      ).toBeNull();
      // No sandbox controls, and the stream state says why it polls.
      expect(await page.getByRole("link", { name: "Wallet" }).count()).toBe(0);
      expect(await page.getByTestId("stream-state").getAttribute("data-state")).toBe("polling");
      const apiCalls = requests.filter((request) => new URL(request.url).pathname.startsWith("/api/v1/"));
      expect(apiCalls.length).toBeGreaterThan(0);
      for (const call of requests) expect(call.url).not.toContain(key);
      for (const call of apiCalls.slice(-3)) expect(call.key).toBe(key);
    } finally {
      await context.close();
    }
  });

  it("says a wrong key was refused, rather than just asking again", async () => {
    const context = await browser.context({ viewport: { width: 1280, height: 800 } });
    const phone = await browser.context({ viewport: { width: 390, height: 844 } });
    try {
      for (const [target, size] of [
        [context, "desktop"],
        [phone, "phone"],
      ] as const) {
        const page = await target.newPage();
        await page.goto(`${url}/`);
        await page.getByRole("heading", { name: "API key" }).waitFor();
        // No key offered yet: nothing was refused.
        expect(await page.getByTestId("key-refused").count()).toBe(0);
        await page.getByLabel("Key").fill(`${key.slice(0, -4)}XXXX`);
        await page.getByRole("button", { name: "Use key" }).click();
        const refused = page.getByTestId("key-refused");
        await refused.waitFor();
        expect(await refused.textContent()).toMatch(
          /key this tab used was refused: unknown or revoked API key/,
        );
        expect(await page.getByRole("heading", { name: "API key" }).count()).toBe(1);
        await page.screenshot({ path: join(OUTPUT, `production-wrong-key-${size}.png`) });
        // The right key then works.
        await page.getByLabel("Key").fill(key);
        await page.getByRole("button", { name: "Use key" }).click();
        await page.locator('[data-testid="event-link"]').first().waitFor();
        expect(await page.getByTestId("key-refused").count()).toBe(0);
      }
    } finally {
      await context.close();
      await phone.close();
    }
  });
});
