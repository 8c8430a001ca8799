/**
 * The built command (`npm start`, the `oddsgate` bin) is one bundled file, dist/cli/main.js
 * (scripts/bundle.mjs), while every other test runs the sources. This one runs what users run: the
 * venue starts from the bundle, serves its pages and documents, settles a swap on its chain (the
 * signature-verifier worker checks it, the SQLite writer worker stores it) and finds it again after a
 * restart. `npm run build` makes the bundle; CI builds it at install.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Address } from "@solana/kit";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { assertFreshBuild, CLI_BIN } from "../support/cli.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { freePortRun } from "../support/ports.js";
import { stopProcess, VenueProcesses } from "../support/venue-process.js";

const VENUE_SEED = "bundle-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
const venues = new VenueProcesses();

afterEach(() => venues.stopAll());

const startBundle = (dataDir: string, port: number, rpcPort: number) =>
  venues.start([CLI_BIN], { dataDir, port, rpcPort, venueSeed: VENUE_SEED, until: "/health-check/ready" });

beforeAll(assertFreshBuild);

describe("the bundled command", () => {
  it("serves the venue, settles a swap on its chain, and keeps it across a restart", async () => {
    expect(existsSync(CLI_BIN), `${CLI_BIN} is missing: run npm run build`).toBe(true);
    // The bundle, not tsc's own output of main.ts (which would import the rest of dist/ one by one).
    expect(readFileSync(CLI_BIN, "utf8")).toContain("__createRequire");
    const dir = tempDir();
    const port = await freePortRun(3);
    const rpcPort = port + 1;
    const url = `http://127.0.0.1:${port}`;
    const chain = new RpcChain({ url: `http://127.0.0.1:${rpcPort}` });
    try {
      let venue = await startBundle(dir.dir, port, rpcPort);
      // The explorer and the API reference find their files from the bundle's place in dist/.
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="app">');
      expect((await fetch(`${url}/docs/`)).status).toBe(200);
      const referenceScript = await fetch(`${url}/docs/js/scalar.js`);
      expect(referenceScript.status).toBe(200);
      expect((await referenceScript.text()).length).toBeGreaterThan(100_000);
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: object };
      expect(Object.keys(document.paths)).toContain("/order");
      const events = (await (await fetch(`${url}/api/v1/events?limit=1`)).json()) as { events: unknown[] };
      expect(events.events).toHaveLength(1);
      // Relayed by the bundle's upstream client, whose HTTP pool is loaded with its first request.
      const active = (await (await fetch(`${url}/api/v1/markets?status=active&limit=1`)).json()) as {
        markets: { ticker: string }[];
      };
      const book = await fetch(`${url}/api/v1/orderbook/${active.markets[0]?.ticker}`);
      expect(book.status, await book.clone().text()).toBe(200);

      const wallet = await newFundedWallet(url, chain, 1_000_000_000n, [[USDC_MINT, 10_000_000n]]);
      const query = new URLSearchParams({
        inputMint: USDC_MINT,
        outputMint: dETH,
        amount: "5000000",
        userPublicKey: wallet.address,
        priceImpactTolerancePct: "100",
      });
      const order = (await (await fetch(`${url}/order?${query}`)).json()) as { transaction: string };
      await signAndSendWithKit(`http://127.0.0.1:${rpcPort}`, chain, wallet, order.transaction);
      const held = async (mint: Address) =>
        (await chain.getTokenAccountsByOwner(wallet.address, { mint })).reduce(
          (sum, a) => sum + a.amount,
          0n,
        );
      const bought = await held(dETH);
      expect(bought).toBeGreaterThan(0n);
      expect(await held(USDC_MINT)).toBe(5_000_000n);

      await stopProcess(venue, "SIGTERM");
      venue = await startBundle(dir.dir, port, rpcPort);
      expect(await held(dETH)).toBe(bought);
      expect(await held(USDC_MINT)).toBe(5_000_000n);
      await stopProcess(venue, "SIGTERM");
    } finally {
      await dir.cleanup();
    }
  });
});
