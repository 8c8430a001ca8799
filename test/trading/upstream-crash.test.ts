import { join } from "node:path";
import type { Address } from "@solana/kit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { type Market, USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { tempDir } from "../support/backends.js";
import { assertFreshBuild, CLI_BIN } from "../support/cli.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { freePortRun } from "../support/ports.js";
import { type SimulatorAccount, simulatorWithAccount } from "../support/upstream-account.js";
import { stopProcess, VenueProcesses } from "../support/venue-process.js";

const venues = new VenueProcesses();
let upstream: SimulatorAccount;
let dir: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  assertFreshBuild();
  dir = tempDir("upstream-crash");
  upstream = await simulatorWithAccount(dir.dir, { keyId: "crash-test-venue" });
}, 60_000);
afterEach(() => venues.stopAll());
afterAll(async () => {
  await upstream?.simulator.close();
  await dir?.cleanup();
});

describe("fills executed upstream across a kill -9", () => {
  it("settles every order exactly once after a restart, and the upstream account holds what the user holds", async () => {
    const port = await freePortRun(3);
    const rpcPort = port + 1;
    const url = `http://127.0.0.1:${port}`;
    const start = () =>
      venues.start([CLI_BIN], {
        dataDir: join(dir.dir, "venue"),
        port,
        rpcPort,
        venueSeed: "upstream-crash-test",
        until: "/health-check",
        settings: { ...upstream.settings, ESCROW_SWEEP_DELAY_MS: "0" },
      });
    let venue = await start();
    const chain = new RpcChain({ url: `http://127.0.0.1:${rpcPort}` });
    const listed = (await (
      await fetch(`${url}/api/v1/markets?status=active&isInitialized=true&limit=50`)
    ).json()) as {
      markets: Market[];
    };
    const market = listed.markets.find((m) => Number(m.yesAsk ?? 0) > 0.2 && Number(m.yesAsk ?? 1) < 0.8);
    expect(market).toBeDefined();
    const ticker = market?.ticker as string;
    const yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
    const user = await newFundedWallet(url, chain, 5_000_000_000n, [[USDC_MINT, 100_000_000n]]);

    const signatures: string[] = [];
    // Killed at once, then once the keeper has had a pass or two at the orders.
    for (const killAfterMs of [0, 300]) {
      for (let i = 0; i < 3; i++) {
        // Just restarted on a busy machine, the venue may not have the market's book yet: a client asks again.
        const order = await vi.waitFor(
          async () => {
            const response = await fetch(
              `${url}/order?inputMint=${USDC_MINT}&outputMint=${yesMint}&amount=${2_000_000 + i}&userPublicKey=${user.address}&priceImpactTolerancePct=100&slippageBps=2000`,
            );
            const body = (await response.json()) as { transaction: string };
            expect(response.status, JSON.stringify(body)).toBe(200);
            return body;
          },
          { timeout: 15_000, interval: 200 },
        );
        signatures.push(
          await chain.sendTransaction(Buffer.from(await signWithKit(user, order.transaction), "base64")),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await stopProcess(venue, "SIGKILL");
      venue = await start();
    }

    const statuses: OrderStatusResponse[] = [];
    for (const signature of signatures) statuses.push(await settledOrder(url, signature, 60_000));
    let contracts = 0n;
    let spent = 0n;
    for (const status of statuses) {
      const fills = status.fills ?? [];
      expect(status.status, JSON.stringify(status)).toBe("closed");
      // One settlement each: a fill (any leftover returned with it) or a refund.
      expect(
        fills.length + (fills.length === 0 ? (status.reverts ?? []).length : 0),
        JSON.stringify(status),
      ).toBe(1);
      for (const fill of fills) {
        contracts += BigInt(fill.outAmount);
        spent += BigInt(fill.inAmount);
      }
    }
    expect(contracts).toBeGreaterThan(0n);
    const balance = async (mint: Address) =>
      (await chain.getTokenAccountsByOwner(user.address, { mint })).reduce((sum, a) => sum + a.amount, 0n);
    expect(await balance(yesMint)).toBe(contracts);
    expect(await balance(USDC_MINT)).toBe(100_000_000n - spent);
    expect(await upstream.position(ticker)).toBe(Number(contracts / 1_000_000n));
  }, 180_000);
});
