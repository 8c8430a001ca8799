/** Following orders over the trade API as a client does: submitting an intent, polling its status. */
import { createSolanaRpc, type KeyPairSigner } from "@solana/kit";
import { expect } from "vitest";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import type { OrderResponse } from "../../src/trading/spot/desk.js";
import { signWithKit } from "./kit.js";
import { validateAgainstReference } from "./reference-schema.js";

/** POSTs `/submit-intent` to the server at `url`; returns the status, the JSON body and any Retry-After. */
export async function submitIntent(url: string, quoteResponse: unknown, signedOpenTransaction: string) {
  const response = await fetch(`${url}/submit-intent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ quoteResponse, signedOpenTransaction }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, string>,
    retryAfter: response.headers.get("retry-after"),
  };
}

/**
 * Polls `/order-status` of the server at `url` until the order opened by `signature` is closed,
 * expired or failed, for up to `withinMs`; every answer on the way must be a 200 the reference
 * schema accepts.
 */
export async function settledOrder(
  url: string,
  signature: string,
  withinMs = 30_000,
): Promise<OrderStatusResponse> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; ) {
    const response = await fetch(`${url}/order-status?signature=${signature}`);
    const body = (await response.json()) as OrderStatusResponse;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(validateAgainstReference("OrderStatusResponse", body)).toEqual([]);
    if (["closed", "expired", "failed"].includes(body.status)) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`order ${signature} did not settle within ${withinMs} ms`);
}

/**
 * Trades `amount` of `inputMint` for `outputMint` as `wallet` on the server at `url`: `GET /order`
 * with a wide slippage and price-impact tolerance, signed and sent to `rpcUrl` with kit; returns the
 * order once it has settled.
 */
export async function tradeAndSettle(
  url: string,
  rpcUrl: string,
  wallet: KeyPairSigner,
  order: { inputMint: string; outputMint: string; amount: bigint },
): Promise<OrderStatusResponse> {
  const response = await fetch(
    `${url}/order?inputMint=${order.inputMint}&outputMint=${order.outputMint}&amount=${order.amount}&userPublicKey=${wallet.address}&priceImpactTolerancePct=100&slippageBps=2000`,
  );
  const body = (await response.json()) as OrderResponse;
  expect(response.status, JSON.stringify(body)).toBe(200);
  const signed = await signWithKit(wallet, body.transaction as string);
  const signature = await createSolanaRpc(rpcUrl).sendTransaction(signed, { encoding: "base64" }).send();
  return settledOrder(url, signature);
}
