/**
 * The explorer's token swap in Chromium against a whole server: a test wallet made in the browser is
 * funded (airdrop, then the swap view's own faucet), swaps 5 USDC for a demo token through `/order`,
 * and the chain (read over JSON-RPC, not through the page) shows exactly 5 USDC gone and the quoted
 * amount of the demo token arrived. Screenshots of the swap view at desktop and phone size go to
 * test-output/explorer/.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Browser, launchChromium } from "./browser.js";

const VENUE_SEED = "explorer-swap-test";
const OUTPUT = join(import.meta.dirname, "../../test-output/explorer");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const JUP = demoTokens(VENUE_SEED).find((token) => token.symbol === "dJUP");

let t: TestServer;
let browser: Browser;
let desktop: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

/** The wallet's balance of `mint` in base units, from the chain's own JSON-RPC. */
async function chainBalance(owner: string, mint: string): Promise<bigint> {
  const response = await fetch(t.server.chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getTokenAccountsByOwner",
      params: [owner, { mint }, { encoding: "jsonParsed" }],
    }),
  });
  const body = (await response.json()) as {
    result: { value: { account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }[] };
  };
  return body.result.value.reduce(
    (sum, entry) => sum + BigInt(entry.account.data.parsed.info.tokenAmount.amount),
    0n,
  );
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  execFileSync(process.execPath, [join(import.meta.dirname, "../../web/build.mjs")], { stdio: "inherit" });
  // DEMO_CATALOGUE brings the sandbox's demo pools (USDC, wSOL and the demo tokens).
  t = await startTestServer({ settings: { VENUE_SEED, DEMO_CATALOGUE: "true" } });
  // The demo pools are part of the start-up work: the token list is whole once the venue is ready.
  await vi.waitFor(
    async () => {
      const ready = await fetch(`${t.url}/health-check/ready`);
      if (ready.status !== 200) throw new Error(`not ready: ${ready.status}`);
    },
    { timeout: 30_000, interval: 100 },
  );
  browser = await launchChromium();
  desktop = await browser.context({ viewport: DESKTOP });
  page = await desktop.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("the explorer's token swap", () => {
  it("swaps 5 USDC for a demo token: exactly 5 USDC leave the wallet and the quoted amount arrives", async () => {
    if (!JUP) throw new Error("no dJUP among the demo tokens");
    await page.goto(`${t.url}/#/wallet`);
    await page.getByRole("button", { name: "Make a test wallet" }).click();
    const owner = (await page.getByTestId("wallet-address").textContent()) ?? "";
    await page.getByRole("button", { name: "Airdrop 1 SOL" }).click();
    await expect.poll(() => page.getByTestId("sol-balance").textContent()).toBe("1");

    await page.getByRole("link", { name: "Swap tokens" }).click();
    const from = page.getByLabel("You pay");
    const to = page.getByLabel("You receive");
    await expect.poll(() => from.inputValue()).toBe(USDC_MINT);
    // The default pair routes: the venue quotes it.
    const pair = new URLSearchParams({
      inputMint: USDC_MINT,
      outputMint: await to.inputValue(),
      amount: "1000000",
    });
    const routed = await fetch(`${t.server.tradeUrl}/order?${pair}`);
    const routedBody = (await routed.json()) as { routePlan?: unknown[]; code?: string };
    expect(routed.status, JSON.stringify(routedBody)).toBe(200);
    expect(routedBody.routePlan?.length).toBeGreaterThan(0);
    // The pickers list tokens by symbol and name, not the venue's thousands of outcome mints.
    const listed = await to.locator("option").allTextContents();
    expect(listed.length).toBeLessThan(30);
    expect(listed).toContain("dJUP · Demo Jupiter");
    expect(listed.every((text) => !text.includes("…"))).toBe(true);
    // Searchable by name and by symbol: Enter picks the first found.
    const findOutput = page.getByRole("searchbox", { name: "Find a token to receive" });
    await findOutput.fill("jupiter");
    await expect.poll(() => to.locator("option").allTextContents()).toContain("dJUP · Demo Jupiter");
    expect(await page.getByTestId("outputMint-found").textContent()).toBe("1 found");
    await findOutput.press("Enter");
    await expect.poll(() => to.inputValue()).toBe(JUP.address);
    const findInput = page.getByRole("searchbox", { name: "Find a token to pay with" });
    await findInput.fill("dbon");
    expect(await page.getByTestId("inputMint-found").textContent()).toBe("1 found");
    expect(await from.locator("option").allTextContents()).toEqual(["USDC · USD Coin", "dBONK · Demo Bonk"]);
    await findInput.fill("");
    expect(await from.inputValue()).toBe(USDC_MINT);
    expect(await to.locator("option:checked").textContent()).toContain("dJUP");
    // The input token's faucet is on the swap view itself.
    await page.getByRole("button", { name: "Faucet 100 USDC" }).click();
    await expect
      .poll(() => page.getByTestId("swap-input-balance").getAttribute("data-amount"))
      .toBe("100000000");

    // Amounts are bounded in the page: past u64, then past the balance.
    const amount = page.getByRole("textbox", { name: /Amount/ });
    await amount.fill("99999999999999999999");
    await expect.poll(() => page.getByTestId("swap-amount-error").textContent()).toContain("2^64");
    expect(await page.getByRole("button", { name: "Swap", exact: true }).isDisabled()).toBe(true);
    await amount.fill("100.000001");
    await expect
      .poll(() => page.getByTestId("swap-amount-error").textContent())
      .toContain("more than your balance");
    await amount.fill("5");
    expect(await page.getByTestId("swap-amount-error").textContent()).toBe("");

    await page.getByRole("button", { name: "Quote" }).click();
    const quoted = page.getByTestId("swap-quote");
    await quoted.waitFor();
    const text = (await quoted.textContent()) ?? "";
    expect(text).toContain("You pay5 USDC");
    expect(text).toMatch(/Price impact[\d.<]+%/);
    expect(text).toMatch(/RouteUSDC → /);
    expect(text).toMatch(/Fees.*no platform fee/);
    const quotedMin = BigInt((await quoted.getAttribute("data-min-out")) ?? "0");
    expect(quotedMin).toBeGreaterThan(0n);
    await shot(page, "swap-quote-desktop");

    const usdcBefore = await chainBalance(owner, USDC_MINT);
    const jupBefore = await chainBalance(owner, JUP.address);
    expect(usdcBefore).toBe(100_000_000n);
    await page.getByRole("button", { name: "Swap", exact: true }).click();
    await expect
      .poll(() => page.getByTestId("swap-status").textContent(), { timeout: 20_000 })
      .toMatch(/^Swapped 5 USDC for [\d.]+ /);
    // The quote on screen is the one the swap sent (asked again just before sending).
    const sentOut = BigInt((await quoted.getAttribute("data-out-amount")) ?? "0");
    expect(sentOut).toBeGreaterThanOrEqual(quotedMin);

    expect(usdcBefore - (await chainBalance(owner, USDC_MINT))).toBe(5_000_000n);
    expect((await chainBalance(owner, JUP.address)) - jupBefore).toBe(sentOut);
    // The page shows the new balances too.
    await expect
      .poll(() => page.getByTestId("swap-input-balance").getAttribute("data-amount"))
      .toBe("95000000");
    await shot(page, "swap-desktop");
    expect(pageErrors.filter((line) => /Content Security Policy|Uncaught|TypeError/.test(line))).toEqual([]);
  }, 40_000);

  it("fits a phone, in dark", async () => {
    const phone = await browser.context({
      viewport: PHONE,
      colorScheme: "dark",
      storageState: await desktop.storageState(),
    });
    try {
      const small = await phone.newPage();
      await small.goto(`${t.url}/#/swap`);
      await expect
        .poll(() => small.getByTestId("swap-input-balance").getAttribute("data-amount"))
        .toBe("95000000");
      await small.getByLabel("You receive").selectOption(JUP?.address ?? "");
      await small.getByRole("textbox", { name: /Amount/ }).fill("2.5");
      await small.getByRole("button", { name: "Quote" }).click();
      await small.getByTestId("swap-quote").waitFor();
      expect(
        await small.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
              .documentElement.scrollWidth,
        ),
      ).toBeLessThanOrEqual(PHONE.width);
      await shot(small, "swap-phone");
    } finally {
      await phone.close();
    }
  });
});

async function shot(target: Page, name: string): Promise<void> {
  await target.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}
