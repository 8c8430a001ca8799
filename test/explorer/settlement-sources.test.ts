/**
 * The explorer in Chromium on an event whose catalogue names settlement sources: the http(s) one is
 * a link, while the `javascript:` one (the upstream catalogue is not trusted) is plain text, so no
 * click on the page can run it, whether or not a content-security policy would stop it.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { event, market, miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

const EVENT = "KXHIGHNY-26NOV23";

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  const catalogue = miniCatalogue();
  catalogue.events = catalogue.events.map((e) =>
    e.ticker === EVENT
      ? event(EVENT, e.seriesTicker, [market(`${EVENT}-B47.5`, EVENT)], {
          settlementSources: [
            { name: "Hostile source", url: "javascript:alert(document.domain)" },
            { name: "Spelled source", url: " JaVa\tScRiPt:alert(1)" },
            { name: "National Weather Service", url: "https://www.weather.gov/" },
          ],
        })
      : e,
  );
  t = await startTestServer({ catalogue });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("settlement sources on the event page", () => {
  it("links only the http(s) source and shows the javascript: ones as text", async () => {
    const context = await browser.context({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      await page.goto(`${t.url}/#/event/${EVENT}`);
      const sources = page.locator("p", { hasText: "Settlement sources:" });
      await sources.waitFor();
      const hrefs = await sources
        .locator("a")
        .evaluateAll((links) =>
          links.map((a) =>
            (a as unknown as { getAttribute(name: string): string | null }).getAttribute("href"),
          ),
        );
      expect(hrefs).toEqual(["https://www.weather.gov/"]);
      expect(await sources.locator("a").innerText()).toContain("National Weather Service");
      expect(await sources.innerText()).toContain("Hostile source");
      expect(await sources.innerText()).toContain("Spelled source");
      expect(await page.locator('[href*="script:" i]').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
