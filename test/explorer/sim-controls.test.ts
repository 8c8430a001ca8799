/**
 * The explorer's simulator panel (issue 40), in Chromium against a development venue with its embedded
 * simulator: the Status view moves the simulator's clock on and starts and ends an upstream outage; a
 * market's page pauses, resumes and settles it, and the venue shows each change at once (the relay
 * syncs after it). The relay bounds what it passes on, and says what the simulator refused.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SETTLED = { timeout: 30_000, interval: 100 };

let t: TestServer;
let browser: Browser;
let ticker: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true" } });
  const response = await fetch(`${t.url}/api/v1/markets?status=active&limit=1`);
  ticker = ((await response.json()) as { markets: { ticker: string }[] }).markets[0]?.ticker as string;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const venueMarket = async () =>
  (await (await fetch(`${t.url}/api/v1/market/${ticker}`)).json()) as { status: string; result: string };
const badge = (page: Page) => page.locator("main .badge").first().textContent();
const simNow = async (page: Page) => Number(await page.getByTestId("sim-clock").getAttribute("data-now"));

describe("the explorer's simulator panel", () => {
  it("moves the simulator's clock on, and starts and ends an upstream outage, from the Status view", async () => {
    const context = await browser.context({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await page.goto(`${t.url}/#/status`);
      await page.getByTestId("sim-clock").waitFor();
      const before = await simNow(page);
      await page.getByRole("button", { name: "+1 hour" }).click();
      await expect
        .poll(() => page.getByTestId("sim-message").textContent(), SETTLED)
        .toBe("Clock moved on an hour.");
      expect((await simNow(page)) - before).toBeGreaterThanOrEqual(3_600);
      expect(await page.getByTestId("sim-clock").textContent()).toContain("+1 h ahead");

      await page.getByRole("button", { name: "Start an upstream outage" }).click();
      await expect
        .poll(() => page.getByTestId("sim-faults").textContent(), SETTLED)
        .toBe("every upstream request fails");
      // The venue's own upstream requests fail now too.
      const book = await fetch(`${t.url}/api/v1/orderbook/${ticker}`);
      expect(book.status).toBeGreaterThanOrEqual(500);
      await page.screenshot({ path: join(OUTPUT, "simulator-panel-desktop.png"), fullPage: true });
      await page.getByRole("button", { name: "End the outage" }).click();
      await expect.poll(() => page.getByTestId("sim-faults").textContent(), SETTLED).toBe("none");
      expect((await fetch(`${t.url}/api/v1/orderbook/${ticker}`)).status).toBe(200);
    } finally {
      await context.close();
    }
  });

  it("pauses, resumes and settles a market from its page, and the venue shows each change at once", async () => {
    const context = await browser.context({ viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(`${t.url}/#/market/${ticker}`);
      await page.getByTestId("market-sim-controls").waitFor();
      expect(await badge(page)).toBe("active");

      await page.getByRole("button", { name: "Pause" }).click();
      await expect.poll(() => badge(page), SETTLED).toBe("inactive");
      expect((await venueMarket()).status).toBe("inactive");
      await page.getByRole("button", { name: "Resume" }).click();
      await expect.poll(() => badge(page), SETTLED).toBe("active");

      const ladderRows = () => page.locator('[data-testid="ladder"] tr[data-side]').count();
      await expect.poll(ladderRows, SETTLED).toBeGreaterThan(0);
      await page.getByRole("button", { name: "Settle yes" }).click();
      await expect.poll(() => badge(page), SETTLED).toBe("determined");
      // A settled market has no book: the last one seen goes.
      expect(await ladderRows()).toBe(0);
      expect(await venueMarket()).toMatchObject({ status: "determined", result: "yes" });
      // Settled: nothing left to pause or settle.
      expect(await page.getByRole("button", { name: /Pause|Settle/ }).count()).toBe(0);
      await page.screenshot({ path: join(OUTPUT, "simulator-market-phone.png"), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it("bounds what it relays and says what the simulator refused", async () => {
    const post = (path: string, body: string) =>
      fetch(`${t.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect((await post("/explorer/sim/clock", JSON.stringify({ pad: "x".repeat(5_000) }))).status).toBe(413);
    expect(
      (await post(`/explorer/sim/markets/${"X".repeat(129)}/lifecycle`, '{"status":"active"}')).status,
    ).toBe(400);
    const backwards = await post("/explorer/sim/clock", JSON.stringify({ advanceSeconds: -60 }));
    expect(backwards.status).toBe(400);
    expect(((await backwards.json()) as { msg: string }).msg).toMatch(/^the simulator refused: /);
    const unknown = await post("/explorer/sim/markets/NOPE-1/lifecycle", '{"status":"inactive"}');
    expect(unknown.status).toBe(400);
  });
});
