/**
 * `GET /order` parameters the reference defines, honoured as it defines them or refused with its
 * codes: allowSyncExec / allowAsyncExec (and refusing both), and the priority fee as a price per
 * compute unit (computeUnitPriceMicroLamports), as lamports or a level (prioritizationFeeLamports)
 * capped by prioritizationFeeMaxLamports, never two of them at once. Effects are read from the
 * returned transaction's Compute Budget instructions. Numbers past their bounds (an amount past
 * 2^64−1, a priority fee past its cap) are refused as sent, never rounded and never a 500.
 */
import { readFileSync } from "node:fs";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressOf } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { COMPUTE_BUDGET_PROGRAM, WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderResponse } from "../../src/contract/trade.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "order-params-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
const SET_COMPUTE_UNIT_PRICE = 3;
let t: TestServer;
let chain: RpcChain;
let yesMint: Address;
let user: Address;
let signer: KeyPairSigner;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 })).markets[0];
  yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
  signer = await newFundedWallet(t.url, chain, 10_000_000_000n, [[USDC_MINT, 100_000_000n]]);
  user = signer.address;
}, 120_000);
afterAll(async () => t?.stop());

async function get(query: Record<string, string | number>) {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return { status: response.status, body: (await response.json()) as OrderResponse & { code?: string } };
}

async function ok(query: Record<string, string | number>): Promise<OrderResponse> {
  const { status, body } = await get(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  return body;
}

async function refused(query: Record<string, string | number>, code: string): Promise<void> {
  const { status, body } = await get(query);
  expect(status, JSON.stringify(query)).toBe(400);
  expect(body.code).toBe(code);
  expect(validateAgainstReference("OrderBadRequestResponse", body)).toEqual([]);
}

/** The micro-lamports of the transaction's SetComputeUnitPrice instruction. */
function computeUnitPriceOf(order: OrderResponse): bigint {
  const tx = parseWireTransaction(Buffer.from(order.transaction as string, "base64"));
  const prices = tx.instructions.filter(
    (instruction) =>
      addressOf(tx.accountKeys[instruction.programIdIndex] as Uint8Array) === COMPUTE_BUDGET_PROGRAM &&
      instruction.data[0] === SET_COMPUTE_UNIT_PRICE,
  );
  expect(prices).toHaveLength(1);
  return Buffer.from(prices[0]?.data ?? []).readBigUInt64LE(1);
}

const spot = { inputMint: USDC_MINT, outputMint: dETH, amount: 10_000_000 };

describe("GET /order execution modes", () => {
  it("routes only sync or only async when the other is refused, and refuses refusing both", async () => {
    const outcome = {
      inputMint: USDC_MINT,
      outputMint: yesMint,
      amount: 2_000_000,
      priceImpactTolerancePct: 100,
    };
    expect((await ok(outcome)).executionMode).toBe("async");
    expect((await ok({ ...outcome, allowSyncExec: "false" })).executionMode).toBe("async");
    await refused({ ...outcome, allowAsyncExec: "false" }, "route_not_found");
    expect((await ok({ ...spot, allowAsyncExec: "false" })).executionMode).toBe("sync");
    await refused({ ...spot, allowSyncExec: "false" }, "route_not_found");
    await refused(
      { ...spot, allowSyncExec: "false", allowAsyncExec: "false" },
      "cannot_disable_sync_and_async_execution",
    );
    expect((await get({ ...spot, allowSyncExec: "no" })).status).toBe(400);
  });
});

describe("GET /order priority fees", () => {
  it("sets the compute unit price asked, and reports the fee it comes to", async () => {
    const order = await ok({ ...spot, userPublicKey: user, computeUnitPriceMicroLamports: 5_000 });
    expect(computeUnitPriceOf(order)).toBe(5_000n);
    expect(order.prioritizationType?.computeBudget.microLamports).toBe(5_000);
    // ceil(limit × price / 10^6) lamports.
    const limit = order.computeUnitLimit as number;
    expect(order.prioritizationFeeLamports).toBe(Math.ceil((limit * 5_000) / 1_000_000));
    const free = await ok({ ...spot, userPublicKey: user, computeUnitPriceMicroLamports: 0 });
    expect(computeUnitPriceOf(free)).toBe(0n);
    expect(free.prioritizationFeeLamports).toBe(0);
  });

  it("refuses both ways of naming the fee at once, and a price past its bound", async () => {
    await refused(
      {
        ...spot,
        userPublicKey: user,
        computeUnitPriceMicroLamports: 5_000,
        prioritizationFeeLamports: 1_000,
      },
      "both_priority_fee_params_specified",
    );
    for (const value of ["-1", "1.5", "abc", "18446744073709551615"]) {
      expect((await get({ ...spot, computeUnitPriceMicroLamports: value })).status, value).toBe(400);
    }
  });

  it("caps the level the venue picks with prioritizationFeeMaxLamports, not a fee asked in lamports", async () => {
    const capped = await ok({
      ...spot,
      userPublicKey: user,
      prioritizationFeeLamports: "veryHigh",
      prioritizationFeeMaxLamports: 500,
    });
    expect(capped.prioritizationFeeLamports).toBe(500);
    const limit = BigInt(capped.computeUnitLimit as number);
    expect(computeUnitPriceOf(capped)).toBe((500n * 1_000_000n) / limit);
    // Uncapped, the level is what recent transactions paid (GET /priority-fees), per compute unit.
    const veryHigh = async () =>
      BigInt(
        ((await (await fetch(`${t.url}/priority-fees`)).json()) as { veryHighMicroLamports: number })
          .veryHighMicroLamports,
      );
    // Read around the order: the levels move at most once a slot, with transactions landing.
    const before = await veryHigh();
    const uncapped = await ok({ ...spot, userPublicKey: user, prioritizationFeeLamports: "veryHigh" });
    expect([before, await veryHigh()]).toContain(computeUnitPriceOf(uncapped));
    expect(uncapped.prioritizationFeeLamports).toBeLessThan(5_000_000);
    const asked = await ok({
      ...spot,
      userPublicKey: user,
      prioritizationFeeLamports: 20_000,
      prioritizationFeeMaxLamports: 500,
    });
    expect(asked.prioritizationFeeLamports).toBe(20_000);
    expect((await get({ ...spot, prioritizationFeeMaxLamports: "lots" })).status).toBe(400);
  });
});

describe("GET /order numbers past their bounds", () => {
  const U64_PAST = "18446744073709551616";
  const HUGE = "9".repeat(60);

  /** A 400 with `code` (a reference one) whose message names the parameter and its bound. */
  async function refusedPast(
    query: Record<string, string | number>,
    code: string,
    name: string,
    bound: string,
  ) {
    const { status, body } = await get(query);
    expect(status, `${JSON.stringify(query)}: ${JSON.stringify(body)}`).toBe(400);
    expect(body.code, JSON.stringify(query)).toBe(code);
    expect(validateAgainstReference("OrderBadRequestResponse", body)).toEqual([]);
    const msg = (body as unknown as { msg: string }).msg;
    expect(msg).toContain(name);
    expect(msg).toContain(bound);
    return msg;
  }

  it("refuses an amount past 2^64−1 with the amount's code, saying so, not that it is zero", async () => {
    for (const amount of [U64_PAST, HUGE]) {
      for (const query of [
        { ...spot, amount },
        { ...spot, amount, userPublicKey: user },
      ]) {
        const msg = await refusedPast(
          query,
          "requested_input_amount_is_zero",
          "amount",
          "18446744073709551615",
        );
        expect(msg).not.toContain("greater than zero");
      }
    }
    // The bound itself is a number the venue prices (here, too much for the pool), never a 500.
    const { status, body } = await get({ ...spot, amount: "18446744073709551615", userPublicKey: user });
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.code).toBe("price_impact_too_high");
  });

  it("refuses a priority fee past its bound with the priority fee's code and the bound", async () => {
    const code = "both_priority_fee_params_specified";
    for (const value of ["4294967296", "9007199254740993", U64_PAST, HUGE]) {
      await refusedPast(
        { ...spot, prioritizationFeeLamports: value },
        code,
        "prioritizationFeeLamports",
        "4294967295",
      );
      await refusedPast(
        { ...spot, prioritizationFeeLamports: "high", prioritizationFeeMaxLamports: value },
        code,
        "prioritizationFeeMaxLamports",
        "4294967295",
      );
    }
    for (const value of ["1000000000000001", "9007199254740993", "18446744073709551615", U64_PAST, HUGE]) {
      await refusedPast(
        { ...spot, userPublicKey: user, computeUnitPriceMicroLamports: value },
        code,
        "computeUnitPriceMicroLamports",
        "1000000000000000",
      );
    }
    // At their bounds they are taken.
    expect((await ok({ ...spot, prioritizationFeeLamports: "4294967295" })).inAmount).toBe("10000000");
    expect((await ok({ ...spot, computeUnitPriceMicroLamports: "1000000000000000" })).inAmount).toBe(
      "10000000",
    );
  });

  it("refuses other integers past their bounds with their own codes, naming the bound", async () => {
    await refusedPast({ ...spot, slippageBps: U64_PAST }, "invalid_slippage_bps", "slippageBps", "10000");
    await refusedPast(
      { ...spot, priceImpactTolerancePct: "9007199254740993" },
      "invalid_price_impact_tolerance_pct",
      "priceImpactTolerancePct",
      "100",
    );
    await refusedPast(
      { ...spot, platformFeeBps: HUGE },
      "invalid_platform_fee_bps",
      "platformFeeBps",
      "10000",
    );
    await refusedPast({ ...spot, maxAccounts: U64_PAST }, "max_accounts_too_small", "maxAccounts", "65535");
  });
});

describe("every reference parameter of GET /order", () => {
  const reference = JSON.parse(
    readFileSync(new URL("../support/dflow-trade-openapi.json", import.meta.url), "utf8"),
  ) as {
    paths: Record<string, { get: { parameters: { name: string }[] } }>;
    components: { schemas: { OrderBadRequestCode: { enum: string[] } } };
  };
  const names = (reference.paths["/order"]?.get.parameters ?? []).map((parameter) => parameter.name);
  const codes = new Set(reference.components.schemas.OrderBadRequestCode.enum);

  it("is declared by the venue's own OpenAPI document (none is dropped unread)", async () => {
    const ours = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[] } }>;
    };
    const declared = new Set((ours.paths["/order"]?.get.parameters ?? []).map((parameter) => parameter.name));
    expect(names.length).toBe(44);
    expect(names.filter((name) => !declared.has(name))).toEqual([]);
  });

  // A value the reference allows, and one it does not; each is honoured (200) or refused with its code.
  const samples: Record<string, [string, string]> = {
    userPublicKey: ["USER", "not-a-key"],
    inputMint: [USDC_MINT, "nope"],
    outputMint: ["DETH", "nope"],
    amount: ["1000000", "-5"],
    slippageBps: ["auto", "10001"],
    perLegSlippage: ["false", "maybe"],
    predictionMarketSlippageBps: ["auto", "x"],
    priceImpactTolerancePct: ["100", "101"],
    dexes: ["cpmm", "nowhere"],
    excludeDexes: ["prediction", "nowhere"],
    onlyDirectRoutes: ["true", "maybe"],
    maxRouteLength: ["1", "0"],
    onlyJitRoutes: ["false", "true"],
    forJitoBundle: ["false", "true"],
    allowSyncExec: ["true", "maybe"],
    allowAsyncExec: ["false", "maybe"],
    restrictRevertMint: ["true", "maybe"],
    platformFeeMode: ["outputMint", "everywhere"],
    platformFeeBps: ["0", "10001"],
    platformFeeScale: ["0", "50"],
    feeAccount: ["NOBODY", "nope"],
    positiveSlippageFeeAccount: ["NOBODY", "nope"],
    positiveSlippageLimitPct: ["10", "101"],
    sponsor: ["NOBODY", "nope"],
    sponsorExec: ["false", "maybe"],
    destinationTokenAccount: ["NOBODY", "nope"],
    destinationWallet: ["NOBODY", "nope"],
    outputCloseAuthority: ["NOBODY", "nope"],
    revertWallet: ["NOBODY", "nope"],
    wrapAndUnwrapSol: ["false", "maybe"],
    prioritizationFeeLamports: ["high", "lots"],
    prioritizationFeeMaxLamports: ["500", "lots"],
    computeUnitPriceMicroLamports: ["5000", "-1"],
    dynamicComputeUnitLimit: ["false", "true"],
    includeJitoSandwichMitigationAccount: ["false", "true"],
    predictionMarketInitPayer: ["NOBODY", "nope"],
    outcomeAccountRentRecipient: ["NOBODY", "nope"],
    skipPumpfunCashbackClaim: ["false", "true"],
    allowBondingCurveUnderconsumption: ["false", "true"],
    includeAddressLookupTables: ["true", "maybe"],
    maxAccounts: ["64", "10"],
    maxTransactionSize: ["1232", "100"],
    reserveAccounts: ["0", "5"],
    reserveTransactionSize: ["0", "100"],
  };

  it("honours each one or refuses it with a code of the reference", async () => {
    expect(Object.keys(samples).sort()).toEqual([...names].sort());
    const nobody = "11111111111111111111111111111112";
    const fill = (value: string) =>
      value === "USER" ? user : value === "DETH" ? dETH : value === "NOBODY" ? nobody : value;
    const outcomes: string[] = [];
    for (const name of names) {
      const [valid, invalid] = samples[name] as [string, string];
      for (const value of [valid, invalid]) {
        const { status, body } = await get({ ...spot, [name]: fill(value) });
        if (status === 200) {
          expect(validateAgainstReference("OrderResponse", body), name).toEqual([]);
        } else {
          expect(status, `${name}=${value}: ${JSON.stringify(body)}`).toBe(400);
          expect(codes.has(body.code as string), `${name}: ${body.code}`).toBe(true);
          expect(validateAgainstReference("OrderBadRequestResponse", body), name).toEqual([]);
        }
        outcomes.push(`${name}=${value}:${status === 200 ? "ok" : body.code}`);
      }
    }
    // The valid value of a parameter the venue honours or ignores by its meaning is taken.
    for (const name of [
      "perLegSlippage",
      "restrictRevertMint",
      "sponsorExec",
      "includeAddressLookupTables",
    ]) {
      expect(outcomes).toContain(`${name}=${(samples[name] as [string, string])[0]}:ok`);
    }
    // Without userPublicKey there is no transaction for a payer, destination or size limit to shape:
    // their effects are proved on issued transactions in order-accounts.test.ts.
    expect(outcomes).toContain("sponsor=NOBODY:ok");
    expect(outcomes).toContain("sponsor=nope:invalid_sponsor");
    expect(outcomes).toContain("destinationWallet=NOBODY:ok");
    expect(outcomes).toContain("destinationTokenAccount=NOBODY:ok");
    expect(outcomes).toContain("onlyJitRoutes=true:route_not_found");
    expect(outcomes).toContain("maxAccounts=10:ok");
    expect(outcomes).toContain("reserveAccounts=5:ok");
    expect(outcomes).toContain(
      "platformFeeScale=50:platform_fee_account_not_specified_for_platform_fee_scale",
    );
  });

  it("refuses the reference's forbidden combinations with their codes", async () => {
    const key = "11111111111111111111111111111112";
    await refused(
      { ...spot, destinationWallet: key, destinationTokenAccount: key },
      "both_destination_params_specified",
    );
    await refused(
      { ...spot, sponsor: key, predictionMarketInitPayer: key },
      "both_sponsor_and_prediction_market_init_payer_specified",
    );
    await refused(
      { ...spot, maxAccounts: 64, reserveAccounts: 0 },
      "both_max_accounts_and_reserve_accounts_specified",
    );
    await refused(
      { ...spot, maxTransactionSize: 1232, reserveTransactionSize: 0 },
      "both_max_transaction_size_and_reserve_transaction_size_specified",
    );
    await refused(
      { ...spot, skipPumpfunCashbackClaim: "true" },
      "skip_pumpfun_cashback_claim_with_sponsor_executor",
    );
    expect((await get({ ...spot, skipPumpfunCashbackClaim: "true", sponsorExec: "false" })).status).toBe(200);
    await refused(
      { ...spot, allowBondingCurveUnderconsumption: "true" },
      "allow_bonding_curve_underconsumption_with_sponsor_executor",
    );
  });

  it("refuses the venue's own keys wherever an account is named", async () => {
    const vault = t.server.trading.book.allPools()[0]?.vaults[0] as Address;
    expect(vault).toBeDefined();
    for (const name of ["positiveSlippageFeeAccount", "sponsor", "destinationWallet", "revertWallet"]) {
      const { status, body } = await get({ ...spot, [name]: vault });
      expect(status, name).toBe(400);
      expect((body as unknown as { msg: string }).msg, name).toContain("venue's own accounts");
    }
    // The pool's authority (its vault's owner) and the treasury, as the wallet paid with a firm quote.
    const authority = t.server.trading.book.allPools()[0]?.authority.address as Address;
    const treasury = t.server.chain.sandbox?.signers.treasury.address as Address;
    for (const key of [authority, treasury]) {
      expect(key).toBeDefined();
      const { status, body } = await get({ ...spot, userPublicKey: user, destinationWallet: key });
      expect(status, key).toBe(400);
      expect(body.code).toBe("invalid_destination_wallet");
    }
  });
});

describe("GET /order destinationWallet", () => {
  async function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
    return (await chain.getTokenAccountsByOwner(owner, { mint })).reduce(
      (sum, account) => sum + account.amount,
      0n,
    );
  }

  it("delivers the output to the destination's own token account, created for it, and nothing to the user", async () => {
    const destination = (await generateKeyPairSigner()).address;
    const usdcBefore = await tokenBalance(user, USDC_MINT);
    const order = await ok({ ...spot, userPublicKey: user, destinationWallet: destination });
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, signer, order.transaction as string);
    expect(await tokenBalance(destination, dETH)).toBe(BigInt(order.outAmount));
    expect(await tokenBalance(user, dETH)).toBe(0n);
    expect(await tokenBalance(user, USDC_MINT)).toBe(usdcBefore - BigInt(order.inAmount));
    // The user alone signs and pays: the destination never had to.
    const tx = parseWireTransaction(Buffer.from(order.transaction as string, "base64"));
    expect(addressOf(tx.accountKeys[0] as Uint8Array)).toBe(user);
  });

  it("refuses a destination it cannot deliver to exactly", async () => {
    const destination = (await generateKeyPairSigner()).address;
    await refused({ ...spot, destinationWallet: "not-a-key" }, "invalid_destination_wallet");
    // Native SOL to another wallet is unwrapped in the user's own account and sent on: order-accounts.test.ts.
    const toSol = {
      inputMint: USDC_MINT,
      outputMint: WRAPPED_SOL_MINT,
      amount: 1_000_000,
      userPublicKey: user,
    };
    expect(
      (await ok({ ...toSol, destinationWallet: destination, wrapAndUnwrapSol: "false" })).outputMint,
    ).toBe(WRAPPED_SOL_MINT);
    // A prediction-market order to one of the venue's keys: refused as the destination it is.
    await refused(
      {
        inputMint: USDC_MINT,
        outputMint: yesMint,
        amount: 2_000_000,
        priceImpactTolerancePct: 100,
        userPublicKey: user,
        destinationWallet: t.server.chain.sandbox?.venueKeys.treasury.address as string,
      },
      "invalid_destination_wallet",
    );
  });
});
