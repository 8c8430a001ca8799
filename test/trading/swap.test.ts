/**
 * The imperative endpoints (reference §6): `GET /quote`, `POST /swap` and `POST /swap-instructions`.
 * A quote executed through `/swap` (signed with kit) and through `/swap-instructions` (assembled by a
 * kit client) moves balances by exactly the quoted amounts; every body validates against the
 * reference's schemas; an attacker's quote or keys are refused with the swap's codes.
 */
import {
  type Address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { QuoteResponse, SwapInstructionsResponse, SwapResponse } from "../../src/contract/trade.js";
import { assembleSwapInstructions, newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ataOf, tokenBalance as balanceOfToken, demoMint } from "../support/tokens.js";

const VENUE_SEED = "swap-test";
const token = (symbol: string): Address => demoMint(VENUE_SEED, symbol);
const dJUP = token("dJUP");
const U64_MAX = (2n ** 64n - 1n).toString();
let t: TestServer;
let chain: RpcChain;
let yesMint: Address;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const page = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 });
  yesMint = Object.values(page.markets[0]?.accounts ?? {})[0]?.yesMint as Address;
}, 120_000);
afterAll(async () => t?.stop());

type Query = Record<string, string | number>;

async function quote(query: Query) {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/quote?${params}`);
  return { status: response.status, body: (await response.json()) as QuoteResponse & { code?: string } };
}

async function quoted(query: Query): Promise<QuoteResponse> {
  const { status, body } = await quote(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("QuoteResponse", body)).toEqual([]);
  return body;
}

async function quoteRefused(query: Query, code: string): Promise<void> {
  const { status, body } = await quote(query);
  expect(status, JSON.stringify(body)).toBe(400);
  expect(body.code, JSON.stringify(body)).toBe(code);
  expect(validateAgainstReference("QuoteBadRequestResponse", body)).toEqual([]);
}

async function post<T>(path: "/swap" | "/swap-instructions", body: unknown) {
  const response = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T & { code?: string; msg?: string } };
}

async function swapRefused(body: unknown, code: string, path: "/swap" | "/swap-instructions" = "/swap") {
  const answer = await post<object>(path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.code, JSON.stringify(answer.body)).toBe(code);
  expect(validateAgainstReference("SwapBadRequestResponse", answer.body)).toEqual([]);
  return answer.body.msg ?? "";
}

function wallet(grants: [Address, bigint][] = []): Promise<KeyPairSigner> {
  return newFundedWallet(t.url, chain, 10_000_000_000n, grants);
}

function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
  return balanceOfToken(chain, owner, mint);
}

/** GET /priority-fees. */
async function levels(): Promise<{ mediumMicroLamports: number; highMicroLamports: number }> {
  return (await fetch(`${t.url}/priority-fees`)).json() as Promise<{
    mediumMicroLamports: number;
    highMicroLamports: number;
  }>;
}

const usdcToJup = { inputMint: USDC_MINT, outputMint: dJUP, amount: 2_000_000 };

/**
 * A quote once the book has caught up with earlier tests' trades (a landed trade's hold is released
 * at the book's next refresh, so prices move for up to a slot after it).
 */
async function settledQuote(): Promise<QuoteResponse> {
  let previous = await quoted(usdcToJup);
  for (let attempt = 0; attempt < 20; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 400));
    const next = await quoted(usdcToJup);
    if (next.outAmount === previous.outAmount) return next;
    previous = next;
  }
  throw new Error("the pool kept moving");
}

describe("GET /quote", () => {
  it("prices a spot swap as /order does, with a request id and the routing slot", async () => {
    const body = await quoted(usdcToJup);
    const order = (await (
      await fetch(`${t.url}/order?inputMint=${USDC_MINT}&outputMint=${dJUP}&amount=2000000`)
    ).json()) as { outAmount: string; routePlan: unknown[] };
    expect(body.outAmount).toBe(order.outAmount);
    expect(body.routePlan).toEqual(order.routePlan);
    expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.routingSlot).toBe(body.contextSlot);
    expect(body).not.toHaveProperty("executionMode");
    expect(body).not.toHaveProperty("transaction");
  });

  it("takes a platform fee without a fee account, which /swap then needs", async () => {
    const body = await quoted({ ...usdcToJup, platformFeeBps: 50 });
    expect(body.platformFee).toMatchObject({ feeBps: 50, mode: "outputMint" });
    expect(BigInt(body.platformFee?.amount ?? "0")).toBeGreaterThan(0n);
  });

  it("refuses bad parameters with the quote's codes", async () => {
    await quoteRefused({ ...usdcToJup, amount: 0 }, "requested_input_amount_is_zero");
    await quoteRefused({ ...usdcToJup, inputMint: "nope" }, "invalid_input_mint");
    await quoteRefused({ ...usdcToJup, outputMint: USDC_MINT }, "same_input_and_output_mint");
    await quoteRefused({ ...usdcToJup, slippageBps: 10_001 }, "invalid_slippage_bps");
    await quoteRefused({ ...usdcToJup, dexes: "Nowhere" }, "invalid_dex");
    await quoteRefused({ ...usdcToJup, sponsoredSwap: "yes" }, "invalid_platform_fee_bps");
    await quoteRefused({ ...usdcToJup, forJitoBundle: "maybe" }, "invalid_dex");
    await quoteRefused({ ...usdcToJup, onlyJitRoutes: "true" }, "route_not_found");
    await quoteRefused({ ...usdcToJup, amount: U64_MAX }, "price_impact_too_high");
  });

  it("sends prediction markets to /order, whatever their price would have said", async () => {
    expect(yesMint).toBeDefined();
    await quoteRefused(
      { inputMint: USDC_MINT, outputMint: yesMint, amount: 5_000_000, priceImpactTolerancePct: 100 },
      "use_order_endpoint_for_prediction_markets",
    );
    // Past what the book holds (price_impact_too_high, were it priced) and selling: still /order's.
    await quoteRefused(
      { inputMint: USDC_MINT, outputMint: yesMint, amount: U64_MAX, priceImpactTolerancePct: 0 },
      "use_order_endpoint_for_prediction_markets",
    );
    await quoteRefused(
      { inputMint: yesMint, outputMint: USDC_MINT, amount: 1_000_000 },
      "use_order_endpoint_for_prediction_markets",
    );
  });
});

describe("POST /swap", () => {
  it("executes a quote: the user pays exactly inAmount and receives exactly outAmount", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const answer = await post<SwapResponse>("/swap", { userPublicKey: user.address, quoteResponse: body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(validateAgainstReference("SwapResponse", answer.body)).toEqual([]);
    const [usdcBefore, jupBefore] = [
      await tokenBalance(user.address, USDC_MINT),
      await tokenBalance(user.address, dJUP),
    ];
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, user, answer.body.swapTransaction);
    expect(usdcBefore - (await tokenBalance(user.address, USDC_MINT))).toBe(BigInt(body.inAmount));
    expect((await tokenBalance(user.address, dJUP)) - jupBefore).toBe(BigInt(body.outAmount));
  });

  it("pays the route's price now, never a quote's forged outAmount", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const forged = { ...body, outAmount: (BigInt(body.outAmount) * 10n).toString() };
    const answer = await post<SwapResponse>("/swap", { userPublicKey: user.address, quoteResponse: forged });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const before = await tokenBalance(user.address, dJUP);
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, user, answer.body.swapTransaction);
    expect((await tokenBalance(user.address, dJUP)) - before).toBe(BigInt(body.outAmount));
  });

  it("refuses a quote whose otherAmountThreshold the route no longer meets", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const greedy = { ...body, otherAmountThreshold: (BigInt(body.outAmount) + 1n).toString() };
    const msg = await swapRefused(
      { userPublicKey: user.address, quoteResponse: greedy },
      "invalid_out_amount",
    );
    expect(msg).toContain("otherAmountThreshold");
  });

  it("refuses a malformed quote with the swap's codes", async () => {
    const user = await wallet();
    const body = await quoted(usdcToJup);
    const base = { userPublicKey: user.address };
    await swapRefused({ ...base, quoteResponse: { ...body, routePlan: [] } }, "route_is_empty");
    const leg = body.routePlan[0];
    await swapRefused({ ...base, quoteResponse: { ...body, routePlan: [leg, leg, leg] } }, "route_too_long");
    await swapRefused(
      { ...base, quoteResponse: { ...body, routePlan: [{ ...leg, inputMint: dJUP }] } },
      "invalid_route_plan_leg",
    );
    await swapRefused(
      { ...base, quoteResponse: { ...body, routePlan: [{ ...leg, venue: "Nowhere" }] } },
      "invalid_route_plan_leg",
    );
    await swapRefused({ ...base, quoteResponse: { ...body, outAmount: "-5" } }, "invalid_out_amount");
    await swapRefused(
      { ...base, quoteResponse: { ...body, otherAmountThreshold: `${U64_MAX}0` } },
      "invalid_out_amount",
    );
    await swapRefused({ ...base, quoteResponse: { ...body, inAmount: "0" } }, "invalid_route_plan_leg");
    await swapRefused({ userPublicKey: "nope", quoteResponse: body }, "invalid_user_public_key");
    await swapRefused({ quoteResponse: body }, "invalid_user_public_key");
    await swapRefused({ ...base }, "invalid_route_plan_leg");
    await swapRefused(
      { ...base, quoteResponse: body, prioritizationFeeLamports: "lots" },
      "both_priority_fee_params_specified",
    );
    await swapRefused(
      { ...base, quoteResponse: body, prioritizationFeeLamports: 1_000, computeUnitPriceMicroLamports: 5 },
      "both_priority_fee_params_specified",
    );
    await swapRefused(
      { ...base, quoteResponse: body, createFeeAccount: { referralAccount: user.address } },
      "invalid_referral_account",
    );
    await swapRefused(
      { ...base, quoteResponse: body, includeJitoSandwichMitigationAccount: user.address },
      "invalid_jito_sandwich_mitigation_account",
    );
  });

  it("needs a fee account for a quote with a platform fee, and pays the fee into it", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const integrator = await wallet([[dJUP, 1n]]);
    const body = await quoted({ ...usdcToJup, platformFeeBps: 100 });
    await swapRefused({ userPublicKey: user.address, quoteResponse: body }, "invalid_fee_account");
    const feeAccount = await ataOf(integrator.address, dJUP);
    const answer = await post<SwapResponse>("/swap", {
      userPublicKey: user.address,
      quoteResponse: body,
      feeAccount,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, user, answer.body.swapTransaction);
    expect(await tokenBalance(integrator.address, dJUP)).toBe(1n + BigInt(body.platformFee?.amount ?? "0"));
  });

  it("delivers to an owner's associated account and honours a priority level with an auto multiplier", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const friend = await wallet();
    const body = await quoted(usdcToJup);
    const answer = await post<SwapResponse>("/swap", {
      userPublicKey: user.address,
      quoteResponse: body,
      destinationTokenAccount: { associatedTokenAccount: { owner: friend.address } },
      prioritizationFeeLamports: {
        priorityLevelWithMaxLamports: { priorityLevel: "high", maxLamports: 50_000 },
      },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // The levels move at most once a slot, as transactions land: read them on both sides of a request.
    const around = async (request: () => Promise<{ body: SwapResponse }>) => {
      const before = await levels();
      const { body } = await request();
      return { body, candidates: [before, await levels()] };
    };
    const price = (swap: SwapResponse) => BigInt(swap.prioritizationType?.computeBudget.microLamports ?? -1);
    const capped = (perUnit: number, limit: number, maxLamports: number) =>
      BigInt(Math.min(perUnit, Math.floor((maxLamports * 1_000_000) / limit)));
    const high = await around(async () => answer);
    expect(answer.body.prioritizationFeeLamports).toBeLessThanOrEqual(50_000);
    expect(
      high.candidates.map((level) => capped(level.highMicroLamports, answer.body.computeUnitLimit, 50_000)),
    ).toContain(price(answer.body));
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, user, answer.body.swapTransaction);
    expect(await tokenBalance(friend.address, dJUP)).toBe(BigInt(body.outAmount));
    const quote = await quoted(usdcToJup);
    const tripled = await around(() =>
      post<SwapResponse>("/swap", {
        userPublicKey: user.address,
        quoteResponse: quote,
        prioritizationFeeLamports: { autoMultiplier: 3 },
      }),
    );
    // auto is the medium level; the multiplier applies to it, within the 0.005 SOL cap.
    expect(
      tripled.candidates.map((level) =>
        capped(3 * level.mediumMicroLamports, tripled.body.computeUnitLimit, 5_000_000),
      ),
    ).toContain(price(tripled.body));
    expect(price(tripled.body)).toBeGreaterThan(0n);
  });
});

describe("POST /swap and prediction markets", () => {
  it("refuses a quote into an outcome mint: prediction markets trade through /order", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const leg = body.routePlan[0] as QuoteResponse["routePlan"][number];
    const outcome = {
      ...body,
      outputMint: yesMint,
      routePlan: [{ ...leg, venue: "prediction", outputMint: yesMint }],
    };
    for (const path of ["/swap", "/swap-instructions"] as const)
      await swapRefused(
        { userPublicKey: user.address, quoteResponse: outcome },
        "invalid_route_plan_leg",
        path,
      );
  });
});

describe("the attacker's /swap", () => {
  it("refuses a venue key as the user, the sponsor, the fee account or the destination", async () => {
    const body = await quoted(usdcToJup);
    const poolAuthority = body.routePlan[0]?.marketKey as Address;
    const vault = await ataOf(poolAuthority, dJUP);
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    for (const path of ["/swap", "/swap-instructions"] as const) {
      await swapRefused(
        { userPublicKey: poolAuthority, quoteResponse: body },
        "invalid_user_public_key",
        path,
      );
      await swapRefused(
        { userPublicKey: user.address, quoteResponse: body, sponsor: poolAuthority },
        "invalid_sponsor",
        path,
      );
      await swapRefused(
        {
          userPublicKey: user.address,
          quoteResponse: await quoted({ ...usdcToJup, platformFeeBps: 9_999 }),
          feeAccount: vault,
        },
        "invalid_fee_account",
        path,
      );
      await swapRefused(
        { userPublicKey: user.address, quoteResponse: body, destinationTokenAccount: vault },
        "invalid_destination_token_account",
        path,
      );
      await swapRefused(
        {
          userPublicKey: user.address,
          quoteResponse: body,
          destinationTokenAccount: { associatedTokenAccount: { owner: poolAuthority } },
        },
        "invalid_destination_token_account",
        path,
      );
    }
  });

  it("refuses amounts at u64 max and a caller who cannot pay, before anything is reserved", async () => {
    const broke = await wallet();
    const body = await settledQuote();
    const huge = { ...body, inAmount: U64_MAX, otherAmountThreshold: "0" };
    const answer = await post<object>("/swap", { userPublicKey: broke.address, quoteResponse: huge });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    const unfunded = await post<object>("/swap", { userPublicKey: broke.address, quoteResponse: body });
    expect(unfunded.status, JSON.stringify(unfunded.body)).toBe(400);
    expect(unfunded.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    // Nothing was held for them: the same quote still prices the same for a funded user.
    expect((await quoted(usdcToJup)).outAmount).toBe(body.outAmount);
  });
});

describe("POST /swap-instructions", () => {
  it("returns instructions a kit client assembles, adds the pools' signatures to and lands with the quoted effect", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const answer = await post<SwapInstructionsResponse>("/swap-instructions", {
      userPublicKey: user.address,
      quoteResponse: body,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(validateAgainstReference("SwapInstructionsResponse", answer.body)).toEqual([]);
    const set = answer.body;
    expect(set.computeBudgetInstructions).toHaveLength(2);
    expect(set.addressLookupTableAddresses).toEqual([]);
    expect(Object.keys(set.venueSignatures)).toContain(body.routePlan[0]?.marketKey);

    const signed = await assembleSwapInstructions(set, user, [
      ...set.computeBudgetInstructions,
      ...set.setupInstructions,
      set.swapInstruction,
      ...set.cleanupInstructions,
      ...set.otherInstructions,
    ]);
    const [usdcBefore, jupBefore] = [
      await tokenBalance(user.address, USDC_MINT),
      await tokenBalance(user.address, dJUP),
    ];
    const signature = await createSolanaRpc(t.server.chain.rpcUrl)
      .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" })
      .send();
    const [status] = await chain.getSignatureStatuses([signature]);
    expect(status?.err ?? null).toBeNull();
    expect(usdcBefore - (await tokenBalance(user.address, USDC_MINT))).toBe(BigInt(body.inAmount));
    expect((await tokenBalance(user.address, dJUP)) - jupBefore).toBe(BigInt(body.outAmount));
  });

  it("is refused by the chain when the instructions are assembled in another order", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const body = await quoted(usdcToJup);
    const answer = await post<SwapInstructionsResponse>("/swap-instructions", {
      userPublicKey: user.address,
      quoteResponse: body,
    });
    expect(answer.status).toBe(200);
    const set = answer.body;
    // The pools signed one message: the same instructions with the two compute-budget ones swapped
    // would run just as well, but they are another message, which the pools did not sign.
    const [limit, price] = set.computeBudgetInstructions;
    expect(limit && price).toBeTruthy();
    const reordered = await assembleSwapInstructions(set, user, [
      price as (typeof set.computeBudgetInstructions)[number],
      limit as (typeof set.computeBudgetInstructions)[number],
      ...set.setupInstructions,
      set.swapInstruction,
      ...set.cleanupInstructions,
    ]);
    const before = await tokenBalance(user.address, USDC_MINT);
    await expect(
      createSolanaRpc(t.server.chain.rpcUrl)
        .sendTransaction(getBase64EncodedWireTransaction(reordered), { encoding: "base64" })
        .send(),
    ).rejects.toThrow(/signature/i);
    expect(await tokenBalance(user.address, USDC_MINT)).toBe(before);
  });

  it("refuses native SOL output to an owner's associated account", async () => {
    const user = await wallet([[dJUP, 10_000_000n]]);
    const body = await quoted({ inputMint: dJUP, outputMint: WRAPPED_SOL_MINT, amount: 1_000_000 });
    await swapRefused(
      {
        userPublicKey: user.address,
        quoteResponse: body,
        destinationTokenAccount: { associatedTokenAccount: { owner: user.address } },
      },
      "invalid_destination_token_account_for_native_sol",
      "/swap-instructions",
    );
  });
});
