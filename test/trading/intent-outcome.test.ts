/**
 * POST /submit-intent when the chain does not say what became of the open transaction. Two instances
 * on one PostgreSQL database: the first runs the sandbox chain (its keeper stopped), the second uses
 * it over SOLANA_RPC_URL through a JSON-RPC proxy that can lose a send's answer after the chain
 * executed it (the chain's instance killed mid-send) or lose the send itself, and reaches PostgreSQL
 * through a TCP proxy that can cut it. An unknown outcome is a retryable 503 and the order stays with
 * the keeper, which settles it exactly once if it landed (no funds stay in escrow) and expires it with
 * nothing moved if it never did; a definite refusal is still a 400 and a failed order; a storage
 * outage is a retryable 503; a resubmission of the same transaction never opens or fills twice.
 */
import { once } from "node:events";
import http from "node:http";
import type net from "node:net";
import type { Address, Signature } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction, transactionId } from "../../src/chain/wire.js";
import { loadConfig } from "../../src/config.js";
import { ERRORS } from "../../src/contract/errors.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse } from "../../src/trading/prediction/intents.js";
import { orderBySignature } from "../../src/trading/prediction/order-store.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { BACKENDS } from "../support/backends.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder, submitIntent } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { postgresAvailable } from "../support/services.js";
import { CuttableProxy, proxied, targetOf } from "../support/tcp-proxy.js";
import { timeTravel } from "../support/time-travel.js";

const POSTGRES = BACKENDS.find((backend) => backend.name === "postgres");
const VENUE_SEED = "intent-outcome-test";
const dETH = (() => {
  const token = demoTokens(VENUE_SEED).find((each) => each.symbol === "dETH");
  if (!token) throw new Error("the demo tokens have no dETH");
  return token.address;
})();

/** What the JSON-RPC proxy does with a `sendTransaction` of a given wire transaction. */
type SendFault = "answerLost" | "neverSent";

/**
 * A JSON-RPC proxy in front of `target`. A send whose transaction has a fault set is either
 * forwarded and its answer lost (the connection cut once the chain has answered), or never
 * forwarded (the connection cut at once); every other call passes through.
 */
async function startRpcProxy(target: string) {
  const faults = new Map<string, SendFault>();
  const sends = new Map<string, number>();
  const server = http.createServer((request, response) => {
    // A call the target drops (its connection reset, or the target stopping under it) is cut on the
    // caller's side too, as a proxy would; it must not surface as an unhandled rejection.
    relay(request, response).catch(() => request.socket.destroy());
  });
  async function relay(request: http.IncomingMessage, response: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const call = JSON.parse(body.toString("utf8")) as { method?: string; params?: unknown[] };
    const wire = call.method === "sendTransaction" ? String(call.params?.[0]) : undefined;
    if (wire !== undefined) sends.set(wire, (sends.get(wire) ?? 0) + 1);
    const fault = wire === undefined ? undefined : faults.get(wire);
    if (fault === "neverSent") {
      request.socket.destroy();
      return;
    }
    const answer = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await answer.text();
    if (fault === "answerLost") {
      request.socket.destroy();
      return;
    }
    response.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  }
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults,
    /** How many times a send of this wire transaction (base64) reached the proxy. */
    sendsOf: (wire: string) => sends.get(wire) ?? 0,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

describe.skipIf(!postgresAvailable)("/submit-intent when the chain's answer is lost", () => {
  let first: TestServer;
  let second: RunningServer;
  let rpcProxy: Awaited<ReturnType<typeof startRpcProxy>>;
  let pgProxy: CuttableProxy;
  let chain: RpcChain;

  beforeAll(async () => {
    // Escrows swept at the keeper's next pass after their order closes.
    first = await startTestServer({
      backend: POSTGRES,
      settings: { DEMO_CATALOGUE: "true", VENUE_SEED, ESCROW_SWEEP_DELAY_MS: "0" },
    });
    // The second instance's keeper alone settles, over the proxy: nothing reaches the chain past it.
    await first.server.trading.keeper.stop();
    rpcProxy = await startRpcProxy(first.server.chain.rpcUrl);
    pgProxy = new CuttableProxy(targetOf(first.settings.DATABASE_URL as string));
    await pgProxy.open();
    second = await startServer(
      loadConfig(
        {},
        {
          ...first.settings,
          PORT: "0",
          SOLANA_RPC_URL: rpcProxy.url,
          DATABASE_URL: proxied(first.settings.DATABASE_URL as string, pgProxy),
        },
      ),
    );
    chain = new RpcChain({ url: first.server.chain.rpcUrl });
  }, 180_000);
  afterAll(async () => {
    await second?.close();
    await pgProxy?.cut();
    await rpcProxy?.close();
    await first?.stop();
  });

  /** A wallet with 2 SOL and `usdc` of USDC. */
  const fundedWallet = (usdc: bigint) =>
    newFundedWallet(first.url, chain, 2_000_000_000n, [[USDC_MINT, usdc]]);

  async function intent(url: string, wallet: Address, amount: bigint): Promise<IntentQuoteResponse> {
    const response = await fetch(
      `${url}/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=${amount}&userPublicKey=${wallet}`,
    );
    const body = (await response.json()) as IntentQuoteResponse;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  }

  async function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
    const accounts = await chain.getTokenAccountsByOwner(owner, { mint });
    return accounts.reduce((sum, account) => sum + account.amount, 0n);
  }

  async function ordersWith(signature: string): Promise<number> {
    const rows = await first.server.storage.db
      .selectFrom("orders")
      .select("id")
      .where("open_signature", "=", signature)
      .execute();
    return rows.length;
  }

  it("answers a send whose answer was lost after the chain executed it with a retryable 503, and the keeper settles it exactly once", async () => {
    const wallet = await fundedWallet(10_000_000n);
    const quote = await intent(second.url, wallet.address, 2_480_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const signature = signatureOf(signed);
    rpcProxy.faults.set(signed, "answerLost");

    const answer = await submitIntent(second.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.body.code).toBe("not_ready");
    expect(ERRORS.not_ready.retryable).toBe(true);
    expect(answer.retryAfter).toBe("1");
    expect(answer.body.msg).toContain("not known yet");
    expect(answer.body.msg).toContain(`/order-status?signature=${signature}`);
    // The chain did execute it: the user's input went into the escrow.
    const [landed] = await chain.getSignatureStatuses([signature]);
    expect(landed?.err).toBeNull();
    const stored = await orderBySignature(first.server.storage.db, signature);
    expect(stored?.status).not.toBe("failed");

    // Resubmitted at once: still not known (503) or already opened (200), never a refusal.
    const early = await submitIntent(second.url, quote, signed);
    expect([200, 503], JSON.stringify(early.body)).toContain(early.status);
    if (early.status === 503) expect(early.body.code).toBe("not_ready");

    // /order-status follows it (each answer a reference-valid 200) until the keeper has closed it.
    const status = await settledOrder(second.url, signature);
    expect(status.status).toBe("closed");
    expect(status.fills).toHaveLength(1);
    expect(status.inAmount).toBe("2480000");
    const fill = status.fills?.[0];
    expect(BigInt(fill?.outAmount ?? 0)).toBeGreaterThanOrEqual(BigInt(quote.otherAmountThreshold));
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(10_000_000n - 2_480_000n);
    expect(await tokenBalance(wallet.address, dETH)).toBe(BigInt(fill?.outAmount ?? -1));
    // Nothing stays in escrow once it is swept: its token account is closed and its authority holds
    // no lamports.
    const escrow = stored?.escrow;
    if (!escrow) throw new Error("the order was not stored");
    const escrowAccount = associatedTokenAddress(escrow, USDC_MINT, TOKEN_PROGRAM);
    await vi.waitFor(
      async () => {
        expect(await chain.getTokenAccount(escrowAccount)).toBeNull();
        expect(await chain.getBalance(escrow)).toBe(0n);
      },
      { timeout: 15_000, interval: 100 },
    );

    // The same transaction again, on either instance: the order as it stands, no second order or fill.
    const expected = {
      programId: TOKEN_PROGRAM,
      orderAddress: associatedTokenAddress(escrow, USDC_MINT, TOKEN_PROGRAM),
      openTransactionSignature: signature,
    };
    for (const url of [second.url, first.url]) {
      const again = await submitIntent(url, quote, signed);
      expect(again).toEqual({ status: 200, body: expected, retryAfter: null });
      expect(validateAgainstReference("IntentSwapResponse", again.body)).toEqual([]);
    }
    rpcProxy.faults.delete(signed);
    const after = await submitIntent(second.url, quote, signed);
    expect(after.body).toEqual(expected);
    expect(await ordersWith(signature)).toBe(1);
    expect((await settledOrder(second.url, signature)).fills).toHaveLength(1);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(10_000_000n - 2_480_000n);
    expect(await tokenBalance(wallet.address, dETH)).toBe(BigInt(fill?.outAmount ?? -1));
  }, 60_000);

  it("takes an intent issued by the other instance, checking its message against the sealed terms, and refuses it altered", async () => {
    const wallet = await fundedWallet(10_000_000n);
    // Issued by the first instance: the second never saw it and rebuilds its message to compare.
    const quote = await intent(first.url, wallet.address, 1_500_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const altered = Buffer.from(signed, "base64");
    // The compute-unit limit (instruction 2, 200,000 units) raised by one: a different message.
    const limit = altered.indexOf(Buffer.from([2, 0x40, 0x0d, 0x03, 0x00]));
    expect(limit).toBeGreaterThan(0);
    altered[limit + 1] = 0x41;
    const refused = await submitIntent(second.url, quote, altered.toString("base64"));
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.code).toBe("invalid_open_transaction");

    const answer = await submitIntent(second.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const status = await settledOrder(second.url, signatureOf(signed));
    expect(status.status).toBe("closed");
    expect(status.fills).toHaveLength(1);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(10_000_000n - 1_500_000n);
  }, 60_000);

  it("answers an open transaction the caller landed itself before submitting from the order's status, not with an unchecked 200", async () => {
    const wallet = await fundedWallet(10_000_000n);
    const quote = await intent(second.url, wallet.address, 1_000_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const signature = signatureOf(signed);
    // Sent straight to the chain: the venue's own send then meets AlreadyProcessed, which says the chain
    // holds it but not whether it succeeded there.
    await chain.sendTransaction(Buffer.from(signed, "base64"));
    const first = await submitIntent(second.url, quote, signed);
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    expect(first.body.code).toBe("not_ready");
    const status = await settledOrder(second.url, signature);
    expect(status.status).toBe("closed");
    expect(status.fills).toHaveLength(1);
    const again = await submitIntent(second.url, quote, signed);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.openTransactionSignature).toBe(signature);
    expect(await ordersWith(signature)).toBe(1);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(10_000_000n - 1_000_000n);
  }, 60_000);

  it("refuses an open transaction the chain refuses with 400 open_transaction_simulation_failed, and still settles it if the user lands it later", async () => {
    // Over JSON-RPC (the second instance: a preflight failure) and in process (the first: the sandbox).
    for (const url of [second.url, first.url]) {
      const wallet = await fundedWallet(5_000_000n);
      // Two intents for all of the wallet's USDC: once the first has opened, the second cannot.
      const spent = await intent(url, wallet.address, 5_000_000n);
      const refused = await intent(url, wallet.address, 5_000_000n);
      const spentSigned = await signWithKit(wallet, spent.openTransaction as string);
      expect((await submitIntent(url, spent, spentSigned)).status).toBe(200);
      const signed = await signWithKit(wallet, refused.openTransaction as string);
      const answer = await submitIntent(url, refused, signed);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.code).toBe("open_transaction_simulation_failed");
      expect(answer.body.msg).toContain("the chain refused the open transaction");
      expect(validateAgainstReference("SubmitIntentBadRequestResponse", answer.body)).toEqual([]);
      const signature = signatureOf(signed);
      // Nothing landed and the venue does not send it again, but the user holds the signed
      // transaction: until its blockhash expires the order waits for it, pending.
      const order = await orderBySignature(first.server.storage.db, signature);
      expect(order?.status).toBe("pending");
      expect(await chain.getSignatureStatuses([signature])).toEqual([null]);
      expect((await submitIntent(url, refused, signed)).body).toEqual(answer.body);
      expect((await settledOrder(url, signatureOf(spentSigned))).status).toBe("closed");
      // Funds arrive and the user lands it himself: its escrow is settled like any other's, not stranded.
      const grant = await fetch(`${first.url}/dev/faucet`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ wallet: wallet.address, mint: USDC_MINT, amount: "5000000" }),
      });
      expect(grant.status).toBe(200);
      const dethBefore = await tokenBalance(wallet.address, dETH);
      await chain.sendTransaction(Buffer.from(signed, "base64"));
      const landed = await settledOrder(url, signature);
      expect(landed.status).toBe("closed");
      // Its resubmission is now answered as a landed order's, not with the refusal.
      const afterLanding = await submitIntent(url, refused, signed);
      expect(afterLanding.status, JSON.stringify(afterLanding.body)).toBe(200);
      expect(afterLanding.body.openTransactionSignature).toBe(signature);
      const escrowUsdc = await chain.getTokenAccount(
        associatedTokenAddress(order?.escrow as Address, USDC_MINT, TOKEN_PROGRAM),
      );
      expect(escrowUsdc?.amount ?? 0n).toBe(0n);
      // Filled (its output arrives and its input is spent) or refunded (its input is back), never neither.
      const filled = BigInt(landed.outAmount ?? "0");
      expect(await tokenBalance(wallet.address, dETH)).toBe(dethBefore + filled);
      expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(filled > 0n ? 0n : 5_000_000n);
    }
  }, 90_000);

  it("fills nothing for an open transaction that never reaches the chain: it expires with nothing moved", async () => {
    const wallet = await fundedWallet(3_000_000n);
    // Issued and signed, never submitted: there is no order and nothing moves.
    const unsent = await intent(second.url, wallet.address, 1_000_000n);
    const unsentSignature = signatureOf(await signWithKit(wallet, unsent.openTransaction as string));
    const missing = await fetch(`${second.url}/order-status?signature=${unsentSignature}`);
    expect(missing.status).toBe(404);

    const quote = await intent(second.url, wallet.address, 3_000_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const signature = signatureOf(signed);
    const lamports = await chain.getBalance(wallet.address);
    // Every send of it is lost before the chain sees it: the venue's, and the keeper's again.
    rpcProxy.faults.set(signed, "neverSent");
    const answer = await submitIntent(second.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.body.code).toBe("not_ready");

    // Its blockhash lives 150 slots (about a minute): until then /order-status says pending, and the
    // keeper sends it again. Once it has, the chain's clock is moved past them rather than waited for.
    for (let i = 0; i < 100 && rpcProxy.sendsOf(signed) < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pending = await fetch(`${second.url}/order-status?signature=${signature}`);
    expect(((await pending.json()) as { status: string }).status).toBe("pending");
    await timeTravel(first.server.chain.rpcUrl, { absoluteSlot: (quote.lastValidBlockHeight ?? 0) + 1 });
    const status = await settledOrder(second.url, signature);
    expect(status).toEqual({ status: "expired", inAmount: "0", outAmount: "0" });
    // The keeper sent it again while it could land.
    expect(rpcProxy.sendsOf(signed)).toBeGreaterThan(1);
    expect(await chain.getSignatureStatuses([signature])).toEqual([null]);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(3_000_000n);
    expect(await tokenBalance(wallet.address, dETH)).toBe(0n);
    expect(await chain.getBalance(wallet.address)).toBe(lamports);
    // Resubmitted now: it expired, nothing is sent.
    const again = await submitIntent(second.url, quote, signed);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("open_transaction_simulation_failed");
    expect(again.body.msg).toContain("expired");
    expect(await ordersWith(signature)).toBe(1);
  });

  it("answers a retryable 503 while PostgreSQL is out of reach, and takes the same transaction once it is back", async () => {
    const wallet = await fundedWallet(2_000_000n);
    const quote = await intent(second.url, wallet.address, 2_000_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    await pgProxy.cut();
    try {
      const answer = await submitIntent(second.url, quote, signed);
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body.code).toBe("not_ready");
      expect(answer.body.msg).toContain("storage is unavailable");
      expect(answer.retryAfter).toBe("1");
    } finally {
      await pgProxy.open();
    }
    // Nothing was sent while it was down.
    expect(await chain.getSignatureStatuses([signatureOf(signed)])).toEqual([null]);
    const retried = await submitIntent(second.url, quote, signed);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const status = await settledOrder(second.url, signatureOf(signed));
    expect(status.status).toBe("closed");
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(0n);
  }, 60_000);
});

/** The id (first signature) of a base64 wire transaction. */
function signatureOf(signed: string): Signature {
  return transactionId(parseWireTransaction(Buffer.from(signed, "base64")));
}
