/**
 * Prediction-market orders end to end (`executionMode: "async"`), with `@solana/kit` as the client:
 * buy yes contracts with USDC (whole contracts, the remainder reverted), sell some back, and after
 * the market is determined upstream, redeem the rest at 1 USDC per contract. The user signs and sends
 * each open transaction; the venue notices the escrow and settles it; /order-status follows it.
 */
import { type Address, createSolanaRpc, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { syncFromUpstream } from "../../src/markets/sync.js";
import type { OrderResponse } from "../../src/trading/spot/desk.js";
import { signWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "prediction-orders-test";
let t: TestServer;
let chain: RpcChain;
let wallet: KeyPairSigner;
let ticker: string;
let yesMint: Address;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 })).markets[0];
  ticker = market?.ticker as string;
  yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
  wallet = await generateKeyPairSigner();
  await chain.requestAirdrop(wallet.address, 5_000_000_000n);
  const grant = await fetch(`${t.url}/dev/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ wallet: wallet.address, mint: USDC_MINT, amount: "100000000" }),
  });
  expect(grant.status).toBe(200);
}, 120_000);
afterAll(async () => t?.stop());

async function tokenBalance(mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(wallet.address, { mint })).reduce(
    (sum, a) => sum + a.amount,
    0n,
  );
}

/**
 * Asks for an async order (a wide slippage: the demo's prices move before a fill), signs and sends its
 * open transaction, and waits for the venue to settle it.
 */
async function trade(inputMint: Address, outputMint: Address, amount: bigint) {
  const response = await fetch(
    `${t.url}/order?inputMint=${inputMint}&outputMint=${outputMint}&amount=${amount}&userPublicKey=${wallet.address}&priceImpactTolerancePct=100&slippageBps=2000`,
  );
  const order = (await response.json()) as OrderResponse;
  expect(response.status, JSON.stringify(order)).toBe(200);
  expect(validateAgainstReference("OrderResponse", order)).toEqual([]);
  expect(order.executionMode).toBe("async");
  expect(order.revertMint).toBe(inputMint);
  const signed = await signWithKit(wallet, order.transaction as string);
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(signed, { encoding: "base64" })
    .send();
  return { order, status: await settledOrder(t.url, signature) };
}

describe("prediction-market orders", () => {
  it("buys whole yes contracts with USDC and returns the rest", async () => {
    const { order, status } = await trade(USDC_MINT, yesMint, 10_000_000n);
    expect(status.status).toBe("closed");
    const [fill] = status.fills ?? [];
    expect(fill).toMatchObject({ inputMint: USDC_MINT, outputMint: yesMint });
    const contracts = BigInt(fill?.outAmount ?? 0);
    expect(contracts % 1_000_000n).toBe(0n);
    expect(contracts).toBeGreaterThanOrEqual(BigInt(order.otherAmountThreshold));
    const spent = BigInt(fill?.inAmount ?? 0);
    expect(status.reverts ?? []).toEqual(
      spent < 10_000_000n
        ? [{ signature: fill?.signature, mint: USDC_MINT, amount: String(10_000_000n - spent) }]
        : [],
    );
    expect(await tokenBalance(yesMint)).toBe(contracts);
    expect(await tokenBalance(USDC_MINT)).toBe(100_000_000n - spent);
  });

  it("sells contracts back for USDC down the bids", async () => {
    const usdcBefore = await tokenBalance(USDC_MINT);
    const { status } = await trade(yesMint, USDC_MINT, 2_000_000n);
    expect(status.status).toBe("closed");
    const [fill] = status.fills ?? [];
    expect(fill?.inAmount).toBe("2000000");
    expect(await tokenBalance(USDC_MINT)).toBe(usdcBefore + BigInt(fill?.outAmount ?? 0));
  });

  it("redeems the rest at 1 USDC per contract once the market is determined yes", async () => {
    const simulator = t.server.upstream.url.replace(/\/trade-api\/v2$/, "");
    const moved = await fetch(`${simulator}/_sim/markets/${ticker}/lifecycle`, {
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
    const held = await tokenBalance(yesMint);
    const usdcBefore = await tokenBalance(USDC_MINT);
    // The venue picks the change up from storage within a couple of seconds.
    const redeemable = async () => {
      const quote = await fetch(`${t.url}/order?inputMint=${yesMint}&outputMint=${USDC_MINT}&amount=${held}`);
      return quote.status === 200 && ((await quote.json()) as OrderResponse).outAmount === String(held);
    };
    await expect.poll(redeemable, { timeout: 15_000, interval: 50 }).toBe(true);
    const { status } = await trade(yesMint, USDC_MINT, held);
    expect(status.status).toBe("closed");
    expect(status.fills?.[0]?.outAmount).toBe(String(held));
    expect(await tokenBalance(yesMint)).toBe(0n);
    expect(await tokenBalance(USDC_MINT)).toBe(usdcBefore + held);
  });
});

describe("the default price-impact bound of a prediction-market order", () => {
  /** Quote-only `/order` of `amount` micro-USDC of `mint`, with `extra` parameters. */
  async function quote(mint: Address, amount: bigint, extra = "") {
    const response = await fetch(
      `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${mint}&amount=${amount}${extra}`,
    );
    return {
      status: response.status,
      body: (await response.json()) as OrderResponse & { code?: string; msg?: string },
    };
  }

  it("answers 503, to retry, while the upstream cannot be asked for the market's book, and quotes once it can", async () => {
    const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 }))
      .markets[1];
    const mint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
    const faults = `${new URL(t.server.upstream.url).origin}/_sim/faults`;
    const put = await fetch(faults, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ kind: "status", status: 503, match: "/orderbook" }]),
    });
    expect(put.status).toBe(200);
    try {
      const refused = await quote(mint, 5_000_000n);
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body).toMatchObject({ code: "amm_map_lagging", reason: "not_ready" });
      expect(refused.body.msg).toContain(`market ${market?.ticker}'s order book`);
    } finally {
      await fetch(faults, { method: "DELETE" });
    }
    await expect
      .poll(async () => (await quote(mint, 5_000_000n)).status, { timeout: 15_000, interval: 200 })
      .toBe(200);
  });

  it("lets an ordinary buy of a cheap contract through, and stops a fill that sweeps the book", async () => {
    // A cheap contract whose 5 USDC buy moves its price by more than 25%, relative: one cent up from 2¢ is 50%.
    const cheap = (
      await t.client.listMarkets({ status: "active", isInitialized: true, limit: 200 })
    ).markets.filter((market) => Number(market.yesAsk) > 0 && Number(market.yesAsk) <= 0.03);
    let mint: Address | undefined;
    for (const market of cheap) {
      const candidate = Object.values(market.accounts ?? {})[0]?.yesMint as Address;
      if (
        (await quote(candidate, 5_000_000n, "&priceImpactTolerancePct=25")).body.code ===
        "price_impact_too_high"
      ) {
        mint = candidate;
        break;
      }
    }
    expect(mint, "a cheap contract whose 5 USDC buy moves more than 25%").toBeDefined();
    const ordinary = await quote(mint as Address, 5_000_000n);
    expect(ordinary.status, JSON.stringify(ordinary.body)).toBe(200);
    expect(Number(ordinary.body.priceImpactPct)).toBeGreaterThan(0.25);
    // The whole book in one fill: its average price several cents up from the best, past the default 3.
    const sweep = await quote(mint as Address, 5_000_000_000n);
    expect(sweep.status, JSON.stringify(sweep.body)).toBe(400);
    expect(sweep.body.code).toBe("price_impact_too_high");
    expect(sweep.body.msg).toContain("cents per contract");
    // Asked for, any tolerance is the caller's, in the reference's relative terms.
    expect((await quote(mint as Address, 5_000_000_000n, "&priceImpactTolerancePct=100")).status).toBe(200);
  });
});
