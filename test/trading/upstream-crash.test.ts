/**
 * Crash test of fills executed upstream: prediction-market buys are sent to a venue process trading on
 * a simulator with an account of its own, and the venue is killed with SIGKILL while they are being
 * filled (at once, and a little later, when some are placed upstream and not yet settled), then
 * restarted on the same data. Every order ends closed exactly once, and the venue's account upstream
 * holds exactly the contracts its user holds on chain: nothing lost, nothing doubled.
 */
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Address } from "@solana/kit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { type Market, USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { kalshiSignatureHeaders, loadKalshiCredentials } from "../../src/upstream/signing.js";
import { tempDir } from "../support/backends.js";
import { assertFreshBuild, CLI_BIN } from "../support/cli.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { freePortRun } from "../support/ports.js";
import { stopProcess, VenueProcesses } from "../support/venue-process.js";

const KEY_ID = "crash-test-venue";
const venues = new VenueProcesses();
let simulator: RunningSimulator;
let keyFile: string;
let dir: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  assertFreshBuild();
  dir = tempDir("upstream-crash");
  const keys = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  keyFile = join(dir.dir, "kalshi.pem");
  writeFileSync(keyFile, keys.privateKey);
  // The demo a fresh venue stores today, so the tickers are the venue's.
  const catalogue = generateDemoCatalogue({ anchor: Math.floor(Date.now() / 86_400_000) * 86_400 });
  simulator = await startSimulator({
    catalogue,
    port: 0,
    accounts: { [KEY_ID]: { publicKeyPem: keys.publicKey, balanceCents: 10_000_000 } },
  });
}, 60_000);
afterEach(() => venues.stopAll());
afterAll(async () => {
  await simulator?.close();
  await dir?.cleanup();
});

/** The venue account's position in `ticker` upstream, in contracts. */
async function upstreamPosition(ticker: string): Promise<number> {
  const url = new URL(`${simulator.url}/portfolio/positions?ticker=${ticker}`);
  const headers = kalshiSignatureHeaders(loadKalshiCredentials(KEY_ID, keyFile), "GET", url.pathname);
  const body = (await (await fetch(url, { headers })).json()) as {
    market_positions: { ticker: string; position_fp: string }[];
  };
  return Number(body.market_positions.find((p) => p.ticker === ticker)?.position_fp ?? 0);
}

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
        settings: {
          UPSTREAM_URL: simulator.url,
          UPSTREAM_KEY_ID: KEY_ID,
          UPSTREAM_PRIVATE_KEY_FILE: keyFile,
          UPSTREAM_TRADING: "true",
          ESCROW_SWEEP_DELAY_MS: "0",
        },
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
        const response = await fetch(
          `${url}/order?inputMint=${USDC_MINT}&outputMint=${yesMint}&amount=${2_000_000 + i}&userPublicKey=${user.address}&priceImpactTolerancePct=100&slippageBps=2000`,
        );
        const order = (await response.json()) as { transaction: string };
        expect(response.status, JSON.stringify(order)).toBe(200);
        signatures.push(
          await chain.sendTransaction(Buffer.from(await signWithKit(user, order.transaction), "base64")),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await stopProcess(venue, "SIGKILL");
      venue = await start();
    }

    const statuses: OrderStatusResponse[] = [];
    for (const signature of signatures) {
      statuses.push(
        await vi.waitFor(
          async () => {
            const answer = (await (
              await fetch(`${url}/order-status?signature=${signature}`)
            ).json()) as OrderStatusResponse;
            expect(answer.status).toBe("closed");
            return answer;
          },
          { timeout: 60_000, interval: 100 },
        ),
      );
    }
    let contracts = 0n;
    let spent = 0n;
    for (const status of statuses) {
      const fills = status.fills ?? [];
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
    expect(await upstreamPosition(ticker)).toBe(Number(contracts / 1_000_000n));
  }, 180_000);
});
