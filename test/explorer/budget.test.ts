/**
 * The explorer within its venue's limits, in Chromium, with the development defaults' anonymous limit
 * of 60 requests a minute (the test server's default is unlimited): each view left idle for an hour
 * of the page's time (playwright's fake clock; on a venue without limits, as the hour passes in about
 * a minute) makes at most 12 requests a minute; 40 markets opened
 * one a second of page time (faster in real time, so the server's buckets refill less) meet no 429;
 * and an upstream outage (the simulator failing every request) shows "upstream unavailable since …"
 * over the last data, greyed, with the badge no longer "live", until the upstream answers again.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

/** The page's document, as far as the test reads it (the test runs without the DOM's types). */
interface PageGlobals {
  getComputedStyle(element: unknown): { opacity: string };
  document: { querySelector(selector: string): unknown };
  fetch: (...args: unknown[]) => Promise<unknown>;
  /** Every fetch the page started (its URL), and how many have not settled: counted by the page itself. */
  __budget: Budget;
  MessageChannel: new () => {
    port1: { onmessage: (() => void) | null };
    port2: { postMessage(data: null): void };
  };
}

interface Budget {
  calls: string[];
  pending: number;
  /** Resolves once no fetch is pending, nor starts in the task that settled the last one. */
  settled(): Promise<void>;
}

/** Counts the page's fetches as it starts them (before any script of the page runs). */
function countFetches(): void {
  const window = globalThis as unknown as PageGlobals;
  const real = window.fetch.bind(window);
  let waiters: (() => void)[] = [];
  // A task of its own (a message, which the fake clock does not hold back): a fetch the page starts
  // in reply to one that settled (in the same task's microtasks) is counted as pending first.
  const nextTask = () =>
    new Promise<void>((resolve) => {
      const channel = new window.MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  const budget: Budget = {
    calls: [],
    pending: 0,
    async settled() {
      for (;;) {
        if (budget.pending > 0) await new Promise<void>((resolve) => waiters.push(resolve));
        await nextTask();
        if (budget.pending === 0) return;
      }
    },
  };
  window.__budget = budget;
  window.fetch = (...args: unknown[]) => {
    budget.calls.push(String((args[0] as { url?: string })?.url ?? args[0]));
    budget.pending++;
    return real(...args).finally(() => {
      if (--budget.pending > 0) return;
      const settled = waiters;
      waiters = [];
      for (const resolve of settled) resolve();
    });
  };
}

const fetches = (page: Page) =>
  page.evaluate(() => {
    const { calls, pending } = (globalThis as unknown as PageGlobals).__budget;
    return { count: calls.length, pending };
  });

/**
 * The page's shortest polling period (the status view and the fan chart refresh every 15 s): a step
 * no longer than it fires each poller at most once, so no request is merged with its own in flight.
 */
const POLL_STEP_MS = 15_000;

/** Moves the page's clock on by `ms` in steps of `stepMs`, letting each step's requests settle (real time). */
async function idle(page: Page, ms: number, stepMs = POLL_STEP_MS): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    await page.clock.runFor(stepMs);
    // Awaited in the page, not polled from here: an hour is 240 steps, most of which start a request
    // that settles in milliseconds, so each step costs one round trip to the page beyond the clock's.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`requests still pending ${SETTLED.timeout} ms after a step`)),
        SETTLED.timeout,
      );
    });
    try {
      await Promise.race([
        page.evaluate(() => (globalThis as unknown as PageGlobals).__budget.settled()),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** The longest a wait may take before it fails (each ends as soon as its state is reached). */
const SETTLED = { timeout: 30_000, interval: 100 };
/** The figure: an idle view makes at most this many requests a minute. */
const IDLE_PER_MINUTE = 12;

let simulator: RunningSimulator;
let t: TestServer;
/**
 * The same venue without rate limits, for the idle hour: the page's clock runs an hour in about a
 * minute of real time, so against real-time buckets its requests would arrive sixty times too fast.
 */
let unlimited: TestServer;
let browser: Browser;
let eventTicker: string;
let marketTicker: string;
let markets: string[] = [];

interface ApiMarket {
  ticker: string;
  eventTicker: string;
  status: string;
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  // Dated today, so its markets trade and their books move now.
  const catalogue = generateDemoCatalogue({ anchor: Math.floor(Date.now() / 86_400_000) * 86_400 });
  simulator = await startSimulator({ catalogue, host: "127.0.0.1", port: 0 });
  t = await startTestServer({
    catalogue,
    settings: {
      DEMO_CATALOGUE: "true",
      UPSTREAM_URL: simulator.url,
      // The development default, which the test server otherwise turns off.
      RATE_LIMIT_ANONYMOUS: "60",
    },
  });
  unlimited = await startTestServer({
    catalogue,
    settings: { DEMO_CATALOGUE: "true", UPSTREAM_URL: simulator.url },
  });
  // The test's own requests draw from the anonymous bucket of this address: few of them.
  const response = await fetch(`${t.url}/api/v1/markets?status=active&limit=60`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { markets: ApiMarket[] };
  markets = body.markets.map((market) => market.ticker);
  expect(markets.length).toBeGreaterThanOrEqual(40);
  marketTicker = markets[0] as string;
  eventTicker = (body.markets[0] as ApiMarket).eventTicker;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await unlimited?.stop();
  await simulator?.close();
});

/** The page's requests to the venue (fetches; not its files, not the stream's upgrade), and its 429s. */
function watch(page: Page) {
  const seen = { requests: [] as string[], refused: [] as string[], pending: 0 };
  const isApi = (request: Request) => ["fetch", "xhr"].includes(request.resourceType());
  page.on("request", (request) => {
    if (!isApi(request)) return;
    seen.requests.push(new URL(request.url()).pathname);
    seen.pending++;
  });
  const settle = (request: Request) => {
    if (isApi(request)) seen.pending--;
  };
  page.on("requestfinished", settle);
  page.on("requestfailed", settle);
  page.on("response", (response) => {
    if (response.status() === 429) seen.refused.push(new URL(response.url()).pathname);
  });
  return seen;
}

const badge = (page: Page) => page.getByTestId("stream-state").getAttribute("data-state");

describe("the explorer's budget", { timeout: 600_000 }, () => {
  it("makes at most 12 requests a minute on each view left idle for an hour", async () => {
    const views: [string, string][] = [
      ["markets", "/"],
      ["event", `/event/${eventTicker}`],
      ["market", `/market/${marketTicker}`],
      ["status", "/status"],
    ].filter(([name]) => !process.env.ONLY_VIEW || name === process.env.ONLY_VIEW) as [string, string][];
    const busiest: Record<string, number> = {};
    // The views idle side by side, each in a browser context of its own (as separate visitors) with its
    // own clock: the hour is the same for each.
    await Promise.all(
      views.map(async ([name, path]) => {
        const page = await (await browser.context({ viewport: DESKTOP })).newPage();
        await page.addInitScript(countFetches);
        await page.clock.install();
        const seen = watch(page);
        await page.goto(`${unlimited.url}/#${path}`);
        await page.locator("main h1").first().waitFor();
        await expect.poll(() => badge(page), SETTLED).toBe("live");
        // Past the first minute's loading; then an hour in steps of the shortest polling period (each
        // step's requests settle before the next), each minute's requests counted.
        await idle(page, 60_000);
        const perMinute: number[] = [];
        const busy: string[] = [];
        for (let minute = 0; minute < 60; minute++) {
          const before = (await fetches(page)).count;
          await idle(page, 60_000);
          const made = (await fetches(page)).count - before;
          perMinute.push(made);
          if (made > IDLE_PER_MINUTE) {
            const calls = await page.evaluate(() => (globalThis as unknown as PageGlobals).__budget.calls);
            busy.push(`minute ${minute}: ${calls.slice(before).join(" ")}`);
          }
        }
        busiest[name] = Math.max(...perMinute);
        expect(
          Math.max(...perMinute),
          `${name}: ${perMinute.join(",")} ${busy.join("; ")}`,
        ).toBeLessThanOrEqual(IDLE_PER_MINUTE);
        expect(seen.refused, name).toEqual([]);
        expect(await page.getByTestId("banner").count(), name).toBe(0);
        await page.context().close();
      }),
    );
    console.log("busiest idle minute by view:", busiest);
  });

  it("opens 40 markets one a second without a single 429", async () => {
    const context = await browser.context({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await page.clock.install();
      const seen = watch(page);
      let banners = 0;
      await page.goto(`${t.url}/`);
      await page.locator('[data-testid="event-link"]').first().waitFor();
      for (const ticker of markets.slice(0, 40)) {
        await page.evaluate((hash) => {
          (globalThis as unknown as { location: { hash: string } }).location.hash = hash;
        }, `/market/${ticker}`);
        await page.locator("#market-title").waitFor();
        await expect.poll(() => page.locator("main .muted").first().textContent(), SETTLED).toContain(ticker);
        banners += await page.getByTestId("banner").count();
        await page.clock.runFor(1_000);
      }
      await expect.poll(() => seen.pending, SETTLED).toBe(0);
      console.log(`40 markets: ${seen.requests.length} requests`);
      expect(seen.refused).toEqual([]);
      expect(banners).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("says the upstream is unavailable since when, over its last data greyed, not an empty market", async () => {
    const faults = `${new URL(simulator.url).origin}/_sim/faults`;
    const context = await browser.context({ viewport: DESKTOP });
    const phone = await browser.context({ viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(`${t.url}/#/market/${marketTicker}`);
      await expect.poll(() => badge(page), SETTLED).toBe("live");
      await expect
        .poll(() => page.locator('[data-testid="ladder"] tr[data-side]').count(), SETTLED)
        .toBeGreaterThan(0);
      const levels = await page.locator('[data-testid="ladder"] tr[data-side]').count();
      expect(await page.getByTestId("upstream-banner").count()).toBe(0);

      // Every request to the exchange fails from now on.
      const put = await fetch(faults, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify([{ kind: "status", status: 503 }]),
      });
      expect(put.status).toBe(200);
      const banner = page.getByTestId("upstream-banner");
      await banner.waitFor({ timeout: SETTLED.timeout });
      expect(await banner.textContent()).toMatch(/Upstream unavailable since \d{2}:\d{2}:\d{2}/);
      await expect.poll(() => badge(page), SETTLED).not.toBe("live");
      // The last book is still there, greyed.
      expect(await page.locator('[data-testid="ladder"] tr[data-side]').count()).toBe(levels);
      expect(await page.locator("main").getAttribute("data-stale")).toBe("upstream");
      await expect
        .poll(
          () =>
            page.evaluate(() => {
              const window = globalThis as unknown as PageGlobals;
              return window.getComputedStyle(window.document.querySelector('[data-testid="ladder"]')).opacity;
            }),
          SETTLED,
        )
        .toBe("0.5");
      await page.screenshot({ path: join(OUTPUT, "upstream-outage-desktop.png") });

      const small = await phone.newPage();
      await small.goto(`${t.url}/#/market/${marketTicker}`);
      await small.getByTestId("upstream-banner").waitFor({ timeout: SETTLED.timeout });
      await expect.poll(() => badge(small), SETTLED).not.toBe("live");
      // Opened during the outage: its empty panels say nothing came, not that the market is empty.
      await expect
        .poll(() => small.locator("main").textContent(), SETTLED)
        .toContain("Nothing received: the upstream is unavailable.");
      expect(await small.locator("main").textContent()).not.toMatch(/Empty book|No trades yet/);
      await small.screenshot({ path: join(OUTPUT, "upstream-outage-phone.png") });

      // The upstream answers again: the banner goes, the badge is live again.
      await fetch(faults, { method: "DELETE" });
      await expect.poll(() => banner.count(), { ...SETTLED, timeout: 60_000 }).toBe(0);
      await expect.poll(() => badge(page), SETTLED).toBe("live");
      expect(await page.locator("main").getAttribute("data-stale")).toBeNull();
    } finally {
      await fetch(faults, { method: "DELETE" }).catch(() => {});
      await context.close();
      await phone.close();
    }
  });
});
