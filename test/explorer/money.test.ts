/**
 * Money shown honestly, in Chromium against a whole server (app, sandbox chain, and a simulator whose
 * clock stands still, so books and bids hold between a quote and its fill): the ticket shows every
 * cost of a buy before it is signed and its total is what the wallet's SOL and USDC balances lose
 * (read from the chain, not through the page); positions show the average cost of the wallet's own
 * fills (as the venue recorded them), their value at the current bid and the P&L; the wallet's fills
 * are marked among the market's recent trades; once the market settles, its page offers Redeem, and
 * the redeemed position stays in the wallet's history with its realized P&L. Screenshots at desktop
 * and phone size go to test-output/explorer/.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USDC_MINT } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { syncFromUpstream } from "../../src/markets/sync.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { price } from "../../web/src/format.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

const VENUE_SEED = "explorer-money-test";
const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** The longest any wait may take (CI runs the suite on two cores); each ends once its state is reached. */
const SETTLED = { timeout: 20_000, interval: 100 };
const SETTLING = { timeout: 30_000, interval: 100 };

let simulator: RunningSimulator;
let t: TestServer;
let browser: Browser;
let desktop: BrowserContext;
let page: Page;
let ticker: string;
let yesMint: string;
let owner: string;
/** Script errors of the page. */
const pageErrors: string[] = [];

interface ApiMarket {
  ticker: string;
  status: string;
  volume: number;
  yesBid: string | null;
  accounts: Record<string, { yesMint: string; isInitialized: boolean; redemptionStatus: string | null }>;
}

interface OnchainTrade {
  transactionSignature: string;
  inputMint: string;
  inputAmount: number;
  outputAmount: number;
  side: string;
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${t.url}${path}`);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

async function chainCall<T>(method: string, params: unknown[]): Promise<T> {
  const response = await fetch(t.server.chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: T }).result;
}

/** The wallet's lamports and USDC units, from the chain's own JSON-RPC (not through the page). */
async function chainBalances(): Promise<{ lamports: bigint; usdc: bigint }> {
  const [sol, tokens] = await Promise.all([
    chainCall<{ value: number }>("getBalance", [owner]),
    chainCall<{
      value: { account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }[];
    }>("getTokenAccountsByOwner", [owner, { mint: USDC_MINT }, { encoding: "jsonParsed" }]),
  ]);
  const usdc = tokens.value.reduce(
    (sum, entry) => sum + BigInt(entry.account.data.parsed.info.tokenAmount.amount),
    0n,
  );
  return { lamports: BigInt(sol.value), usdc };
}

async function shoot(target: Page, name: string, size: "desktop" | "phone"): Promise<void> {
  await target.screenshot({ path: join(OUTPUT, `${name}-${size}.png`) });
}

/** Whether nothing on `target` is wider than the phone's screen (tables scroll in their own box). */
async function fitsPhone(target: Page): Promise<void> {
  const width = await target.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
        .documentElement.scrollWidth,
  );
  expect(width).toBeLessThanOrEqual(PHONE.width);
}

/** Buys `contracts` yes contracts from the ticket; answers what the ticket showed before signing. */
async function buy(contracts: number): Promise<{ usdc: bigint; lamports: bigint; lines: string[] }> {
  await page.getByRole("spinbutton", { name: "Contracts" }).fill(String(contracts));
  await page.getByRole("button", { name: "Quote" }).click();
  const quote = page.getByTestId("quote");
  await expect.poll(() => quote.getAttribute("data-lamports"), SETTLED).toMatch(/^\d+$/);
  await page.getByRole("button", { name: `Buy ${contracts} YES` }).click();
  await expect
    .poll(() => page.getByTestId("order-status").textContent(), SETTLING)
    .toMatch(new RegExp(`^Filled: bought ${contracts} YES for [\\d.]+ USDC`));
  // The ticket keeps the quote it signed on screen.
  return {
    usdc: BigInt((await quote.getAttribute("data-usdc")) ?? "-1"),
    lamports: BigInt((await quote.getAttribute("data-lamports")) ?? "-1"),
    lines: await quote
      .locator("dt[data-cost]")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-cost") ?? "")),
  };
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  const catalogue = generateDemoCatalogue({ anchor: Math.floor(Date.now() / 86_400_000) * 86_400 });
  // The exchange's clock stands still: its books do not move between a quote and its fill.
  const frozen = Math.floor(Date.now() / 1000);
  simulator = await startSimulator({ catalogue, host: "127.0.0.1", port: 0, now: () => frozen });
  t = await startTestServer({
    catalogue,
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, UPSTREAM_URL: simulator.url },
  });
  // A tokenized, active market with at least 3 yes contracts offered.
  const { markets } = await api<{ markets: ApiMarket[] }>(
    "/api/v1/markets?status=active&isInitialized=true&limit=50",
  );
  for (const market of markets.sort((a, b) => b.volume - a.volume)) {
    if (!market.accounts[USDC_MINT]?.isInitialized) continue;
    const book = await api<{ no_bids: Record<string, number> }>(`/api/v1/orderbook/${market.ticker}`);
    if (Object.values(book.no_bids).reduce((sum, size) => sum + size, 0) >= 3) {
      ticker = market.ticker;
      yesMint = market.accounts[USDC_MINT]?.yesMint ?? "";
      break;
    }
  }
  expect(ticker).toBeDefined();
  browser = await launchChromium();
  desktop = await browser.context({ viewport: DESKTOP });
  page = await desktop.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
}, 120_000);

afterAll(async () => {
  if (pageErrors.length > 0) console.log("page errors:", pageErrors);
  await browser?.close();
  await t?.stop();
  await simulator?.close();
});

describe("money shown honestly", { timeout: 120_000 }, () => {
  it("shows every cost of a buy before signing, and its total is what the balances lost", async () => {
    await page.goto(`${t.url}/#/wallet`);
    await page.getByRole("button", { name: "Make a test wallet" }).click();
    owner = (await page.getByTestId("wallet-address").textContent()) ?? "";
    await page.getByRole("button", { name: "Airdrop 1 SOL" }).click();
    await expect.poll(() => page.getByTestId("sol-balance").textContent(), SETTLED).toBe("1");
    await page.getByRole("button", { name: "Faucet 100 USDC" }).click();
    await expect
      .poll(() => page.getByTestId("usdc-balance").getAttribute("data-amount"), SETTLED)
      .toBe("100000000");

    await page.goto(`${t.url}/#/market/${ticker}`);
    await page.locator('[data-testid="ladder"] tr[data-side]').first().waitFor();
    const before = await chainBalances();
    const shown = await buy(2);
    const after = await chainBalances();
    // Fees of both transactions, the new YES account's rent, the deposit that comes back.
    expect(shown.lines).toEqual(
      expect.arrayContaining(["network", "priority", "rent", "escrow", "deposit", "settlement"]),
    );
    expect(shown.usdc).toBeGreaterThan(0n);
    expect(shown.lamports).toBeGreaterThan(0n);
    expect(before.usdc - after.usdc).toBe(shown.usdc);
    expect(before.lamports - after.lamports).toBe(shown.lamports);
    // And the ticket says what the chain says.
    const paid = page.getByTestId("paid");
    await page.getByTestId("quote-total").scrollIntoViewIfNeeded();
    expect(await paid.getAttribute("data-lamports")).toBe(shown.lamports.toString());
    expect(await paid.getAttribute("data-usdc")).toBe(shown.usdc.toString());
    await shoot(page, "money-ticket", "desktop");

    // A second buy: the YES account exists now, so no rent for it; the total is still what the balances lose.
    const again = await chainBalances();
    const second = await buy(1);
    const last = await chainBalances();
    expect(second.lines).not.toContain("rent");
    expect(second.lines).toContain("escrow");
    expect(again.usdc - last.usdc).toBe(second.usdc);
    expect(again.lamports - last.lamports).toBe(second.lamports);

    // The same ticket on a phone, with its costs shown (quoted, not signed).
    const phone = await browser.context({ viewport: PHONE, storageState: await desktop.storageState() });
    try {
      const small = await phone.newPage();
      await small.goto(`${t.url}/#/market/${ticker}`);
      await small.locator('[data-testid="ladder"] tr[data-side]').first().waitFor();
      await small.getByRole("button", { name: "Quote" }).click();
      await small.locator('[data-testid="quote"][data-lamports]').waitFor();
      await small.getByTestId("quote-total").scrollIntoViewIfNeeded();
      await fitsPhone(small);
      await shoot(small, "money-ticket", "phone");
    } finally {
      await phone.close();
    }
  });

  it("marks the wallet's own fills among the market's recent trades", async () => {
    const { trades } = await api<{ trades: OnchainTrade[] }>(
      `/api/v1/onchain-trades/by-market/${ticker}?wallet=${owner}`,
    );
    expect(trades).toHaveLength(2);
    const own = page.locator('[data-testid="trades"] tr[data-own="true"]');
    await expect.poll(() => own.count(), SETTLED).toBe(2);
    const signatures = await own.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-signature")));
    expect(signatures.sort()).toEqual(trades.map((trade) => trade.transactionSignature).sort());
    expect(await own.first().textContent()).toContain("You");
    // The tape's trades are there too, unmarked.
    await expect
      .poll(() => page.locator('[data-testid="trades"] tr[data-trade-id]:not([data-own])').count(), SETTLED)
      .toBeGreaterThan(0);
    await page.getByTestId("trades").scrollIntoViewIfNeeded();
    await shoot(page, "money-own-trades", "desktop");
  });

  it("shows positions with the average cost of the wallet's fills, their value at the bid and the P&L", async () => {
    // The venue's record of the wallet's fills is the oracle of what they cost.
    const { trades } = await api<{ trades: OnchainTrade[] }>(`/api/v1/onchain-trades?wallet=${owner}`);
    const cost = trades.reduce((sum, trade) => sum + BigInt(trade.inputAmount), 0n);
    const held = trades.reduce((sum, trade) => sum + BigInt(trade.outputAmount), 0n);
    expect(held).toBe(3_000_000n);
    await page.goto(`${t.url}/#/wallet`);
    const position = page.locator(`[data-testid="position"][data-ticker="${ticker}"]`);
    await expect.poll(() => position.getAttribute("data-cost"), SETTLED).toBe(cost.toString());
    // The current price: the best yes bid of the market's order book (which stands still with the exchange's clock).
    const book = await api<{ yes_bids: Record<string, number> }>(`/api/v1/orderbook/${ticker}`);
    const bid = Math.max(...Object.keys(book.yes_bids).map(Number));
    const value = (held * BigInt(Math.round(bid * 1_000_000))) / 1_000_000n;
    expect(await position.getAttribute("data-value")).toBe(value.toString());
    expect(await position.getAttribute("data-pnl")).toBe((value - cost).toString());
    expect(await position.getByTestId("average-cost").textContent()).toBe(price(Number(cost) / Number(held)));
    expect(await page.locator('[data-testid="history-row"][data-kind="buy"]').count()).toBe(2);
    await shoot(page, "money-wallet", "desktop");

    // A browser with the key but not its history (bought elsewhere) fills it in from the venue's record.
    const state = await desktop.storageState();
    const keyOnly = {
      ...state,
      origins: state.origins.map((origin) => ({
        ...origin,
        localStorage: origin.localStorage.filter(
          (entry) => !entry.name.startsWith("oddsgate.testWallet.history."),
        ),
      })),
    };
    const other = await browser.context({ viewport: DESKTOP, storageState: keyOnly });
    try {
      const elsewhere = await other.newPage();
      await elsewhere.goto(`${t.url}/#/wallet`);
      const same = elsewhere.locator(`[data-testid="position"][data-ticker="${ticker}"]`);
      await expect.poll(() => same.getAttribute("data-cost"), SETTLED).toBe(cost.toString());
      expect(await same.getAttribute("data-pnl")).toBe((value - cost).toString());
    } finally {
      await other.close();
    }
  });

  it("offers Redeem on a settled market where the wallet holds the winning side, and keeps the history", async () => {
    // A page left open on the market before it settles, on a clock the test moves.
    const watching = await browser.context({ viewport: DESKTOP, storageState: await desktop.storageState() });
    const watcher = await watching.newPage();
    await watcher.clock.install();
    await watcher.goto(`${t.url}/#/market/${ticker}`);
    await watcher.getByTestId("market-position").waitFor();
    expect(await watcher.getByRole("button", { name: /^Redeem/ }).count()).toBe(0);
    const moved = await fetch(
      `${simulator.url.replace(/\/trade-api\/v2$/, "")}/_sim/markets/${ticker}/lifecycle`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "determined", result: "yes" }),
      },
    );
    expect(moved.status).toBe(200);
    await syncFromUpstream({
      db: t.server.storage.db,
      venueSeed: VENUE_SEED,
      upstream: t.server.upstream.client,
      tokenize: "tradable",
    });
    const redemption = new URLSearchParams({ inputMint: yesMint, outputMint: USDC_MINT, amount: "3000000" });
    await expect
      .poll(async () => {
        const answer = await fetch(`${t.server.tradeUrl}/order?${redemption}`);
        return answer.status === 200
          ? ((await answer.json()) as { outAmount: string }).outAmount
          : answer.status;
      }, SETTLED)
      .toBe("3000000");

    // The open page reads the market again within a minute, and offers Redeem without a reload.
    await watcher.clock.runFor(60_000);
    await expect
      .poll(() => watcher.getByRole("button", { name: "Redeem 3 YES for 3 USDC" }).count(), SETTLED)
      .toBe(1);
    await watching.close();

    await page.goto(`${t.url}/#/market/${ticker}`);
    const mine = page.getByTestId("market-position");
    const redeem = mine.getByRole("button", { name: "Redeem 3 YES for 3 USDC" });
    await expect.poll(() => redeem.count(), SETTLED).toBe(1);
    await mine.scrollIntoViewIfNeeded();
    await shoot(page, "money-settled", "desktop");
    // A phone with this browser's storage (the wallet and its history) as it is now.
    const settledPhone = await browser.context({
      viewport: PHONE,
      storageState: await desktop.storageState(),
    });
    try {
      const small = await settledPhone.newPage();
      await small.goto(`${t.url}/#/market/${ticker}`);
      await small
        .getByTestId("market-position")
        .getByRole("button", { name: /^Redeem/ })
        .waitFor();
      await small.getByTestId("market-position").scrollIntoViewIfNeeded();
      await fitsPhone(small);
      await shoot(small, "money-settled", "phone");
    } finally {
      await settledPhone.close();
    }

    const before = await chainBalances();
    await redeem.click();
    await expect
      .poll(() => page.getByTestId("order-status").textContent(), SETTLING)
      .toBe("Redeemed 3 YES for 3 USDC");
    expect((await chainBalances()).usdc - before.usdc).toBe(3_000_000n);
    const { trades } = await api<{ trades: OnchainTrade[] }>(`/api/v1/onchain-trades?wallet=${owner}`);
    const cost = trades
      .filter((trade) => trade.inputMint === USDC_MINT)
      .reduce((sum, trade) => sum + BigInt(trade.inputAmount), 0n);
    // The market's page keeps the closed position: redeemed, with its realized P&L.
    await expect
      .poll(() => mine.getByTestId("realized").textContent(), SETTLED)
      .toBe(`+${Number(3_000_000n - cost) / 1e6} USDC`);
    await shoot(page, "money-redeemed", "desktop");

    await page.goto(`${t.url}/#/wallet`);
    const closed = page.locator(`[data-testid="closed-position"][data-ticker="${ticker}"]`);
    await expect.poll(() => closed.getAttribute("data-realized"), SETTLED).toBe(String(3_000_000n - cost));
    expect(await page.locator(`[data-testid="position"][data-ticker="${ticker}"]`).count()).toBe(0);
    expect(await page.locator('[data-testid="history-row"][data-kind="redeem"]').count()).toBe(1);
    await shoot(page, "money-wallet-history", "desktop");

    const phone = await browser.context({ viewport: PHONE, storageState: await desktop.storageState() });
    try {
      const small = await phone.newPage();
      await small.goto(`${t.url}/#/wallet`);
      await small.locator('[data-testid="closed-position"]').waitFor();
      await fitsPhone(small);
      await shoot(small, "money-wallet-history", "phone");
      await small.goto(`${t.url}/#/market/${ticker}`);
      await small.getByTestId("realized").waitFor();
      await small.getByTestId("market-position").scrollIntoViewIfNeeded();
      await shoot(small, "money-redeemed", "phone");
    } finally {
      await phone.close();
    }
  });
});
