/**
 * Issue 36, finding 3: an instance whose sandbox chain lease another instance took (after a pause,
 * or taken for dead) must stop trusting its own copy of the chain. Its readiness and liveness say so
 * (503, `chain fenced`), every firm quote and quote is refused with 503 `not_ready` and nothing signed,
 * its own JSON-RPC answers reads as an unhealthy node does (-32005), and its quote stream publishes
 * nothing from the frozen state. Two venues' chains on one database, on SQLite and PostgreSQL.
 */
import { spawnSync } from "node:child_process";
import type { Address } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { ChainLeaseLostError } from "../../src/chain/sandbox/lease.js";
import { SandboxChain } from "../../src/chain/sandbox/sandbox-chain.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage } from "../../src/storage/database.js";
import { TradingNotReady } from "../../src/trading/errors.js";
import { BACKENDS } from "../support/backends.js";
import { newFundedWallet } from "../support/kit.js";
import { connectStream } from "../support/pair-streams.js";
import { startTestServer } from "../support/server.js";
import { rpcCall } from "./harness.js";

interface Frame {
  u?: number;
  type?: string;
  subscribe?: unknown[];
  updates?: unknown[];
}

const rpc = rpcCall;

async function get(url: string) {
  const response = await fetch(url);
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: response.status, body };
}

async function post(url: string, body: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`an instance whose chain lease was taken (${backend.name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it("serves no chain state, quote or signature from its frozen copy, and says why", async () => {
      const VENUE_SEED = `fenced-${backend.name}`;
      const t = await startTestServer({ backend, settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
      cleanups.push(() => t.stop());
      const { url } = t;
      const { rpcUrl } = t.server.chain;
      const sandbox = t.server.chain.sandbox;
      if (!sandbox) throw new Error("the test server runs the embedded sandbox chain");
      const lease = sandbox.chain.lease;
      const seller = await newFundedWallet(url, new RpcChain({ url: rpcUrl }), 40_000_000_000n);
      const sale = `inputMint=${WRAPPED_SOL_MINT}&outputMint=${USDC_MINT}&amount=10000000000&priceImpactTolerancePct=100`;
      const init = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 1 });
      const outcomeMint = Object.values(init.markets[0]?.accounts ?? {})[0]?.yesMint as Address;
      expect(outcomeMint).toBeDefined();

      // While it is the writer, it trades.
      expect((await get(`${url}/health-check/ready`)).status).toBe(200);
      const firm = await get(`${url}/order?${sale}&userPublicKey=${seller.address}`);
      expect(firm.status, JSON.stringify(firm.body)).toBe(200);
      expect(typeof firm.body.transaction).toBe("string");
      const quote = await get(`${url}/quote?${sale}`);
      expect(quote.status, JSON.stringify(quote.body)).toBe(200);
      expect((await rpc(rpcUrl, "getBalance", [seller.address])).result).toMatchObject({
        value: 40_000_000_000,
      });

      // Another instance takes the chain over: this one is taken for dead (as after a pause past its
      // lease, or a kill that was not one), and the other loads the chain from storage and runs it.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      const other = await openStorage(loadConfig({}, t.settings));
      cleanups.push(() => other.close());
      await other.db.updateTable("chain_lease").set({ pid: dead }).execute();
      const writer = await SandboxChain.open({ storage: other });
      cleanups.push(() => writer.close());
      expect(writer.lease.heldEpoch).toBe(2);
      // This instance learns it at its next renewal.
      expect(await lease.renew()).toBe(false);
      expect(lease.lost).toBeInstanceOf(ChainLeaseLostError);

      // Not ready, not live, and the contract's health check says 503 too.
      const ready = await get(`${url}/health-check/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ code: "not_ready", msg: expect.stringContaining("chain fenced") });
      const live = await get(`${url}/health-check/live`);
      expect(live.status).toBe(503);
      expect(live.body).toMatchObject({ code: "not_ready", msg: expect.stringMatching(/lease.*restart/) });
      const health = await get(`${url}/health-check`);
      expect(health.status).toBe(503);
      // In the reference's code for an instance behind its chain, the venue's own as the reason.
      expect(health.body).toMatchObject({ code: "amm_map_lagging", reason: "not_ready" });

      // No firm quote: refused, nothing signed.
      const refused = await get(`${url}/order?${sale}&userPublicKey=${seller.address}`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body).toMatchObject({
        code: "amm_map_lagging",
        reason: "not_ready",
        msg: expect.stringContaining("lease"),
      });
      expect(refused.body.transaction).toBeUndefined();
      for (const path of ["/swap", "/swap-instructions"]) {
        const swap = await post(`${url}${path}`, {
          userPublicKey: seller.address,
          quoteResponse: quote.body,
        });
        expect(swap.status, `${path} ${JSON.stringify(swap.body)}`).toBe(503);
        expect(swap.body.code).toBe("not_ready");
        expect(swap.body.swapTransaction).toBeUndefined();
      }
      for (const path of [
        `/order?${sale}`,
        `/quote?${sale}`,
        `/intent?${sale}&userPublicKey=${seller.address}`,
        `/prediction-market-init?payer=${seller.address}&outcomeMint=${outcomeMint}`,
      ]) {
        const answer = await get(`${url}${path}`);
        expect(answer.status, `${path} ${JSON.stringify(answer.body)}`).toBe(503);
        // The quoting routes whose reference declares a 503 say it in its code; the venue's is the reason.
        const reference = path.startsWith("/prediction-market-init") ? "not_ready" : "amm_map_lagging";
        expect(answer.body.code, path).toBe(reference);
        expect(answer.body.transaction ?? answer.body.openTransaction, path).toBeUndefined();
      }

      // Its JSON-RPC answers as an unhealthy node; what names the node still answers.
      for (const [method, params] of [
        ["getBalance", [seller.address]],
        ["getAccountInfo", [seller.address]],
        ["getLatestBlockhash", []],
        ["getSlot", []],
        ["getHealth", []],
      ] as const) {
        const answer = await rpc(rpcUrl, method, [...params]);
        expect(answer.error, method).toMatchObject({ code: -32005, data: { numSlotsBehind: null } });
        expect(answer.result, method).toBeUndefined();
      }
      expect((await rpc(rpcUrl, "getVersion")).result).toBeDefined();
      // In process too: the state reads the venue quotes from refuse.
      await expect(sandbox.chain.getBalance(seller.address)).rejects.toMatchObject({ code: -32005 });

      // Its quote stream publishes nothing from the frozen state: a pair subscribed now gets no quote
      // (nor anything priced for other instances), only the chain's `stale` frame.
      expect(() => t.server.trading.quotes.computeQuotes([`${WRAPPED_SOL_MINT}|${USDC_MINT}`])).toThrow(
        TradingNotReady,
      );
      const stream = await connectStream<Frame>(`${url.replace("http", "ws")}/quote-stream`);
      cleanups.push(async () => void stream.socket.close());
      stream.send({ op: "subscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT });
      await stream.next((frame) => frame.type === "stale", 15_000);
      expect(stream.messages.filter((frame) => frame.type === undefined)).toEqual([]);
    }, 120_000);
  });
}
