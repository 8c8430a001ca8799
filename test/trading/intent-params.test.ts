/**
 * Every parameter of the reference's `GET /intent` is honoured or refused with the reference's code
 * for it, never accepted and dropped: platformFeeBps, feeAccount, referralAccount, wrapAndUnwrapSol,
 * feeBudget and maxAutoFeeBudget, each with a valid and an invalid value. Every refusal is a body of
 * the reference's IntentBadRequestResponse.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { TOKEN_PROGRAM, WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse } from "../../src/trading/orders/intents.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "intent-params-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
const BASE = `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000`;
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
}, 120_000);
afterAll(async () => t?.stop());

async function get(path: string) {
  const response = await fetch(`${t.url}${path}`);
  return {
    status: response.status,
    body: (await response.json()) as IntentQuoteResponse & { code?: string },
  };
}

/** A 200 that is a reference IntentQuoteResponse. */
async function quote(path: string): Promise<IntentQuoteResponse> {
  const { status, body } = await get(path);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("IntentQuoteResponse", body)).toEqual([]);
  return body;
}

/** A 400 with `code`, whose body is the reference's IntentBadRequestResponse. */
async function refused(path: string, code: string): Promise<string> {
  const { status, body } = await get(path);
  expect(status, path).toBe(400);
  expect(body.code, path).toBe(code);
  expect(validateAgainstReference("IntentBadRequestResponse", body), path).toEqual([]);
  return (body as unknown as { msg: string }).msg;
}

/** A token account of `mint` that exists on the sandbox chain (created by the faucet). */
async function tokenAccount(mint: Address): Promise<Address> {
  const owner = await generateKeyPairSigner();
  const response = await fetch(`${t.url}/dev/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ wallet: owner.address, mint, amount: "1" }),
  });
  expect(response.status).toBe(200);
  const [account] = await findAssociatedTokenPda({ owner: owner.address, mint, tokenProgram: TOKEN_PROGRAM });
  return account;
}

describe("GET /intent parameters", () => {
  it("refuses any platform fee with invalid_platform_fee_bps, and takes 0 as no fee", async () => {
    const feeAccount = await tokenAccount(dETH);
    expect(
      await refused(`${BASE}&platformFeeBps=50&feeAccount=${feeAccount}`, "invalid_platform_fee_bps"),
    ).toContain("no platform fee");
    await refused(`${BASE}&platformFeeBps=50`, "invalid_platform_fee_bps");
    await refused(`${BASE}&platformFeeBps=abc`, "invalid_platform_fee_bps");
    const free = await quote(`${BASE}&platformFeeBps=0`);
    expect(free).not.toHaveProperty("platformFee");
  });

  it("checks feeAccount as the reference does: a token account of the output mint", async () => {
    await refused(`${BASE}&feeAccount=not-an-address`, "invalid_fee_account");
    // An address with no token account behind it, and a token account of another mint.
    const nobody = (await generateKeyPairSigner()).address;
    await refused(`${BASE}&feeAccount=${nobody}`, "invalid_fee_account");
    await refused(`${BASE}&feeAccount=${await tokenAccount(USDC_MINT)}`, "invalid_fee_account");
    const body = await quote(`${BASE}&feeAccount=${await tokenAccount(dETH)}`);
    expect(body.outputMint).toBe(dETH);
  });

  it("refuses referralAccount with invalid_referral_account: its program does not run here", async () => {
    const referral = (await generateKeyPairSigner()).address;
    expect(await refused(`${BASE}&referralAccount=${referral}`, "invalid_referral_account")).toContain(
      "Referral program",
    );
    await refused(`${BASE}&referralAccount=xyz`, "invalid_referral_account");
  });

  it("honours wrapAndUnwrapSol=true for SOL and refuses false only where SOL is traded", async () => {
    const user = await generateKeyPairSigner();
    const chain = new RpcChain({ url: t.server.chain.rpcUrl });
    await chain.requestAirdrop(user.address, 5_000_000_000n);
    const sol = `/intent?inputMint=${WRAPPED_SOL_MINT}&outputMint=${USDC_MINT}&amount=100000000&userPublicKey=${user.address}`;
    // The default and `true` fund the escrow from native SOL: the user needs no wSOL account.
    const wrapped = await quote(`${sol}&wrapAndUnwrapSol=true`);
    expect(wrapped.openTransaction).toEqual(expect.any(String));
    expect((await quote(sol)).inAmount).toBe(wrapped.inAmount);
    await refused(`${sol}&wrapAndUnwrapSol=false`, "invalid_input_mint");
    await refused(
      `/intent?inputMint=${USDC_MINT}&outputMint=${WRAPPED_SOL_MINT}&amount=1000000&wrapAndUnwrapSol=false`,
      "invalid_output_mint",
    );
    // No SOL in the trade: nothing to wrap, exactly as with true.
    expect((await quote(`${BASE}&wrapAndUnwrapSol=false`)).outAmount).toBe((await quote(BASE)).outAmount);
    expect((await get(`${BASE}&wrapAndUnwrapSol=maybe`)).status).toBe(400);
  });

  it("takes feeBudget as asked, and caps only the venue's own pick with maxAutoFeeBudget", async () => {
    expect((await quote(`${BASE}&feeBudget=1500000`)).feeBudget).toBe(1_500_000);
    await refused(`${BASE}&feeBudget=999999`, "requested_fee_budget_too_low");
    expect((await quote(`${BASE}&maxAutoFeeBudget=1000000`)).feeBudget).toBe(1_000_000);
    expect((await quote(`${BASE}&maxAutoFeeBudget=18446744073709551615`)).feeBudget).toBe(1_000_000);
    // The cap is on the automatic budget; an explicit one above it stands.
    expect((await quote(`${BASE}&feeBudget=1500000&maxAutoFeeBudget=1000000`)).feeBudget).toBe(1_500_000);
    for (const value of ["999999", "0", "abc", "-1", "18446744073709551616"]) {
      expect(await refused(`${BASE}&maxAutoFeeBudget=${value}`, "invalid_max_auto_fee_budget")).toContain(
        "1000000",
      );
    }
  });
});
