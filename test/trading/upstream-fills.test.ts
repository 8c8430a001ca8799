import type { Address, KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { RunningSimulator } from "../../src/simulator/index.js";
import { dollarMicros, KalshiPortfolio } from "../../src/upstream/portfolio.js";
import { loadKalshiCredentials } from "../../src/upstream/signing.js";
import { tempDir } from "../support/backends.js";
import { newFundedWallet } from "../support/kit.js";
import { tradeAndSettle } from "../support/orders.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type SimulatorAccount, simulatorWithAccount } from "../support/upstream-account.js";

let simulator: RunningSimulator;
let t: TestServer;
let chain: RpcChain;
let wallet: KeyPairSigner;
let ticker: string;
let yesMint: Address;
let upstream: SimulatorAccount;
let cleanupDir: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const dir = tempDir("upstream-fills");
  cleanupDir = dir.cleanup;
  // A still clock: the books move only by what orders take from them.
  const frozen = Math.floor(Date.now() / 1000);
  upstream = await simulatorWithAccount(dir.dir, { now: () => frozen });
  simulator = upstream.simulator;
  t = await startTestServer({
    catalogue: upstream.catalogue,
    settings: {
      DEMO_CATALOGUE: "true",
      ...upstream.settings,
      // Short, so that an order's answer held back past it is lost quickly (the last test).
      UPSTREAM_TIMEOUT_MS: "2000",
    },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  // A market with depth on both sides near the middle, so a few dollars fill several contracts.
  const listed = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 50 })).markets;
  const market = listed.find((m) => Number(m.yesAsk ?? 0) > 0.2 && Number(m.yesAsk ?? 1) < 0.8) ?? listed[0];
  ticker = market?.ticker as string;
  yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
  wallet = await newFundedWallet(t.url, chain, 5_000_000_000n, [[USDC_MINT, 100_000_000n]]);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await simulator?.close();
  await cleanupDir?.();
});

async function tokenBalance(mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(wallet.address, { mint })).reduce(
    (sum, a) => sum + a.amount,
    0n,
  );
}

interface Fill {
  trade_id: string;
  order_id: string;
  count_fp: string;
  yes_price_dollars: string;
  action: string;
}

const fillsOf = async (orderId: string) =>
  (await upstream.read<{ fills: Fill[] }>(`portfolio/fills?order_id=${orderId}`)).fills;

const upstreamPosition = () => upstream.position(ticker);

/** Contracts bid for NO in the market's book, as the venue relays it. */
async function noBidDepth(): Promise<number> {
  const response = await fetch(`${t.url}/api/v1/orderbook/${ticker}`);
  expect(response.status).toBe(200);
  const { no_bids } = (await response.json()) as { no_bids: Record<string, number> };
  return Object.values(no_bids).reduce((sum, contracts) => sum + contracts, 0);
}

/** The venue's order on the upstream for the order settled in `status`, by the client order id it chose. */
async function upstreamOrderOf(): Promise<{
  order_id: string;
  client_order_id: string;
  fill_count_fp: string;
}> {
  const { orders } = await upstream.read<{
    orders: { order_id: string; client_order_id: string; fill_count_fp: string }[];
  }>(`portfolio/orders?ticker=${ticker}&limit=1`);
  return orders[0] as { order_id: string; client_order_id: string; fill_count_fp: string };
}

const trade = (inputMint: Address, outputMint: Address, amount: bigint) =>
  tradeAndSettle(t.url, t.server.chain.rpcUrl, wallet, { inputMint, outputMint, amount });

const sumMicros = (fills: Fill[], side: (f: Fill) => bigint) =>
  fills.reduce((sum, fill) => sum + BigInt(Number.parseInt(fill.count_fp, 10)) * side(fill), 0n);

describe("prediction-market fills executed upstream", () => {
  it("buys on the upstream first: the user gets what the venue's order there filled, at its prices, on the tape at once", async () => {
    const depthBefore = await noBidDepth();
    const status = await trade(USDC_MINT, yesMint, 5_000_000n);
    expect(status.status, JSON.stringify(status)).toBe("closed");
    const [fill] = status.fills ?? [];
    const contracts = BigInt(fill?.outAmount ?? 0) / 1_000_000n;
    expect(contracts).toBeGreaterThan(0n);

    const upstream = await upstreamOrderOf();
    expect(upstream.client_order_id).toMatch(/^og-/);
    expect(Number.parseInt(upstream.fill_count_fp, 10)).toBe(Number(contracts));
    const fills = await fillsOf(upstream.order_id);
    // The user paid the upstream's prices for the contracts it filled, and nothing more (no builder fee here).
    expect(BigInt(fill?.inAmount ?? 0)).toBe(sumMicros(fills, (f) => dollarMicros(f.yes_price_dollars)));
    expect(await tokenBalance(yesMint)).toBe(contracts * 1_000_000n);
    expect(await tokenBalance(USDC_MINT)).toBe(100_000_000n - BigInt(fill?.inAmount ?? 0));
    // Everyone sees the trades on the market's tape.
    const tape = (await (
      await fetch(`${simulator.url}/markets/trades?ticker=${ticker}&limit=100`)
    ).json()) as {
      trades: { trade_id: string; taker_side: string }[];
    };
    for (const f of fills)
      expect(tape.trades.find((trade) => trade.trade_id === f.trade_id)?.taker_side).toBe("yes");
    expect(await upstreamPosition()).toBe(Number(contracts));
    // The book the venue quotes from next lost the depth the buy took (a yes buy takes the no bids).
    await expect.poll(noBidDepth, { timeout: 10_000, interval: 100 }).toBe(depthBefore - Number(contracts));
  });

  it("sells on the upstream first: the user is paid what the contracts fetched there", async () => {
    const held = await tokenBalance(yesMint);
    const usdcBefore = await tokenBalance(USDC_MINT);
    const status = await trade(yesMint, USDC_MINT, 1_000_000n);
    expect(status.status, JSON.stringify(status)).toBe("closed");
    const [fill] = status.fills ?? [];
    expect(fill?.inAmount).toBe("1000000");
    const upstream = await upstreamOrderOf();
    const fills = await fillsOf(upstream.order_id);
    expect(fills.every((f) => f.action === "sell")).toBe(true);
    expect(BigInt(fill?.outAmount ?? 0)).toBe(sumMicros(fills, (f) => dollarMicros(f.yes_price_dollars)));
    expect(await tokenBalance(USDC_MINT)).toBe(usdcBefore + BigInt(fill?.outAmount ?? 0));
    // The venue's account holds exactly what its users hold.
    expect(await upstreamPosition()).toBe(Number((held - 1_000_000n) / 1_000_000n));
  });

  it("reverts the whole order when the upstream refuses it, and holds nothing for it there", async () => {
    const usdcBefore = await tokenBalance(USDC_MINT);
    const yesBefore = await tokenBalance(yesMint);
    const positionBefore = await upstreamPosition();
    const faults = `${new URL(simulator.url).origin}/_sim/faults`;
    const put = await fetch(faults, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ kind: "status", status: 400, match: "/portfolio/orders", times: 1 }]),
    });
    expect(put.status).toBe(200);
    try {
      const status = await trade(USDC_MINT, yesMint, 3_000_000n);
      expect(status.status).toBe("closed");
      expect(status.fills ?? []).toEqual([]);
      expect(status.reverts).toMatchObject([{ mint: USDC_MINT, amount: "3000000" }]);
    } finally {
      await fetch(faults, { method: "DELETE" });
    }
    expect(await tokenBalance(USDC_MINT)).toBe(usdcBefore);
    expect(await tokenBalance(yesMint)).toBe(yesBefore);
    expect(await upstreamPosition()).toBe(positionBefore);
  });

  it("fills once when the answer to the venue's order is lost: placed again, the upstream's first order is found", async () => {
    const yesBefore = await tokenBalance(yesMint);
    const positionBefore = await upstreamPosition();
    const faults = `${new URL(simulator.url).origin}/_sim/faults`;
    // The order is placed after 2.5 s, when the venue has stopped waiting for its answer.
    await fetch(faults, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ kind: "latency", ms: 2_500, match: "/portfolio/orders", times: 1 }]),
    });
    try {
      const status = await trade(USDC_MINT, yesMint, 2_000_000n);
      expect(status.status, JSON.stringify(status)).toBe("closed");
      const contracts = BigInt(status.fills?.[0]?.outAmount ?? 0) / 1_000_000n;
      expect(contracts).toBeGreaterThan(0n);
      const upstream = await upstreamOrderOf();
      expect(Number.parseInt(upstream.fill_count_fp, 10)).toBe(Number(contracts));
      // One order, one fill: the account holds what the user holds.
      expect(await upstreamPosition()).toBe(positionBefore + Number(contracts));
      expect(await tokenBalance(yesMint)).toBe(yesBefore + contracts * 1_000_000n);
    } finally {
      await fetch(faults, { method: "DELETE" });
    }
  });

  it("trades once when the same order is placed again (a restart before what it filled was stored)", async () => {
    const credentials = loadKalshiCredentials(upstream.keyId, upstream.keyFile);
    const portfolio = new KalshiPortfolio(simulator.url, async () => credentials, 5_000);
    try {
      const ticket = {
        clientOrderId: `og-retry-${Date.now()}`,
        ticker,
        action: "buy",
        side: "yes",
        count: 2,
        limitCents: 99,
      } as const;
      const positionBefore = await upstreamPosition();
      const first = await portfolio.execute(ticket);
      const again = await portfolio.execute(ticket);
      expect(again).toEqual(first);
      expect(first.filled).toBe(2);
      expect(await upstreamPosition()).toBe(positionBefore + 2);
      // Refused outright: a market the upstream does not have.
      await expect(
        portfolio.execute({ ...ticket, clientOrderId: `${ticket.clientOrderId}-x`, ticker: "NO-SUCH" }),
      ).rejects.toMatchObject({
        name: "UpstreamOrderRefused",
        status: 404,
      });
    } finally {
      await portfolio.close();
    }
  });
});
