/**
 * One message, one execution, through every route whose transaction the venue signs (issue 36,
 * item 1): the user signs and sends it once, then re-signs the same message with fresh nonces (valid,
 * different signatures: a new transaction id each time) and sends it again. Each copy is refused with
 * Agave's AlreadyProcessed through sendTransaction and simulateTransaction, and the trade happened
 * once. Before, a 0.1 SOL firm quote landed three times and the pool paid every time.
 */
import { type Address, createSolanaRpc, getBase64EncodedWireTransaction, type Signature } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type {
  OrderResponse,
  QuoteResponse,
  SwapInstructionsResponse,
  SwapResponse,
} from "../../src/contract/trade.js";
import { rpcSend, rpcSimulatedError } from "../chain/harness.js";
import { assembleSwapInstructions, newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { newResignableSigner, type ResignableSigner, resign } from "../support/resign.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { demoMint, tokenBalance } from "../support/tokens.js";

const VENUE_SEED = "replay-test";
const dJUP = demoMint(VENUE_SEED, "dJUP");
let t: TestServer;
let chain: RpcChain;

beforeAll(async () => {
  t = await startTestServer({
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, FIRM_QUOTES_PER_WALLET: "0" },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
}, 120_000);
afterAll(async () => t?.stop());

async function trader(): Promise<ResignableSigner> {
  const wallet = await newResignableSigner();
  await newFundedWallet(t.url, chain, 10_000_000_000n, [[USDC_MINT, 1_000_000_000n]], wallet.signer);
  return wallet;
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${t.url}${path}`);
  const body = (await response.json()) as T;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as T;
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

/** Sends a signed base64 transaction as a wallet does; its signature once it has landed without error. */
async function send(signed: string): Promise<Signature> {
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(signed as never, { encoding: "base64" })
    .send();
  const [status] = await chain.getSignatureStatuses([signature]);
  expect(status?.err ?? null).toBeNull();
  return signature;
}

/** Three re-signed copies of `signed` (already landed), each refused as a replay. */
async function expectReplaysRefused(signed: string, wallet: ResignableSigner): Promise<void> {
  for (let copy = 0; copy < 3; copy++) {
    const resigned = resign(signed, wallet);
    const answer = await rpcSend(t.server.chain.rpcUrl, resigned);
    expect(answer.error, JSON.stringify(answer)).toMatchObject({ code: -32002 });
    expect(answer.error?.message).toContain("This transaction has already been processed");
    expect(await rpcSimulatedError(t.server.chain.rpcUrl, resigned)).toBe("AlreadyProcessed");
  }
}

describe("a venue-signed transaction re-signed and sent again", () => {
  it("executes an /order firm quote once", async () => {
    const wallet = await trader();
    const order = await getJson<OrderResponse>(
      `/order?inputMint=${USDC_MINT}&outputMint=${dJUP}&amount=20000000&userPublicKey=${wallet.signer.address}`,
    );
    const signed = await signWithKit(wallet.signer, order.transaction as string);
    await send(signed);
    await expectReplaysRefused(signed, wallet);
    expect(await tokenBalance(chain, wallet.signer.address, dJUP)).toBe(BigInt(order.outAmount));
    expect(await tokenBalance(chain, wallet.signer.address, USDC_MINT)).toBe(1_000_000_000n - 20_000_000n);
  });

  it("executes a /swap transaction once", async () => {
    const wallet = await trader();
    const quote = await getJson<QuoteResponse>(
      `/quote?inputMint=${USDC_MINT}&outputMint=${dJUP}&amount=20000000`,
    );
    const swap = await postJson<SwapResponse>("/swap", {
      userPublicKey: wallet.signer.address,
      quoteResponse: quote,
    });
    const signed = await signWithKit(wallet.signer, swap.swapTransaction);
    await send(signed);
    await expectReplaysRefused(signed, wallet);
    expect(await tokenBalance(chain, wallet.signer.address, dJUP)).toBe(BigInt(quote.outAmount));
  });

  it("executes /swap-instructions assembled by the client once", async () => {
    const wallet = await trader();
    const quote = await getJson<QuoteResponse>(
      `/quote?inputMint=${USDC_MINT}&outputMint=${dJUP}&amount=20000000`,
    );
    const set = await postJson<SwapInstructionsResponse>("/swap-instructions", {
      userPublicKey: wallet.signer.address,
      quoteResponse: quote,
    });
    const assembled = await assembleSwapInstructions(set, wallet.signer, [
      ...set.computeBudgetInstructions,
      ...set.setupInstructions,
      set.swapInstruction,
      ...set.cleanupInstructions,
      ...set.otherInstructions,
    ]);
    const signed = getBase64EncodedWireTransaction(assembled);
    await send(signed);
    await expectReplaysRefused(signed, wallet);
    expect(await tokenBalance(chain, wallet.signer.address, dJUP)).toBe(BigInt(quote.outAmount));
  });

  it("opens a prediction-market order once, and settles it once", async () => {
    const wallet = await trader();
    const page = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 20 });
    const yesMints = page.markets.map((market) => Object.values(market.accounts)[0]?.yesMint as Address);
    let order: OrderResponse | undefined;
    for (const yesMint of yesMints) {
      const response = await fetch(
        `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${yesMint}&amount=5000000&userPublicKey=${wallet.signer.address}&priceImpactTolerancePct=100&slippageBps=2000`,
      );
      if (response.status === 200) {
        order = (await response.json()) as OrderResponse;
        break;
      }
    }
    if (!order) throw new Error("no market sells yes contracts");
    expect(order.executionMode).toBe("async");
    const signed = await signWithKit(wallet.signer, order.transaction as string);
    const opened = await send(signed);
    const status = await settledOrder(t.url, opened);
    expect(status.status).toBe("closed");
    await expectReplaysRefused(signed, wallet);
    // The keeper's settling transactions are the venue's alone: sent again as they are, refused too.
    const fill = status.fills?.[0]?.signature as Signature;
    const settling = await chain.getTransaction(fill);
    expect(settling).not.toBeNull();
    const again = await rpcSend(t.server.chain.rpcUrl, settling?.wire as Uint8Array);
    expect(again.error).toMatchObject({ code: -32002 });
    // One order, filled once.
    const after = await getJson<{ status: string; outAmount: string }>(`/order-status?signature=${opened}`);
    expect(after).toMatchObject({ status: "closed", outAmount: status.outAmount });
    const held = await chain.getTokenAccountsByOwner(wallet.signer.address, {
      mint: order.outputMint as Address,
    });
    expect(held.reduce((sum, account) => sum + account.amount, 0n)).toBe(BigInt(status.outAmount));
  });

  it("charges a /prediction-market-init payment once", async () => {
    const wallet = await trader();
    const page = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 5 });
    const yesMint = Object.values(page.markets[0]?.accounts ?? {})[0]?.yesMint as Address;
    const init = await getJson<{ transaction: string }>(
      `/prediction-market-init?payer=${wallet.signer.address}&outcomeMint=${yesMint}`,
    );
    const signed = await signWithKit(wallet.signer, init.transaction);
    await send(signed);
    const paid = await chain.getBalance(wallet.signer.address);
    await expectReplaysRefused(signed, wallet);
    expect(await chain.getBalance(wallet.signer.address)).toBeGreaterThanOrEqual(paid - 10_000n);
  });
});
