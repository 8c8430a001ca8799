/**
 * The explorer in Chromium against a whole server (app, sandbox chain, and a simulator whose clock
 * the test moves): search and open an event, its fan chart drawn with data, a market whose ladder is
 * the relayed order book and whose trade list shows a new trade of the tape within 2 s, then a test
 * wallet made in the browser buys 2 yes contracts, the market is determined, and the redemption pays
 * 2 USDC. Screenshots of every view at desktop and phone size go to test-output/explorer/.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USDC_MINT } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { EXPLORER_BUILD_DIR } from "../../src/http/explorer.js";
import { syncFromUpstream } from "../../src/markets/sync.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

/** What the page publishes for tests on its window (the test runs without the DOM's types). */
interface PageGlobals {
  __oddsgate?: { charts: Record<string, unknown>; marks: Record<string, number> };
  /** When each trade row was first drawn (ms since the epoch), recorded by the observer this test adds. */
  __tradeShown?: Record<string, number>;
  MutationObserver: new (
    callback: () => void,
  ) => { observe(target: unknown, options: { childList: boolean; subtree: boolean }): void };
  document: {
    body: unknown;
    documentElement: { scrollWidth: number; dataset: Record<string, string | undefined> };
    activeElement: { getAttribute(name: string): string | null } | null;
    querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null }>;
  };
}

const VENUE_SEED = "explorer-test";
const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/**
 * The longest a wait on the page or the venue may take before it fails: far beyond what either needs,
 * because CI runs the whole suite on two cores. Each wait ends as soon as its state is reached.
 */
const SETTLED = { timeout: 20_000, interval: 100 };
/** The product's figure: a trade shows on the market page within 2 s of existing upstream. */
const TRADE_SHOWN_MS = 2_000;

let simulator: RunningSimulator;
/** Seconds the simulator's clock runs ahead of the real one: moved forward to bring new trades. */
let clockAhead = 0;
let t: TestServer;
let browser: Browser;
let desktop: BrowserContext;
let page: Page;
let eventTicker: string;
let marketTicker: string;
/** An event without a numeric forecast (a Fed decision): its chart draws its outcomes' prices. */
let categoricalTicker: string;
const figures: Record<string, number> = {};
/** Script errors and console errors of the page (a CSP violation is one). */
const pageErrors: string[] = [];

interface ApiMarket {
  ticker: string;
  status: string;
  volume: number;
  result: string;
  accounts: Record<string, { yesMint: string; isInitialized: boolean; redemptionStatus: string | null }>;
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${t.url}${path}`);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

const simulatorBase = () => simulator.url.replace(/\/trade-api\/v2$/, "");

async function shoot(target: Page, name: string, size: "desktop" | "phone"): Promise<void> {
  await target.screenshot({ path: join(OUTPUT, `${name}-${size}.png`) });
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  // Dated today (not the suites' fixed anchor), so its markets trade and its forecasts move now.
  const catalogue = generateDemoCatalogue({ anchor: Math.floor(Date.now() / 86_400_000) * 86_400 });
  simulator = await startSimulator({
    catalogue,
    host: "127.0.0.1",
    port: 0,
    now: () => Math.floor(Date.now() / 1000) + clockAhead,
  });
  t = await startTestServer({
    catalogue,
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, UPSTREAM_URL: simulator.url },
  });
  // An event with a forecast and a tokenized, active market that has at least 2 yes contracts offered.
  const { events } = await api<{ events: { ticker: string; markets: ApiMarket[] }[] }>(
    "/api/v1/events?seriesTickers=KXHIGHNY&status=active&withNestedMarkets=true&sort=volume&limit=10",
  );
  for (const event of events) {
    const candidates = event.markets
      .filter((m) => m.status === "active" && m.accounts[USDC_MINT]?.isInitialized)
      .sort((a, b) => b.volume - a.volume);
    for (const market of candidates) {
      const book = await api<{ no_bids: Record<string, number> }>(`/api/v1/orderbook/${market.ticker}`);
      if (Object.values(book.no_bids).reduce((sum, size) => sum + size, 0) >= 2) {
        eventTicker = event.ticker;
        marketTicker = market.ticker;
        break;
      }
    }
    if (marketTicker) break;
  }
  expect(marketTicker).toBeDefined();
  browser = await launchChromium();
  desktop = await browser.context({ viewport: DESKTOP });
  page = await desktop.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await simulator?.close();
  if (Object.keys(figures).length > 0) {
    writeFileSync(join(OUTPUT, "figures.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log("explorer figures:", figures);
  }
});

describe("the explorer in a browser", { timeout: 120_000 }, () => {
  it("searches and opens an event whose fan chart has drawn forecast points", async () => {
    await page.goto(`${t.url}/`);
    await page.locator('[data-testid="event-link"]').first().waitFor();
    await expect
      .poll(() => page.locator('[data-testid="stream-state"]').getAttribute("data-state"), SETTLED)
      .toBe("live");
    // Each event leads with its most likely outcomes' chances, highest first.
    const listed = await page.$$eval('[data-testid="event-chances"]', (lists) =>
      lists.map((list) =>
        [...list.querySelectorAll("li[data-chance]")].map((item) => ({
          chance: Number(item.getAttribute("data-chance")),
          text: item.querySelector(".chance")?.textContent ?? "",
        })),
      ),
    );
    expect(listed.length).toBeGreaterThan(5);
    for (const outcomes of listed) {
      expect(outcomes.length).toBeGreaterThan(0);
      for (const outcome of outcomes) expect(outcome.text).toMatch(/^(\d{1,3}%|<1%|>99%)$/);
      const chances = outcomes.map((outcome) => outcome.chance);
      expect(chances).toEqual([...chances].sort((a, b) => b - a));
    }
    await shoot(page, "markets", "desktop");
    // Keyboard: "/" goes to the search box, Enter searches.
    await page.keyboard.press("/");
    await expect
      .poll(
        () =>
          page.evaluate(
            () => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute("type") ?? null,
          ),
        SETTLED,
      )
      .toBe("search");
    await page.getByRole("searchbox", { name: "Search" }).fill(eventTicker);
    await page.getByRole("searchbox", { name: "Search" }).press("Enter");
    await expect.poll(() => page.locator('[data-testid="event-link"]').count(), SETTLED).toBe(1);
    expect(await page.locator("table.events tbody tr").first().textContent()).toContain(eventTicker);
    await page.locator('[data-testid="event-link"]').first().click();
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).__oddsgate?.marks.fanDrawn !== undefined,
    );
    // Read back from the chart's own API: the median series holds the points, the bands as many.
    const drawn = await page.evaluate(() => {
      const fan = (globalThis as unknown as PageGlobals).__oddsgate?.charts.fan as {
        median: { data(): { time: number; value: number }[] };
        bands: { data(): unknown[] }[];
        chart: { timeScale(): { getVisibleLogicalRange(): unknown } };
      };
      return {
        median: fan.median.data(),
        bands: fan.bands.map((band) => band.data().length),
        visible: fan.chart.timeScale().getVisibleLogicalRange() !== null,
      };
    });
    expect(drawn.median.length).toBeGreaterThan(1);
    for (const point of drawn.median) expect(Number.isFinite(point.value)).toBe(true);
    expect(drawn.bands).toEqual([
      drawn.median.length,
      drawn.median.length,
      drawn.median.length,
      drawn.median.length,
    ]);
    expect(drawn.visible).toBe(true);
    await expect.poll(() => page.getByTestId("forecast-latest").textContent(), SETTLED).toMatch(/median .+°/);
    // Its markets by chance, most likely first; every price in the one form (27¢, 27.5¢, never 27.0¢).
    const rows = await page.$$eval('[data-testid="event-markets"] tbody tr', (elements) =>
      elements.map((row) => ({
        chance: row.getAttribute("data-chance"),
        shown: row.querySelector('[data-testid="market-chance"]')?.textContent ?? "",
        prices: [...row.querySelectorAll("td.num")].map((cell) => cell.textContent ?? "").slice(1, 4),
      })),
    );
    expect(rows.length).toBeGreaterThan(2);
    const chances = rows.map((row) => Number(row.chance));
    expect(rows.every((row) => row.chance !== "")).toBe(true);
    expect(chances).toEqual([...chances].sort((a, b) => b - a));
    for (const row of rows) {
      expect(row.shown).toMatch(/^(\d{1,3}%|<1%|>99%)$/);
      for (const text of row.prices) expect(text).toMatch(/^(\d{1,3}(\.[1-9])?¢|—)$/);
    }
    await shoot(page, "event", "desktop");
  });

  it("opens a market whose ladder is the order book, and shows a new trade within 2 s", async () => {
    await page.locator(`a[href="#/market/${marketTicker}"]`).click();
    await page.locator('[data-testid="ladder"] tr[data-side]').first().waitFor();
    // The page follows the stream; the book may move between the two reads, so read both until they agree.
    const ladderIsBook = async () => {
      const rows = await page.$$eval('[data-testid="ladder"] tr[data-side]', (elements) =>
        elements.map((row) => ({
          side: row.getAttribute("data-side"),
          price: row.getAttribute("data-price"),
          size: Number(row.getAttribute("data-size")),
        })),
      );
      const book = await api<{ yes_bids: Record<string, number>; no_bids: Record<string, number> }>(
        `/api/v1/orderbook/${marketTicker}`,
      );
      const expected = [
        ...Object.entries(book.no_bids).map(([price, size]) => ({
          side: "ask",
          price: (1 - Number(price)).toFixed(4),
          size,
        })),
        ...Object.entries(book.yes_bids).map(([price, size]) => ({ side: "bid", price, size })),
      ];
      const key = (row: { side: string | null; price: string | null }) => `${row.side}${row.price}`;
      return (
        JSON.stringify([...rows].sort((a, b) => key(a).localeCompare(key(b)))) ===
        JSON.stringify([...expected].sort((a, b) => key(a).localeCompare(key(b))))
      );
    };
    await expect.poll(ladderIsBook, { ...SETTLED, interval: 300 }).toBe(true);
    await expect
      .poll(() => page.locator('[data-testid="trades"] tr[data-trade-id]').count(), SETTLED)
      .toBeGreaterThan(0);
    // The page records when it draws each trade row, so the figure is the page's own and not the time
    // this test takes to look under load (the page's clock is the machine's, as this test's is).
    await page.evaluate(() => {
      const window = globalThis as unknown as PageGlobals;
      const shown: Record<string, number> = {};
      window.__tradeShown = shown;
      new window.MutationObserver(() => {
        const now = Date.now();
        for (const row of window.document.querySelectorAll('[data-testid="trades"] tr[data-trade-id]')) {
          const id = row.getAttribute("data-trade-id");
          if (id && shown[id] === undefined) shown[id] = now;
        }
      }).observe(window.document.body, { childList: true, subtree: true });
    });

    // Another connection trades: move the exchange's clock until this market's tape has a new trade.
    const newestTrade = async () =>
      (
        (await (await fetch(`${simulator.url}/markets/trades?ticker=${marketTicker}&limit=1`)).json()) as {
          trades: { trade_id: string }[];
        }
      ).trades[0]?.trade_id;
    const before = await newestTrade();
    let fresh = before;
    // The trade exists upstream from the clock's move that brought it: the figure counts from there.
    let existed = 0;
    for (let step = 0; step < 1_440 && fresh === before; step++) {
      existed = Date.now();
      clockAhead += 60;
      fresh = await newestTrade();
    }
    expect(fresh).not.toBe(before);
    await page.locator(`[data-testid="trades"] tr[data-trade-id="${fresh}"]`).waitFor(SETTLED);
    const shown = await page.evaluate(
      (id) => (globalThis as unknown as PageGlobals).__tradeShown?.[id],
      fresh as string,
    );
    expect(shown).toBeDefined();
    figures.tradeShownMs = (shown as number) - existed;
    expect(figures.tradeShownMs).toBeLessThanOrEqual(TRADE_SHOWN_MS);
    await shoot(page, "market", "desktop");
  });

  it("makes a test wallet, funds it, buys 2 yes contracts, and redeems them for 2 USDC once determined", async () => {
    await page.goto(`${t.url}/#/wallet`);
    await page.getByText("TEST WALLET", { exact: false }).first().waitFor();
    await page.getByRole("button", { name: "Make a test wallet" }).click();
    const address = await page.getByTestId("wallet-address").textContent();
    expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    await page.getByRole("button", { name: "Airdrop 1 SOL" }).click();
    // Each step's own "done": the airdrop's would still show while the faucet runs.
    await expect
      .poll(() => page.getByTestId("wallet-status").textContent(), SETTLED)
      .toBe("Airdrop of 1 SOL: done");
    await expect.poll(() => page.getByTestId("sol-balance").textContent(), SETTLED).toBe("1");
    await page.getByRole("button", { name: "Faucet 100 USDC" }).click();
    await expect
      .poll(() => page.getByTestId("wallet-status").textContent(), SETTLED)
      .toBe("Faucet of 100 USDC: done");
    await expect
      .poll(() => page.getByTestId("usdc-balance").getAttribute("data-amount"), SETTLED)
      .toBe("100000000");

    await page.goto(`${t.url}/#/market/${marketTicker}`);
    await page.locator('[data-testid="ladder"] tr[data-side]').first().waitFor();
    await page.getByRole("button", { name: "Quote" }).click();
    await expect.poll(() => page.getByTestId("quote").textContent(), SETTLED).toContain("You get2 YES");
    expect(await page.getByTestId("quote").textContent()).toMatch(/Price impact.*%.*Fees/);
    await page.getByRole("button", { name: "Buy 2 YES" }).click();
    await expect
      .poll(() => page.getByTestId("order-status").textContent(), { ...SETTLED, timeout: 30_000 })
      .toMatch(/^Filled: bought 2 YES for [\d.]+ USDC/);
    await shoot(page, "market-filled", "desktop");

    await page.goto(`${t.url}/#/wallet`);
    const position = page.locator(`[data-testid="position"][data-ticker="${marketTicker}"]`);
    await expect.poll(() => position.getAttribute("data-contracts"), SETTLED).toBe("2");
    expect(await position.getAttribute("data-side")).toBe("yes");
    const usdcBefore = BigInt((await page.getByTestId("usdc-balance").getAttribute("data-amount")) ?? "0");
    expect(usdcBefore).toBeLessThan(100_000_000n);
    await shoot(page, "wallet-position", "desktop");

    // The exchange determines the market; a sync brings it into storage (run here, not waited for),
    // and the venue's catalogue poll (every CATALOG_POLL_MS) serves it.
    const moved = await fetch(`${simulatorBase()}/_sim/markets/${marketTicker}/lifecycle`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ status: "determined", result: "yes" }),
    });
    expect(moved.status).toBe(200);
    await syncFromUpstream({
      db: t.server.storage.db,
      venueSeed: VENUE_SEED,
      upstream: t.server.upstream.client,
      tokenize: "tradable",
    });
    await expect
      .poll(async () => {
        const market = await api<ApiMarket>(`/api/v1/market/${marketTicker}`);
        return `${market.status} ${market.accounts[USDC_MINT]?.redemptionStatus}`;
      }, SETTLED)
      .toBe("determined open");
    // Trading follows the reloaded catalogue just after the API serves it: the Redeem button is
    // pressed once the venue quotes the redemption (2 contracts for 2 USDC).
    const { accounts } = await api<ApiMarket>(`/api/v1/market/${marketTicker}`);
    const redemption = new URLSearchParams({
      inputMint: accounts[USDC_MINT]?.yesMint ?? "",
      outputMint: USDC_MINT,
      amount: "2000000",
    });
    await expect
      .poll(async () => {
        const answer = await fetch(`${t.server.tradeUrl}/order?${redemption}`);
        const body = (await answer.json()) as { outAmount?: string; code?: string };
        return answer.status === 200 ? body.outAmount : `${answer.status} ${body.code}`;
      }, SETTLED)
      .toBe("2000000");
    await page.reload();
    await position.getByRole("button", { name: "Redeem" }).click();
    await expect
      .poll(() => page.getByTestId("usdc-balance").getAttribute("data-amount"), {
        ...SETTLED,
        timeout: 30_000,
      })
      .toBe(String(usdcBefore + 2_000_000n));
    await expect.poll(() => position.count(), SETTLED).toBe(0);
    await shoot(page, "wallet", "desktop");
  });

  it("shows the operations view", async () => {
    await page.goto(`${t.url}/#/status`);
    // "ok" from the health report (or the plain check) once the venue has started.
    await expect.poll(() => page.getByTestId("health").textContent(), SETTLED).toBe("ok");
    await expect
      .poll(async () => Number((await page.getByTestId("slot").textContent())?.replace(/,/g, "")), SETTLED)
      .toBeGreaterThan(0);
    // The instance's connected stream clients, from its metrics.
    await expect
      .poll(
        async () => /^\d[\d,]*$/.test((await page.getByTestId("stream-clients").textContent()) ?? ""),
        SETTLED,
      )
      .toBe(true);
    await shoot(page, "status", "desktop");
    // "/" from another view goes back to the events list with the cursor in its search box.
    await page.keyboard.press("/");
    await expect
      .poll(
        () =>
          page.evaluate(
            () => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute("type") ?? null,
          ),
        SETTLED,
      )
      .toBe("search");
    expect(new URL(page.url()).hash).toBe("#/");
  });

  it("charts a categorical event's leading outcomes' prices instead of an empty fan", async () => {
    const { events } = await api<{ events: { ticker: string }[] }>(
      "/api/v1/events?seriesTickers=KXFEDDECISION&status=active&sort=volume&limit=1",
    );
    categoricalTicker = events[0]?.ticker ?? "";
    expect(categoricalTicker).not.toBe("");
    await page.goto(`${t.url}/#/event/${categoricalTicker}`);
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).__oddsgate?.marks.pricesDrawn !== undefined,
      undefined,
      { timeout: SETTLED.timeout },
    );
    expect(await page.getByTestId("fan-chart").getAttribute("data-mode")).toBe("outcomes");
    const lines = await page.evaluate(() => {
      const drawn = (globalThis as unknown as PageGlobals).__oddsgate?.charts.outcomes as {
        lines: { data(): { time: number; value: number }[] }[];
      };
      return drawn.lines.map((line) => line.data().map((point) => point.value));
    });
    // Its leading outcomes, each a line of prices (cents, so chances in %), not an empty chart.
    expect(lines.filter((values) => values.length > 1).length).toBeGreaterThanOrEqual(2);
    for (const values of lines) for (const value of values) expect(value).toBeGreaterThanOrEqual(0);
    for (const values of lines) for (const value of values) expect(value).toBeLessThanOrEqual(100);
    // The legend names them as the table ranks them.
    const legend = await page.getByTestId("outcome-legend").locator(".legend-item").allTextContents();
    const ranked = await page
      .locator('[data-testid="event-markets"] [data-testid="market-link"]')
      .allTextContents();
    expect(legend.map((text) => text.trim())).toEqual(ranked.slice(0, legend.length));
    await shoot(page, "event-categorical", "desktop");
  });

  it("fits a phone, in dark, with every view", async () => {
    const phone = await browser.context({
      viewport: PHONE,
      colorScheme: "dark",
      storageState: await desktop.storageState(),
    });
    try {
      const small = await phone.newPage();
      await small.goto(`${t.url}/`);
      await small.locator('[data-testid="event-link"]').first().waitFor();
      // Nothing wider than the screen but the tables, which scroll in their own box.
      expect(
        await small.evaluate(
          () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
        ),
      ).toBeLessThanOrEqual(PHONE.width);
      expect(
        await small.$$eval(
          ".table-wrap",
          (boxes) => boxes.filter((box) => box.scrollWidth > box.clientWidth).length,
        ),
      ).toBe(0);
      await shoot(small, "markets", "phone");
      await small.goto(`${t.url}/#/event/${eventTicker}`);
      await small.waitForFunction(
        () => (globalThis as unknown as PageGlobals).__oddsgate?.marks.fanDrawn !== undefined,
      );
      expect(
        await small.evaluate(
          () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
        ),
      ).toBeLessThanOrEqual(PHONE.width);
      // The event's table fits the screen too, without scrolling in its own box.
      expect(
        await small.$$eval(
          ".table-wrap",
          (boxes) => boxes.filter((box) => box.scrollWidth > box.clientWidth).length,
        ),
      ).toBe(0);
      await shoot(small, "event", "phone");
      await small.goto(`${t.url}/#/event/${categoricalTicker}`);
      await small.waitForFunction(
        () => (globalThis as unknown as PageGlobals).__oddsgate?.marks.pricesDrawn !== undefined,
      );
      expect(
        await small.evaluate(
          () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
        ),
      ).toBeLessThanOrEqual(PHONE.width);
      await shoot(small, "event-categorical", "phone");
      // Determined by now, so its book is empty: the page is drawn once the ladder says so.
      await small.goto(`${t.url}/#/market/${marketTicker}`);
      await small.getByTestId("ladder").getByText("no two-sided book").waitFor();
      expect(
        await small.evaluate(
          () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
        ),
      ).toBeLessThanOrEqual(PHONE.width);
      await shoot(small, "market", "phone");
      await small.goto(`${t.url}/#/wallet`);
      await small.getByTestId("wallet-address").waitFor();
      await shoot(small, "wallet", "phone");
      await small.goto(`${t.url}/#/status`);
      await expect.poll(() => small.getByTestId("health").textContent(), SETTLED).toBe("ok");
      await shoot(small, "status", "phone");
      expect(
        await small.evaluate(
          () => (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme,
        ),
      ).toBe("dark");
    } finally {
      await phone.close();
    }
  });

  it("draws the first fan chart soon after navigation, from a first page of a few hundred kB", async () => {
    // A fresh context: nothing cached.
    const cold = await browser.context({ viewport: DESKTOP });
    try {
      const fresh = await cold.newPage();
      await fresh.goto(`${t.url}/#/event/${eventTicker}`);
      await fresh.waitForFunction(
        () => (globalThis as unknown as PageGlobals).__oddsgate?.marks.fanDrawn !== undefined,
      );
      figures.fanDrawnMs = Math.round(
        await fresh.evaluate(
          () =>
            ((globalThis as unknown as PageGlobals).__oddsgate as { marks: Record<string, number> }).marks
              .fanDrawn as number,
        ),
      );
    } finally {
      await cold.close();
    }
    // Generous here (shared CI machines); the figure itself is reported against the 1 s target.
    expect(figures.fanDrawnMs).toBeLessThan(5_000);
    const html = readFileSync(join(EXPLORER_BUILD_DIR, "index.html"), "utf8");
    const firstPage = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map(
      (match) => match[1] as string,
    );
    figures.firstPageGzipBytes = [
      html,
      ...firstPage.map((path) => readFileSync(join(EXPLORER_BUILD_DIR, path))),
    ]
      .map((body) => gzipSync(body).length)
      .reduce((sum, size) => sum + size, 0);
    expect(figures.firstPageGzipBytes).toBeLessThanOrEqual(300_000);
    // Nothing the page did was refused by its content-security policy, and no script failed.
    expect(pageErrors.filter((text) => /Content Security Policy|Uncaught|TypeError/.test(text))).toEqual([]);
  });
});
