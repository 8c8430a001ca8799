/**
 * Declarative trades end to end, with `@solana/kit` as the user's client: GET /intent, sign the open
 * transaction, POST /submit-intent, and /order-status until the order closes with a fill; an order
 * that cannot fill is refunded after its expiry; every tampering is refused with its own code, and a
 * resubmission (even concurrent) executes nothing twice.
 */
import {
  type Address,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { LAMPORTS_PER_SIGNATURE, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse } from "../../src/trading/prediction/intents.js";
import { orderBySignature } from "../../src/trading/prediction/order-store.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder, submitIntent } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { timeTravel } from "../support/time-travel.js";

const VENUE_SEED = "intents-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
let t: TestServer;
let chain: RpcChain;

beforeAll(async () => {
  // A settled intent's escrow stays readable for 3 s, then is swept back to its user.
  t = await startTestServer({
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, ESCROW_SWEEP_DELAY_MS: "3000" },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
}, 120_000);
afterAll(async () => t?.stop());

async function getJson<T>(path: string): Promise<{ status: number; body: T & { code?: string } }> {
  const response = await fetch(`${t.url}${path}`);
  return { status: response.status, body: (await response.json()) as T & { code?: string } };
}

async function intent(wallet: Address, amount: bigint, extra = ""): Promise<IntentQuoteResponse> {
  const { status, body } = await getJson<IntentQuoteResponse>(
    `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=${amount}&userPublicKey=${wallet}${extra}`,
  );
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("IntentQuoteResponse", body)).toEqual([]);
  return body;
}

async function fundedWallet(usdc: bigint): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await chain.requestAirdrop(wallet.address, 5_000_000_000n);
  const response = await fetch(`${t.url}/dev/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ wallet: wallet.address, mint: USDC_MINT, amount: usdc.toString() }),
  });
  expect(response.status).toBe(200);
  return wallet;
}

async function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(owner, { mint })).reduce(
    (sum, account) => sum + account.amount,
    0n,
  );
}

describe("intents", () => {
  it("quotes without a user, with no transaction", async () => {
    const { status, body } = await getJson<IntentQuoteResponse>(
      `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000`,
    );
    expect(status).toBe(200);
    expect(body.openTransaction).toBeUndefined();
    expect(body.feeBudget).toBe(1_000_000);
    expect(validateAgainstReference("IntentQuoteResponse", body)).toEqual([]);
  });

  it("refuses a fee budget below the minimum or malformed as too low, and one past 10 SOL as over the cap", async () => {
    const base = `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000`;
    for (const value of ["999999", "-1", "1e9"]) {
      const bad = await getJson<{ msg: string }>(`${base}&feeBudget=${value}`);
      expect(bad.status, value).toBe(400);
      expect(bad.body.code, value).toBe("requested_fee_budget_too_low");
      expect(validateAgainstReference("IntentBadRequestResponse", bad.body)).toEqual([]);
    }
    for (const value of ["10000000001", "18446744073709551616", "99999999999999999999999"]) {
      const bad = await getJson<{ msg: string }>(`${base}&feeBudget=${value}`);
      expect(bad.status, value).toBe(400);
      expect(bad.body.code, value).toBe("invalid_max_auto_fee_budget");
      expect(bad.body.msg).toContain("10000000000");
      expect(validateAgainstReference("IntentBadRequestResponse", bad.body)).toEqual([]);
    }
  });

  it("opens, fills at or above the threshold, closes, and returns the fee budget less the fees", async () => {
    const wallet = await fundedWallet(100_000_000n);
    const lamportsBefore = await chain.getBalance(wallet.address);
    const quote = await intent(wallet.address, 40_000_000n);
    expect(quote.expiry).toEqual({ slotsAfterOpen: 10 });
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const answer = await submitIntent(t.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(validateAgainstReference("IntentSwapResponse", answer.body)).toEqual([]);
    const status = await settledOrder(t.url, answer.body.openTransactionSignature as string);
    expect(status.status).toBe("closed");
    expect(status.fills).toHaveLength(1);
    expect(status.reverts).toBeUndefined();
    const fill = status.fills?.[0];
    expect(status.inAmount).toBe("40000000");
    expect(BigInt(status.outAmount)).toBeGreaterThanOrEqual(BigInt(quote.otherAmountThreshold));
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(60_000_000n);
    expect(await tokenBalance(wallet.address, dETH)).toBe(BigInt(fill?.outAmount ?? -1));
    // The user paid the open transaction's fee and the new dETH account's rent; the venue's settling
    // transaction (escrow and one pool signing) came out of the fee budget, and the rest came back.
    const [dethAccount] = await findAssociatedTokenPda({
      owner: wallet.address,
      mint: dETH,
      tokenProgram: TOKEN_PROGRAM,
    });
    const rent = (await chain.getAccountInfo(dethAccount))?.lamports ?? 0n;
    const openTx = await chain.getTransaction(answer.body.openTransactionSignature as never);
    const closeTx = await chain.getTransaction(fill?.signature as never);
    // The settling transaction is signed by the escrow and by every pool of the route it filled through.
    const closeSigners = BigInt(parseWireTransaction(closeTx?.wire as Uint8Array).signatures.length);
    expect(openTx?.fee).toBe(LAMPORTS_PER_SIGNATURE);
    expect(closeTx?.fee).toBe(LAMPORTS_PER_SIGNATURE * closeSigners);
    // Closed, the order still reads from programId + orderAddress, emptied, until it is swept.
    const orderAccount = answer.body.orderAddress as Address;
    expect((await chain.getAccountInfo(orderAccount))?.owner).toBe(answer.body.programId);
    expect(await chain.getTokenAccount(orderAccount)).toMatchObject({ mint: USDC_MINT, amount: 0n });
    // Then the sweep (one signature, paid by the escrow) returns the escrow's rent and the rest of
    // the budget: nothing is left to spend twice.
    await vi.waitFor(async () => expect(await chain.getAccountInfo(orderAccount)).toBeNull(), {
      timeout: 15_000,
      interval: 100,
    });
    expect(await chain.getBalance(wallet.address)).toBe(
      lamportsBefore -
        LAMPORTS_PER_SIGNATURE -
        rent -
        LAMPORTS_PER_SIGNATURE * closeSigners -
        LAMPORTS_PER_SIGNATURE,
    );
    // The order went from pending to settling in one write, which recorded the slot it opened in.
    const stored = await orderBySignature(
      t.server.storage.db,
      answer.body.openTransactionSignature as string,
    );
    const [openStatus] = await chain.getSignatureStatuses([answer.body.openTransactionSignature as never]);
    expect(stored?.openSlot).toBe(openStatus?.slot);
    // The escrow's authority is left with nothing either.
    expect(await chain.getBalance(stored?.escrow as Address)).toBe(0n);

    // Submitting the same signed transaction again answers the same and executes nothing.
    const again = await submitIntent(t.url, quote, signed);
    expect(again).toEqual(answer);
    expect((await settledOrder(t.url, answer.body.openTransactionSignature as string)).fills).toHaveLength(1);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(60_000_000n);
  });

  it("executes concurrent duplicates once", async () => {
    const wallet = await fundedWallet(10_000_000n);
    const quote = await intent(wallet.address, 10_000_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const answers = await Promise.all(Array.from({ length: 6 }, () => submitIntent(t.url, quote, signed)));
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]?.status).toBe(200);
    const status = await settledOrder(t.url, answers[0]?.body.openTransactionSignature as string);
    expect(status.fills).toHaveLength(1);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(0n);
  });

  it("refunds the escrow when the order cannot fill before its expiry", async () => {
    const wallet = await fundedWallet(30_000_000n);
    // No slippage: any worse price than quoted, and the order cannot fill.
    const quote = await intent(wallet.address, 30_000_000n, "&slippageBps=0");
    // Someone else's trade moves the best pool the other way first.
    const mover = await fundedWallet(2_000_000_000n);
    const order = await getJson<{ transaction: string }>(
      `/order?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=2000000000&userPublicKey=${mover.address}&priceImpactTolerancePct=100`,
    );
    const moved = getTransactionDecoder().decode(Buffer.from(order.body.transaction, "base64"));
    await chain.sendTransaction(
      Buffer.from(
        getBase64EncodedWireTransaction(await partiallySignTransaction([mover.keyPair], moved)),
        "base64",
      ),
    );
    const answer = await submitIntent(
      t.url,
      quote,
      await signWithKit(wallet, quote.openTransaction as string),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // While it waits, the order reads from programId + orderAddress: a token account of that program
    // holding the input, owned by the order's authority.
    const account = await chain.getAccountInfo(answer.body.orderAddress as Address);
    expect(account?.owner).toBe(answer.body.programId);
    expect(await chain.getTokenAccount(answer.body.orderAddress as Address)).toMatchObject({
      mint: USDC_MINT,
      amount: 30_000_000n,
    });
    const status = await settledOrder(t.url, answer.body.openTransactionSignature as string);
    expect(status).toMatchObject({ status: "closed", inAmount: "0", outAmount: "0" });
    expect(status.fills).toBeUndefined();
    expect(status.reverts).toEqual([{ signature: expect.any(String), mint: USDC_MINT, amount: "30000000" }]);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(30_000_000n);
    expect(await tokenBalance(wallet.address, dETH)).toBe(0n);
  });
});

describe("intents with a platform fee", () => {
  it("take feeBps of the fill's output into the fee account, the user's share meeting the threshold", async () => {
    const wallet = await fundedWallet(40_000_000n);
    // The fee account must exist: created by a grant of 1 unit from the faucet.
    const integrator = await newFundedWallet(t.url, chain, 1_000_000_000n, [[dETH, 1n]]);
    const [feeAccount] = await findAssociatedTokenPda({
      owner: integrator.address,
      mint: dETH,
      tokenProgram: TOKEN_PROGRAM,
    });
    const quote = await intent(wallet.address, 40_000_000n, `&platformFeeBps=100&feeAccount=${feeAccount}`);
    expect(quote.platformFee).toEqual({
      amount: expect.any(String),
      feeBps: 100,
      feeAccount,
      segmenterFeeAmount: "0",
      segmenterFeePct: 0,
    });
    const quotedFee = BigInt(quote.platformFee?.amount ?? "0");
    expect(quotedFee).toBe(((BigInt(quote.outAmount) + quotedFee) * 100n) / 10_000n);

    // The fee terms are sealed: a quote whose fee was edited is not the one issued.
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    const edited = { ...quote, platformFee: { ...quote.platformFee, feeBps: 1 } };
    const refused = await submitIntent(t.url, edited, signed);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_open_instruction_data");

    const answer = await submitIntent(t.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const status = await settledOrder(t.url, answer.body.openTransactionSignature as string);
    expect(status.status).toBe("closed");
    const userOut = BigInt(status.outAmount);
    const fee = (await tokenBalance(integrator.address, dETH)) - 1n;
    expect(await tokenBalance(wallet.address, dETH)).toBe(userOut);
    expect(userOut).toBeGreaterThanOrEqual(BigInt(quote.otherAmountThreshold));
    // feeBps of what the route paid, the rest the user's.
    expect(fee).toBe(((userOut + fee) * 100n) / 10_000n);
    expect(fee).toBeGreaterThan(0n);
  });

  it("refuse a fee without its account, past 10000 bps, or into what is no token account of the output, with the reference's codes", async () => {
    const base = `/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000`;
    const cases: [string, string][] = [
      ["&platformFeeBps=50", "invalid_fee_account"],
      [`&platformFeeBps=10001&feeAccount=${dETH}`, "invalid_platform_fee_bps"],
      [`&platformFeeBps=50&feeAccount=${dETH}`, "invalid_fee_account"],
    ];
    for (const [extra, code] of cases) {
      const { status, body } = await getJson<{ msg: string }>(`${base}${extra}`);
      expect(status, extra).toBe(400);
      expect(body.code, extra).toBe(code);
      expect(validateAgainstReference("IntentBadRequestResponse", body)).toEqual([]);
    }
  });
});

describe("concurrent intents on one route", () => {
  it("settle each on what the others left: the venue never pays one price twice", async () => {
    const amount = 40_000_000n;
    const wallets = await Promise.all(Array.from({ length: 4 }, () => fundedWallet(amount)));
    const quotes = await Promise.all(wallets.map((wallet) => intent(wallet.address, amount)));
    const signed = await Promise.all(
      wallets.map((wallet, index) => signWithKit(wallet, quotes[index]?.openTransaction as string)),
    );
    const price = await getJson<{ outAmount: string }>(
      `/order?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=${amount}`,
    );

    const answers = await Promise.all(
      quotes.map((quote, index) => submitIntent(t.url, quote, signed[index] as string)),
    );
    const fills: bigint[] = [];
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const status = await settledOrder(t.url, answer.body.openTransactionSignature as string);
      expect(status.status).toBe("closed");
      fills.push(BigInt(status.outAmount));
    }
    // Settled together, each was priced after the others' holds: one at the price before, then each
    // for less than the one before it, as if they had come one after another.
    fills.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    expect(fills[0]).toBe(BigInt(price.body.outAmount));
    for (let index = 1; index < fills.length; index++)
      expect(fills[index]).toBeLessThan(fills[index - 1] as bigint);
  });
});

describe("refused intents", () => {
  it("stay watched in one status read a pass, however many callers leave pending", async () => {
    // Intents for more than the wallet holds: the chain refuses each at preflight, and each order
    // waits for its transaction until the blockhash expires (its user may still land it).
    const wallet = await fundedWallet(1_000_000n);
    for (let i = 0; i < 5; i++) {
      const quote = await intent(wallet.address, 5_000_000n + BigInt(i));
      const answer = await submitIntent(
        t.url,
        quote,
        await signWithKit(wallet, quote.openTransaction as string),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    }
    const chainUnderTest = t.server.chain.chain;
    const read = chainUnderTest.getSignatureStatuses.bind(chainUnderTest);
    let calls = 0;
    chainUnderTest.getSignatureStatuses = (signatures: Parameters<typeof read>[0]) => {
      calls += 1;
      return read(signatures);
    };
    try {
      await t.server.trading.keeper.nextPass();
      calls = 0;
      await t.server.trading.keeper.nextPass();
      expect(calls).toBe(1);
    } finally {
      chainUnderTest.getSignatureStatuses = read;
    }
  });
});

describe("tampering", () => {
  let wallet: KeyPairSigner;
  let quote: IntentQuoteResponse;
  let signed: string;
  beforeAll(async () => {
    wallet = await fundedWallet(10_000_000n);
    quote = await intent(wallet.address, 5_000_000n);
    signed = await signWithKit(wallet, quote.openTransaction as string);
  });

  const refused = async (quoteResponse: unknown, transaction: string, code: string) => {
    const answer = await submitIntent(t.url, quoteResponse, transaction);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.code).toBe(code);
    expect(Object.keys(answer.body).sort()).toEqual(["code", "msg"]);
    expect(validateAgainstReference("SubmitIntentBadRequestResponse", answer.body)).toEqual([]);
  };

  it("refuses an edited amount or a swapped mint in the quote", async () => {
    // The quote no longer matches the terms sealed into the open instruction's data.
    await refused({ ...quote, inAmount: "4000000" }, signed, "invalid_open_instruction_data");
    await refused({ ...quote, otherAmountThreshold: "1" }, signed, "invalid_open_instruction_data");
    await refused(
      { ...quote, outputMint: USDC_MINT, inputMint: dETH },
      signed,
      "invalid_open_instruction_data",
    );
  });

  it("refuses a transaction signed by someone else", async () => {
    const other = await generateKeyPairSigner();
    const decoded = getTransactionDecoder().decode(Buffer.from(signed, "base64"));
    const forged = {
      ...decoded,
      signatures: {
        [wallet.address]: (
          await partiallySignTransaction([other.keyPair], {
            ...decoded,
            signatures: { [other.address]: null },
          })
        ).signatures[other.address],
      },
    };
    // Not signed by the quote's user: not an open transaction the venue sends.
    const forgedWire = getBase64EncodedWireTransaction(forged as typeof decoded);
    expect((await submitIntent(t.url, quote, forgedWire)).body.msg).toContain("not validly signed");
    await refused(quote, forgedWire, "invalid_open_transaction");
    await refused(quote, quote.openTransaction as string, "invalid_open_transaction");
  });

  it("refuses altered transaction bytes and transactions it did not issue", async () => {
    const bytes = Buffer.from(signed, "base64");
    // The compute-unit limit (instruction 2, 200,000 units) raised by one: a different message.
    const limit = bytes.indexOf(Buffer.from([2, 0x40, 0x0d, 0x03, 0x00]));
    expect(limit).toBeGreaterThan(0);
    const altered = Buffer.from(bytes);
    altered[limit + 1] = 0x41;
    await refused(quote, altered.toString("base64"), "invalid_open_transaction");
    // The user's signature altered, the message intact.
    const badSignature = Buffer.from(bytes);
    badSignature[10] = (badSignature[10] as number) ^ 0xff;
    await refused(quote, badSignature.toString("base64"), "invalid_open_transaction");
    await refused(quote, "bm90IGEgdHJhbnNhY3Rpb24=", "invalid_open_transaction");
    const foreign = await intent(wallet.address, 5_000_001n);
    // Another intent's transaction, for other terms.
    await refused(
      quote,
      await signWithKit(wallet, foreign.openTransaction as string),
      "invalid_open_instruction_data",
    );
  });
});

// Last: it moves the chain's clock past every blockhash issued so far.
describe("expiry", () => {
  it("refuses an open transaction past its last valid block height", async () => {
    const wallet = await fundedWallet(1_000_000n);
    const quote = await intent(wallet.address, 1_000_000n);
    const signed = await signWithKit(wallet, quote.openTransaction as string);
    // Its blockhash lives 150 blocks (a minute): the chain's clock is moved past them instead.
    const expiredAt = BigInt(quote.lastValidBlockHeight ?? 0) + 1n;
    await timeTravel(t.server.chain.rpcUrl, { absoluteSlot: Number(expiredAt) });
    expect(await chain.getBlockHeight()).toBeGreaterThanOrEqual(expiredAt);
    await venueClockReaches(expiredAt); // the venue reads the chain's clock every slot
    const answer = await submitIntent(t.url, quote, signed);
    expect(answer.status).toBe(400);
    // The reference has no code for expiry: a transaction past its blockhash fails its simulation.
    expect(answer.body.code).toBe("open_transaction_simulation_failed");
    expect(answer.body.msg).toContain("expired");
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(1_000_000n);
  });
});

/** Waits until the venue's trading book has read a block height of at least `height`. */
async function venueClockReaches(height: bigint): Promise<void> {
  for (let i = 0; i < 50 && t.server.trading.book.clock.blockHeight < height; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(t.server.trading.book.clock.blockHeight).toBeGreaterThanOrEqual(height);
}
