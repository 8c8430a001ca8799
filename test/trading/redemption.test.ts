/**
 * Redemption of determined markets with a plain `/order` from the outcome mint to USDC: a wallet
 * holding winning contracts (minted to it here with the venue's mint authority, as a past buy would
 * have) is paid 1 USDC per contract; the mints are found without being listed for buying.
 */
import { type Address, createSolanaRpc, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { mintOutcomeTokens } from "../support/tokens.js";

let t: TestServer;
let chain: RpcChain;
let winning: Address;
let losing: Address;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED: "redemption-test" } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const page = await t.client.listMarkets({ status: "determined", isInitialized: true, limit: 100 });
  const market = page.markets.find(
    (m) =>
      (m.result === "yes" || m.result === "no") && Object.values(m.accounts)[0]?.redemptionStatus === "open",
  );
  const accounts = Object.values(market?.accounts ?? {})[0];
  expect(accounts).toBeDefined();
  const [yes, no] = [accounts?.yesMint as Address, accounts?.noMint as Address];
  [winning, losing] = market?.result === "yes" ? [yes, no] : [no, yes];
}, 120_000);
afterAll(async () => t?.stop());

/** Mints `amount` of an outcome mint to `owner` with the venue's mint authority, as a past buy would have. */
function mintOutcome(owner: Address, mint: Address, amount: bigint): Promise<void> {
  return mintOutcomeTokens(chain, t.server.chain.sandbox?.venueKeys.mintAuthority, owner, mint, amount);
}

async function balanceOf(owner: Address, mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(owner, { mint })).reduce((sum, a) => sum + a.amount, 0n);
}

async function redeem(wallet: KeyPairSigner, mint: Address, amount: bigint): Promise<OrderStatusResponse> {
  const response = await fetch(
    `${t.url}/order?inputMint=${mint}&outputMint=${USDC_MINT}&amount=${amount}&userPublicKey=${wallet.address}`,
  );
  const order = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(order)).toBe(200);
  expect(validateAgainstReference("OrderResponse", order)).toEqual([]);
  expect(order).toMatchObject({
    executionMode: "async",
    outAmount: String(amount),
    isNativePredictionMarketOutput: false,
  });
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(await signWithKit(wallet, order.transaction as string), { encoding: "base64" })
    .send();
  return settledOrder(t.url, signature);
}

describe("redemption of a determined market", () => {
  it("lists the mints of a market born determined, as every mint that existed, and sells nothing of them", async () => {
    const tokens = (await (await fetch(`${t.url}/tokens`)).json()) as string[];
    expect(tokens).toEqual(expect.arrayContaining([winning, losing]));
    // Stored mints and the catalog's redeem-only ones together, each once.
    expect(new Set(tokens).size).toBe(tokens.length);
    const withDecimals = (await (await fetch(`${t.url}/tokens-with-decimals`)).json()) as [string, number][];
    expect(withDecimals).toContainEqual([winning, 6]);
    // Not for buying: a determined market sells nothing.
    const buy = await fetch(`${t.url}/order?inputMint=${USDC_MINT}&outputMint=${winning}&amount=5000000`);
    expect(buy.status).toBe(400);
    expect(await buy.json()).toMatchObject({ code: "route_not_found" });
  });

  it("pays 1 USDC per winning contract held", async () => {
    const wallet = await newFundedWallet(t.url, chain, 1_000_000_000n);
    await mintOutcome(wallet.address, winning, 3_000_000n);
    const status = await redeem(wallet, winning, 3_000_000n);
    expect(status).toMatchObject({ status: "closed", inAmount: "3000000", outAmount: "3000000" });
    expect(await balanceOf(wallet.address, winning)).toBe(0n);
    expect(await balanceOf(wallet.address, USDC_MINT)).toBe(3_000_000n);
  }, 30_000);

  it("refuses the losing mint and amounts at u64 max cleanly", async () => {
    const losingQuote = await fetch(
      `${t.url}/order?inputMint=${losing}&outputMint=${USDC_MINT}&amount=1000000`,
    );
    expect(losingQuote.status).toBe(400);
    expect(await losingQuote.json()).toMatchObject({ code: "route_not_found" });
    const wallet = await newFundedWallet(t.url, chain, 1_000_000_000n);
    const huge = await fetch(
      `${t.url}/order?inputMint=${winning}&outputMint=${USDC_MINT}&amount=18446744073709551615&userPublicKey=${wallet.address}`,
    );
    const body = await huge.json();
    // The venue's own code for a firm quote the wallet cannot fund (the reference has none).
    expect(huge.status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    const quote = await fetch(
      `${t.url}/order?inputMint=${winning}&outputMint=${USDC_MINT}&amount=18446744073709551615`,
    );
    expect(quote.status).toBe(200);
    expect(validateAgainstReference("OrderResponse", await quote.json())).toEqual([]);
  });
});
