/**
 * The async-order parameters of `/order` end to end: `revertWallet` receives the revert (the part of a
 * buy that buys no whole contract), `platformFeeScale` takes exactly k·p·(1−p)·c in USDC into
 * `feeAccount`, `computeUnitPriceMicroLamports` prices the open transaction, and what the venue does not
 * build for async orders is refused with the reference's codes.
 */
import { type Address, createSolanaRpc, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { builderFee } from "../../src/trading/prediction/orders.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { newFundedWallet, signWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let chain: RpcChain;
let yesMint: Address;
let user: KeyPairSigner;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED: "prediction-params-test" } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const page = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 40 });
  for (const market of page.markets) {
    const mint = Object.values(market.accounts)[0]?.yesMint as Address;
    const quote = await fetch(
      `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${mint}&amount=20000000&priceImpactTolerancePct=100`,
    );
    if (quote.status === 200) {
      yesMint = mint;
      break;
    }
  }
  expect(yesMint).toBeDefined();
  user = await newFundedWallet(t.url, chain, 2_000_000_000n, [[USDC_MINT, 200_000_000n]]);
}, 120_000);
afterAll(async () => t?.stop());

const orderUrl = (query: Record<string, string>) =>
  `${t.url}/order?${new URLSearchParams({ priceImpactTolerancePct: "100", ...query })}`;

async function balanceOf(owner: Address, mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(owner, { mint })).reduce((sum, a) => sum + a.amount, 0n);
}

/**
 * Asks for an order, checks it against the reference, signs, sends and waits for it to settle. The
 * slippage is wide: the demo's prices move between the quote and the fill, and past the automatic
 * 0.5% the order would be refunded instead of filled.
 */
async function trade(
  query: Record<string, string>,
): Promise<{ order: Record<string, unknown>; status: OrderStatusResponse }> {
  const response = await fetch(orderUrl({ userPublicKey: user.address, slippageBps: "2000", ...query }));
  const order = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(order)).toBe(200);
  expect(validateAgainstReference("OrderResponse", order)).toEqual([]);
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(await signWithKit(user, order.transaction as string), { encoding: "base64" })
    .send();
  return { order, status: await settledOrder(t.url, signature) };
}

describe("async-order parameters", () => {
  it("sends a buy's revert to revertWallet", async () => {
    const revertWallet = await newFundedWallet(t.url, chain, 100_000_000n);
    const { order, status } = await trade({
      inputMint: USDC_MINT,
      outputMint: yesMint,
      amount: "10500001",
      revertWallet: revertWallet.address,
      restrictRevertMint: "true",
    });
    expect(order.revertMint).toBe(USDC_MINT);
    expect(status.status).toBe("closed");
    const spent = BigInt(status.fills?.[0]?.inAmount ?? 0);
    const reverted = 10_500_001n - spent;
    expect(reverted).toBeGreaterThan(0n);
    expect(status.reverts).toEqual([
      { signature: status.fills?.[0]?.signature, mint: USDC_MINT, amount: String(reverted) },
    ]);
    expect(await balanceOf(revertWallet.address, USDC_MINT)).toBe(reverted);
  }, 30_000);

  it("takes exactly k·p·(1−p)·c in USDC into feeAccount, on a buy and on a sale", async () => {
    const builder = await newFundedWallet(t.url, chain, 100_000_000n, [[USDC_MINT, 1n]]);
    const feeAccount = associatedTokenAddress(builder.address, USDC_MINT, TOKEN_PROGRAM);
    const bought = await trade({
      inputMint: USDC_MINT,
      outputMint: yesMint,
      amount: "20000000",
      platformFeeScale: "50",
      feeAccount,
    });
    expect(bought.status, "the buy settles with one fill").toMatchObject({ status: "closed" });
    expect(bought.status.fills).toHaveLength(1);
    const buyFee = (await balanceOf(builder.address, USDC_MINT)) - 1n;
    const buyFill = bought.status.fills?.[0];
    const contracts = BigInt(buyFill?.outAmount ?? 0);
    expect(buyFee).toBe(builderFee(50, BigInt(buyFill?.inAmount ?? 0) - buyFee, contracts));
    expect(buyFee).toBeGreaterThan(0n);
    expect(bought.order.platformFee).toMatchObject({ mode: "inputMint" });

    const sold = await trade({
      inputMint: yesMint,
      outputMint: USDC_MINT,
      amount: String(contracts),
      platformFeeScale: "120",
      feeAccount,
    });
    expect(sold.status, "the sale settles with one fill").toMatchObject({ status: "closed" });
    expect(sold.status.fills).toHaveLength(1);
    const saleFee = (await balanceOf(builder.address, USDC_MINT)) - 1n - buyFee;
    const proceeds = BigInt(sold.status.fills?.[0]?.outAmount ?? 0) + saleFee;
    expect(saleFee).toBe(builderFee(120, proceeds, contracts));
    expect(saleFee).toBeGreaterThan(0n);
    expect(sold.order.platformFee).toMatchObject({ mode: "outputMint" });
  }, 60_000);

  it("prices the open transaction at computeUnitPriceMicroLamports", async () => {
    const response = await fetch(
      orderUrl({
        inputMint: USDC_MINT,
        outputMint: yesMint,
        amount: "5000000",
        userPublicKey: user.address,
        computeUnitPriceMicroLamports: "5000",
      }),
    );
    const order = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(200);
    expect(order.prioritizationType).toEqual({
      computeBudget: { microLamports: 5000, estimatedMicroLamports: 5000 },
    });
    expect(order.prioritizationFeeLamports).toBe(
      Math.ceil((5000 * (order.computeUnitLimit as number)) / 1e6),
    );
  });

  it("refuses what async orders do not honour, with the reference's codes", async () => {
    const venue = t.server.chain.sandbox?.venueKeys.treasury.address as string;
    const other = (await newFundedWallet(t.url, chain, 10_000_000n)).address;
    const buy = { inputMint: USDC_MINT, outputMint: yesMint, amount: "5000000", userPublicKey: user.address };
    const cases: [Record<string, string>, string][] = [
      [{ platformFeeBps: "10", feeAccount: other }, "invalid_platform_fee_bps"],
      [{ sponsor: venue }, "invalid_sponsor"],
      [{ destinationTokenAccount: other }, "invalid_destination_token_account"],
      [{ outputCloseAuthority: other }, "invalid_output_close_authority"],
      [{ outcomeAccountRentRecipient: other }, "invalid_outcome_account_rent_recipient"],
      [{ destinationWallet: venue }, "invalid_destination_wallet"],
      [{ revertWallet: venue }, "invalid_revert_wallet"],
      [{ predictionMarketInitPayer: venue }, "invalid_prediction_market_init_payer"],
      [{ platformFeeScale: "1000", feeAccount: other }, "invalid_platform_fee_scale"],
      [{ platformFeeScale: "50" }, "platform_fee_account_not_specified_for_platform_fee_scale"],
      [{ platformFeeScale: "50", feeAccount: other }, "invalid_fee_account"],
      [{ amount: "18446744073709551616" }, "requested_input_amount_is_zero"],
    ];
    for (const [extra, code] of cases) {
      const response = await fetch(orderUrl({ ...buy, ...extra }));
      const body = await response.json();
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect(body, JSON.stringify(extra)).toMatchObject({ code });
      expect(validateAgainstReference("OrderBadRequestResponse", body)).toEqual([]);
    }
    // At u64 max the buy is quoted (whole contracts, the rest returned) and refused cleanly for funds.
    const huge = await fetch(orderUrl({ ...buy, amount: "18446744073709551615" }));
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({
      code: "invalid_user_public_key",
      reason: "insufficient_funds",
    });
  });
});

describe("sponsored prediction-market orders", () => {
  /** A wallet holding `usdc` and not one lamport. */
  const gaslessWallet = (usdc: bigint) => newFundedWallet(t.url, chain, 0n, [[USDC_MINT, usdc]]);

  const buy = (wallet: Address, sponsor: Address) => ({
    inputMint: USDC_MINT,
    outputMint: yesMint,
    amount: "10000000",
    userPublicKey: wallet,
    sponsor,
  });

  it("let a wallet without SOL buy: the sponsor pays the fees and rents and gets back what settling leaves", async () => {
    const gasless = await gaslessWallet(10_000_000n);
    const sponsor = await newFundedWallet(t.url, chain, 1_000_000_000n);
    const before = await chain.getBalance(sponsor.address);
    const response = await fetch(orderUrl(buy(gasless.address, sponsor.address)));
    const order = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(order)).toBe(200);
    expect(validateAgainstReference("OrderResponse", order)).toEqual([]);
    // Both sign: the user moves its USDC, the sponsor pays.
    const signature = await createSolanaRpc(t.server.chain.rpcUrl)
      .sendTransaction(await signWithKit([gasless, sponsor], order.transaction as string), {
        encoding: "base64",
      })
      .send();
    const status = await settledOrder(t.url, signature);
    expect(status.status).toBe("closed");
    expect(await balanceOf(gasless.address, yesMint)).toBe(BigInt(status.outAmount));
    expect(await balanceOf(gasless.address, USDC_MINT)).toBe(10_000_000n - BigInt(status.inAmount));
    expect(await chain.getBalance(gasless.address)).toBe(0n);
    // The sponsor is out the user's new outcome account's rent and the fees (the open transaction's two
    // signatures and priority fee, the settlement's two signatures); the rest of the fee budget and the
    // escrow's rent came back to it.
    const [outcomeAccount] = await chain.getTokenAccountsByOwner(gasless.address, { mint: yesMint });
    const rent = (await chain.getAccountInfo(outcomeAccount?.address as Address))?.lamports ?? 0n;
    expect(rent).toBeGreaterThan(0n);
    const paid = before - (await chain.getBalance(sponsor.address));
    expect(paid).toBe(rent + 4n * 5_000n + BigInt(order.prioritizationFeeLamports as number));
  });

  it("refuses a sponsor that cannot pay, and backs one order at a time with a sponsor's lamports", async () => {
    const unfunded = (await generateKeyPairSigner()).address;
    const refused = await fetch(orderUrl(buy((await gaslessWallet(10_000_000n)).address, unfunded)));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "invalid_sponsor" });
    // Two signatures, the fee budget and three token accounts' rent (about 7.2 million lamports):
    // enough for one order, not two.
    const sponsor = await newFundedWallet(t.url, chain, 10_000_000n);
    const [first, second] = [await gaslessWallet(10_000_000n), await gaslessWallet(10_000_000n)];
    const answers = await Promise.all(
      [first, second].map(async (wallet) => {
        const response = await fetch(orderUrl(buy(wallet.address, sponsor.address)));
        return { status: response.status, body: (await response.json()) as { code?: string } };
      }),
    );
    expect(answers.map((answer) => answer.status).sort(), JSON.stringify(answers)).toEqual([200, 400]);
    expect(answers.find((answer) => answer.status === 400)?.body).toMatchObject({ code: "invalid_sponsor" });
    for (const answer of answers) validateAgainstReference("OrderResponse", answer.body);
    // The admitted wallet's re-quotes (a UI asking again) replace its order in the sponsor's count.
    const admitted = answers[0]?.status === 200 ? first : second;
    for (let i = 0; i < 3; i++) {
      const again = await fetch(orderUrl(buy(admitted.address, sponsor.address)));
      expect(again.status, JSON.stringify(await again.clone().json())).toBe(200);
      await again.body?.cancel();
    }
  });
});
