/**
 * Crash test of order settlement: intents are submitted to a venue that is killed with SIGKILL while
 * they are open (some waiting out their expiry, some being filled), then restarted on the same data.
 * Every order ends closed exactly once (one fill, or one refund), the user's balances add up to the
 * fills, no escrow keeps anything, and every mint's supply equals the sum of its token accounts.
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { openStorage } from "../../src/storage/database.js";
import type { IntentQuoteResponse } from "../../src/trading/prediction/intents.js";
import { storedSupplies } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";
import { assertFreshBuild, CLI_BIN } from "../support/cli.js";
import { signWithKit } from "../support/kit.js";
import { freePortRun } from "../support/ports.js";
import { stopProcess, VenueProcesses } from "../support/venue-process.js";

const VENUE_SEED = "order-crash-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
const venues = new VenueProcesses();

afterEach(() => venues.stopAll());

const startVenue = (dataDir: string, port: number, rpcPort: number) =>
  venues.start([CLI_BIN], {
    dataDir,
    port,
    rpcPort,
    venueSeed: VENUE_SEED,
    until: "/health-check",
    // Escrows swept at the keeper's next pass after their order closes.
    settings: { ESCROW_SWEEP_DELAY_MS: "0" },
  });

beforeAll(assertFreshBuild);

describe("order settlement across a kill -9", () => {
  it("settles every order exactly once after a restart, and conserves supply", async () => {
    const dir = tempDir();
    const port = await freePortRun(3);
    const rpcPort = port + 1;
    const url = `http://127.0.0.1:${port}`;
    try {
      let venue = await startVenue(dir.dir, port, rpcPort);
      const chain = new RpcChain({ url: `http://127.0.0.1:${rpcPort}` });
      const fund = async (usdc: bigint): Promise<KeyPairSigner> => {
        const wallet = await generateKeyPairSigner();
        await chain.requestAirdrop(wallet.address, 5_000_000_000n);
        const grant = await fetch(`${url}/dev/faucet`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ wallet: wallet.address, mint: USDC_MINT, amount: usdc.toString() }),
        });
        expect(grant.status).toBe(200);
        return wallet;
      };
      const user = await fund(100_000_000n);
      const intents: { quote: IntentQuoteResponse; signed: string }[] = [];
      for (const [index, slippage] of [0, 0, 0, 300, 300, 300].entries()) {
        const response = await fetch(
          `${url}/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=${5_000_000 + index}&userPublicKey=${user.address}&slippageBps=${slippage}`,
        );
        const quote = (await response.json()) as IntentQuoteResponse;
        expect(response.status, JSON.stringify(quote)).toBe(200);
        intents.push({ quote, signed: await signWithKit(user, quote.openTransaction as string) });
      }
      // A large trade moves the price first: the no-slippage intents cannot fill and wait for expiry.
      const mover = await fund(3_000_000_000n);
      const moveOrder = (await (
        await fetch(
          `${url}/order?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=3000000000&userPublicKey=${mover.address}&priceImpactTolerancePct=100`,
        )
      ).json()) as { transaction: string };
      await chain.sendTransaction(Buffer.from(await signWithKit(mover, moveOrder.transaction), "base64"));

      const submit = (intent: (typeof intents)[number]) =>
        fetch(`${url}/submit-intent`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ quoteResponse: intent.quote, signedOpenTransaction: intent.signed }),
        }).then(
          async (response) => ({
            status: response.status,
            body: (await response.json()) as Record<string, string>,
          }),
          () => undefined,
        );
      const first = await Promise.all(intents.map(submit));
      // Killed while orders are open: the no-slippage ones are certainly waiting for their expiry.
      await stopProcess(venue, "SIGKILL");

      venue = await startVenue(dir.dir, port, rpcPort);
      // Clients retry after the outage: the same signed transactions, the same answers, nothing twice.
      const retried = await Promise.all(intents.map(submit));
      expect(retried).toHaveLength(intents.length);
      // Some first answers came before the kill: their retries must repeat them.
      expect(first.some((answer) => answer?.status === 200)).toBe(true);
      retried.forEach((answer, index) => {
        expect(answer?.status, JSON.stringify(answer?.body)).toBe(200);
        const earlier = first[index];
        if (earlier?.status === 200) expect(answer?.body).toEqual(earlier.body);
      });

      const statuses: OrderStatusResponse[] = [];
      for (const answer of retried) {
        const signature = answer?.body.openTransactionSignature as string;
        const status = await vi.waitFor(
          async () => {
            const answer = (await (
              await fetch(`${url}/order-status?signature=${signature}`)
            ).json()) as OrderStatusResponse;
            expect(answer.status).toBe("closed");
            return answer;
          },
          { timeout: 60_000, interval: 100 },
        );
        statuses.push(status);
      }
      // Exactly one settlement each: a fill (with any leftover returned in the same transaction) or a refund.
      expect(statuses.length).toBeGreaterThan(3);
      for (const [index, status] of statuses.entries()) {
        const fills = status.fills ?? [];
        const reverts = status.reverts ?? [];
        expect(fills.length + (fills.length === 0 ? reverts.length : 0)).toBe(1);
        if (index < 3) expect(fills).toEqual([]);
        const escrow = retried[index]?.body.orderAddress as Address;
        await vi.waitFor(async () => expect(await chain.getBalance(escrow)).toBe(0n), {
          timeout: 15_000,
          interval: 100,
        });
      }
      const spent = statuses
        .flatMap((s) => s.fills ?? [])
        .reduce((sum, fill) => sum + BigInt(fill.inAmount), 0n);
      const received = statuses
        .flatMap((s) => s.fills ?? [])
        .reduce((sum, fill) => sum + BigInt(fill.outAmount), 0n);
      const balance = async (mint: Address) =>
        (await chain.getTokenAccountsByOwner(user.address, { mint })).reduce((sum, a) => sum + a.amount, 0n);
      expect(await balance(USDC_MINT)).toBe(100_000_000n - spent);
      expect(await balance(dETH)).toBe(received);

      await stopProcess(venue, "SIGKILL");
      const storage = await openStorage({ DATA_DIR: dir.dir });
      try {
        const { supplies, held } = await storedSupplies(storage);
        expect(supplies.get(USDC_MINT)).toBeGreaterThan(0n);
        for (const [mint, supply] of supplies) expect(held.get(mint) ?? 0n, mint).toBe(supply);
      } finally {
        await storage.close();
      }
    } finally {
      await dir.cleanup();
    }
  }, 180_000);
});
