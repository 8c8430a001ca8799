/**
 * Every parameter of the reference's `GET /intent` is honoured or refused with the reference's code
 * for it, never accepted and dropped: platformFeeBps, feeAccount, referralAccount, wrapAndUnwrapSol,
 * feeBudget and maxAutoFeeBudget, each with a valid and an invalid value. Numbers past their bounds
 * (a fee budget above 10 SOL, an amount past 2^64−1) are refused as sent, never rounded and never a
 * 500. Every refusal is a body of the reference's IntentBadRequestResponse.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressOf } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { SYSTEM_PROGRAM, TOKEN_PROGRAM, WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse } from "../../src/trading/prediction/intents.js";
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

/** The lamports of the open transaction's System Program transfers (the fee budget's among them). */
function solTransfersOf(quote: IntentQuoteResponse): bigint[] {
  const tx = parseWireTransaction(Buffer.from(quote.openTransaction as string, "base64"));
  return tx.instructions
    .filter(
      (instruction) =>
        addressOf(tx.accountKeys[instruction.programIdIndex] as Uint8Array) === SYSTEM_PROGRAM &&
        Buffer.from(instruction.data).readUInt32LE(0) === 2,
    )
    .map((instruction) => Buffer.from(instruction.data).readBigUInt64LE(4));
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
  it("takes a platform fee with its account, refuses one without (invalid_fee_account) or malformed, and takes 0 as no fee", async () => {
    const feeAccount = await tokenAccount(dETH);
    const taken = await quote(`${BASE}&platformFeeBps=50&feeAccount=${feeAccount}`);
    expect(taken.platformFee).toMatchObject({ feeBps: 50, feeAccount });
    await refused(`${BASE}&platformFeeBps=50`, "invalid_fee_account");
    await refused(`${BASE}&platformFeeBps=abc`, "invalid_platform_fee_bps");
    await refused(`${BASE}&platformFeeBps=10001&feeAccount=${feeAccount}`, "invalid_platform_fee_bps");
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

  it("refuses a fee budget past 10 SOL as sent, never rounded, with or without a user", async () => {
    const user = (await generateKeyPairSigner()).address;
    const past = [
      "10000000001",
      "9007199254740991", // 2^53 − 1
      "9007199254740992", // 2^53: Number() would take it as is
      "9007199254740993", // 2^53 + 1: Number() would round it
      "18446744073709551615", // 2^64 − 1: Number() rounds it to 2^64, past a u64 transfer
      "18446744073709551616",
      "9".repeat(60),
    ];
    for (const value of past) {
      for (const path of [`${BASE}&feeBudget=${value}`, `${BASE}&feeBudget=${value}&userPublicKey=${user}`]) {
        const msg = await refused(path, "invalid_max_auto_fee_budget");
        expect(msg, path).toContain("feeBudget");
        expect(msg, path).toContain("10000000000");
      }
    }
    for (const value of ["1e10", "10000000000.0", "+1000000", "0x1000000", " 1000000"]) {
      expect(
        await refused(`${BASE}&feeBudget=${encodeURIComponent(value)}`, "requested_fee_budget_too_low"),
      ).toContain("10000000000");
    }
  });

  it("takes a large fee budget up to 10 SOL exactly, into the quote and the open transaction", async () => {
    const user = (await generateKeyPairSigner()).address;
    for (const lamports of [2_500_000_001, 10_000_000_000]) {
      expect((await quote(`${BASE}&feeBudget=${lamports}`)).feeBudget).toBe(lamports);
      const open = await quote(`${BASE}&feeBudget=${lamports}&userPublicKey=${user}`);
      expect(open.feeBudget).toBe(lamports);
      expect(solTransfersOf(open)).toContain(BigInt(lamports));
    }
    // Leading zeros are the same number.
    expect((await quote(`${BASE}&feeBudget=0001500000`)).feeBudget).toBe(1_500_000);
  });

  it("refuses an amount past 2^64−1 as past its bound, never as zero's message or a 500", async () => {
    for (const amount of ["18446744073709551616", "9".repeat(60)]) {
      const msg = await refused(
        `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=${amount}`,
        "requested_input_amount_is_zero",
      );
      expect(msg).toContain("amount");
      expect(msg).toContain("18446744073709551615");
      expect(msg).not.toContain("greater than zero");
    }
  });
});
