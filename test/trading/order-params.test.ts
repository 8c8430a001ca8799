/**
 * `GET /order` parameters the reference defines, honoured as it defines them or refused with its
 * codes: allowSyncExec / allowAsyncExec (and refusing both), and the priority fee as a price per
 * compute unit (computeUnitPriceMicroLamports), as lamports or a level (prioritizationFeeLamports)
 * capped by prioritizationFeeMaxLamports, never two of them at once. Effects are read from the
 * returned transaction's Compute Budget instructions.
 */
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressOf } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { COMPUTE_BUDGET_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderResponse } from "../../src/contract/trade.js";
import { newFundedWallet } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "order-params-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
const SET_COMPUTE_UNIT_PRICE = 3;
let t: TestServer;
let chain: RpcChain;
let yesMint: Address;
let user: Address;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 })).markets[0];
  yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
  user = (await newFundedWallet(t.url, chain, 10_000_000_000n, [[USDC_MINT, 100_000_000n]])).address;
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
    const uncapped = await ok({ ...spot, userPublicKey: user, prioritizationFeeLamports: "veryHigh" });
    expect(uncapped.prioritizationFeeLamports).toBe(100_000);
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
