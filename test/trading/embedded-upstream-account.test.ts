import type { Address, KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { newFundedWallet } from "../support/kit.js";
import { tradeAndSettle } from "../support/orders.js";
import { startTestServer, type TestServer } from "../support/server.js";

// The default venue: no UPSTREAM_URL, so prediction-market fills execute on the embedded simulator,
// in an account the venue opens there for a key it makes when the first fill needs it.
let t: TestServer;
let chain: RpcChain;
let wallet: KeyPairSigner;

beforeAll(async () => {
  t = await startTestServer({ settings: { UPSTREAM_TRADING: "true" } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  wallet = await newFundedWallet(t.url, chain, 5_000_000_000n, [[USDC_MINT, 100_000_000n]]);
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe("the venue's account on the embedded simulator", () => {
  it("is opened by the first upstream fill, which the user is paid from, and serves the next", async () => {
    const listed = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 50 })).markets;
    const market =
      listed.find((m) => Number(m.yesAsk ?? 0) > 0.2 && Number(m.yesAsk ?? 1) < 0.8) ?? listed[0];
    const yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
    const simulatorUrl = t.server.upstream.simulator?.url;
    expect(simulatorUrl).toBeDefined();
    const tapeOf = async () => {
      const response = await fetch(`${simulatorUrl}/markets/trades?ticker=${market?.ticker}&limit=1000`);
      return ((await response.json()) as { trades: unknown[] }).trades.length;
    };
    const tapeBefore = await tapeOf();
    for (const round of [1, 2]) {
      const status = await tradeAndSettle(t.url, t.server.chain.rpcUrl, wallet, {
        inputMint: USDC_MINT,
        outputMint: yesMint,
        amount: 3_000_000n,
      });
      expect(status.status, `round ${round}: ${JSON.stringify(status)}`).toBe("closed");
      expect(status.fills?.length).toBe(1);
      // Filled on the upstream: its tape holds the venue's trades.
      expect(await tapeOf()).toBeGreaterThan(tapeBefore + round - 1);
    }
  });
});
