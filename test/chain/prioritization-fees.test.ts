/**
 * Recent prioritization fees of the sandbox chain: each landed transaction's SetComputeUnitPrice (0
 * without one) recorded per slot with its fee payer and the compute units it consumed, Solana's
 * per-slot lowest price with and without an accounts filter, the 150-slot window and the per-slot
 * bounds (which a flood of small transactions cannot fill to push out heavier ones); the same read
 * through the RPC client, and `getRecentPrioritizationFees` on the JSON-RPC in a node's shape, with
 * its filter bounded.
 */
import {
  type Address,
  address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
} from "@solana/kit";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import { buildSignedTransaction } from "../../src/chain/build-transaction.js";
import type { Chain } from "../../src/chain/chain.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import {
  ACCOUNTS_PER_SLOT,
  RecentPrioritizationFees,
  SAMPLES_PER_SLOT,
} from "../../src/chain/sandbox/prioritization-fees.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { tempDir } from "../support/backends.js";
import { startTestChain, type TestChain } from "./harness.js";

/** A signed transfer of `lamports` paying `microLamports` per compute unit (no price instruction when null). */
async function pricedTransfer(
  chain: Pick<Chain, "getLatestBlockhash">,
  from: KeyPairSigner,
  to: Address,
  lamports: bigint,
  microLamports: bigint | null,
): Promise<Uint8Array> {
  const transfer = getTransferSolInstruction({ source: from, destination: to, amount: lamports });
  const instructions =
    microLamports === null ? [transfer] : [getSetComputeUnitPriceInstruction({ microLamports }), transfer];
  return buildSignedTransaction(from, instructions, await chain.getLatestBlockhash());
}

/** A random, well-formed account address nobody uses. */
function randomAddress(): Address {
  return address(encodeBase58(crypto.getRandomValues(new Uint8Array(32))));
}

interface RpcAnswer {
  result?: { slot: number; prioritizationFee: number }[];
  error?: { code: number; message: string };
}

async function rpcCall(url: string, params?: unknown[]): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getRecentPrioritizationFees",
      ...(params ? { params } : {}),
    }),
  });
  return (await response.json()) as RpcAnswer;
}

describe("recent prioritization fees of the sandbox chain", () => {
  const dir = tempDir();
  const clock = new ManualClock();
  let started: TestChain;
  let alice: KeyPairSigner;
  const bob = randomAddress();
  const carol = randomAddress();
  /** The slot of the priced transfers. */
  let priced: bigint;

  beforeAll(async () => {
    started = await startTestChain({ DATA_DIR: dir.dir }, { clock });
    alice = await generateKeyPairSigner();
    clock.advanceSlots(1);
    await started.chain.requestAirdrop(alice.address, 1_000_000_000n);
    clock.advanceSlots(1);
    priced = await started.chain.getSlot();
    // One after another, so that they land in this order.
    for (const [to, price, lamports] of [
      [bob, 7_000n, 1_000_000n],
      [carol, 9_000n, 1_000_000n],
      [bob, 3_000n, 1_000_001n],
    ] as const) {
      await started.chain.sendTransaction(await pricedTransfer(started.chain, alice, to, lamports, price));
    }
    clock.advanceSlots(1);
    // A later slot completes the priced one (and prunes its accounts at or below its lowest price).
    await started.chain.sendTransaction(await pricedTransfer(started.chain, alice, bob, 5_000n, null));
  });
  afterAll(async () => {
    await started?.stop();
    await dir.cleanup();
  });

  it("keeps each landed transaction's price per slot, 0 without a SetComputeUnitPrice, with its payer and units", async () => {
    const slots = await started.chain.getRecentPrioritizationFees();
    expect(slots.map((slot) => slot.slot)).toEqual([...slots.map((slot) => slot.slot)].sort());
    // The airdrop, paid by the faucet.
    const airdrop = slots.find((slot) => slot.slot === priced - 1n);
    expect(airdrop).toEqual({
      slot: priced - 1n,
      prioritizationFee: 0n,
      transactions: [
        { feePayer: expect.any(String), computeUnitPrice: 0n, computeUnits: expect.any(BigInt) },
      ],
    });
    expect(airdrop?.transactions?.[0]?.feePayer).not.toBe(alice.address);
    expect(airdrop?.transactions?.[0]?.computeUnits).toBeGreaterThan(0n);
    // A SetComputeUnitPrice and a transfer: 300 units each.
    expect(slots.find((slot) => slot.slot === priced)).toEqual({
      slot: priced,
      prioritizationFee: 3_000n,
      transactions: [
        { feePayer: alice.address, computeUnitPrice: 7_000n, computeUnits: 300n },
        { feePayer: alice.address, computeUnitPrice: 9_000n, computeUnits: 300n },
        { feePayer: alice.address, computeUnitPrice: 3_000n, computeUnits: 300n },
      ],
    });
    expect(slots.at(-1)).toEqual({
      slot: priced + 1n,
      prioritizationFee: 0n,
      transactions: [{ feePayer: alice.address, computeUnitPrice: 0n, computeUnits: 150n }],
    });
  });

  it("reports through the RPC client each slot's lowest price, the one price a node gives", async () => {
    const rpc = new RpcChain({ url: started.rpcUrl, pollIntervalMs: 20 });
    const slots = await rpc.getRecentPrioritizationFees();
    expect(slots.find((slot) => slot.slot === priced)).toEqual({ slot: priced, prioritizationFee: 3_000n });
    expect(slots.map((slot) => slot.slot)).toEqual(
      (await started.chain.getRecentPrioritizationFees()).map((slot) => slot.slot),
    );
  });

  it("answers getRecentPrioritizationFees as a node does: per slot, raised by a filter's accounts", async () => {
    const unfiltered = await rpcCall(started.rpcUrl);
    expect(unfiltered.error).toBeUndefined();
    const entry = unfiltered.result?.find((fee) => fee.slot === Number(priced));
    expect(entry).toEqual({ slot: Number(priced), prioritizationFee: 3_000 });
    expect(Object.keys(entry ?? {})).toEqual(["slot", "prioritizationFee"]);
    expect((await rpcCall(started.rpcUrl, [[]])).result).toEqual(unfiltered.result);
    expect((await rpcCall(started.rpcUrl, [null])).result).toEqual(unfiltered.result);

    const at = async (accounts: Address[]) =>
      (await rpcCall(started.rpcUrl, [accounts])).result?.find((fee) => fee.slot === Number(priced))
        ?.prioritizationFee;
    // carol was written only at 9,000; bob at 7,000 and 3,000; alice by all three.
    expect(await at([carol])).toBe(9_000);
    expect(await at([bob])).toBe(3_000);
    expect(await at([alice.address])).toBe(3_000);
    expect(await at([bob, carol])).toBe(9_000);
    expect(await at([randomAddress()])).toBe(3_000);

    // @solana/kit reads it unchanged.
    const kit = await createSolanaRpc(started.rpcUrl).getRecentPrioritizationFees([carol]).send();
    expect(kit.find((fee) => fee.slot === priced)?.prioritizationFee).toBe(9_000n);
  });

  it("refuses a filter of more than 128 accounts, a filter that is not an array, and bad addresses", async () => {
    const accounts = Array.from({ length: 129 }, randomAddress);
    expect((await rpcCall(started.rpcUrl, [accounts])).error).toEqual({
      code: -32602,
      message: "Too many inputs provided; max 128",
    });
    expect((await rpcCall(started.rpcUrl, [accounts.slice(0, 128)])).result).toBeInstanceOf(Array);
    expect((await rpcCall(started.rpcUrl, [carol])).error?.code).toBe(-32602);
    expect((await rpcCall(started.rpcUrl, [["not-an-address"]])).error?.code).toBe(-32602);
    expect((await rpcCall(started.rpcUrl, [[42]])).error?.code).toBe(-32602);
  });

  it("forgets a slot once it is 150 slots old", async () => {
    const now = await started.chain.getSlot();
    clock.advanceSlots(Number(priced + 149n - now));
    expect((await started.chain.getRecentPrioritizationFees())[0]?.slot).toBe(priced);
    clock.advanceSlots(1);
    const slots = await started.chain.getRecentPrioritizationFees();
    expect(slots.map((slot) => slot.slot)).toEqual([priced + 1n]);
    expect((await rpcCall(started.rpcUrl)).result).toEqual([
      { slot: Number(priced + 1n), prioritizationFee: 0 },
    ]);
    clock.advanceSlots(1);
    expect(await started.chain.getRecentPrioritizationFees()).toEqual([]);
  });
});

describe("the prioritization-fee cache's bounds", () => {
  it("keeps at most SAMPLES_PER_SLOT records a slot, yet the slot's exact lowest", () => {
    const cache = new RecentPrioritizationFees();
    const account = randomAddress();
    for (let i = 0; i < SAMPLES_PER_SLOT + 100; i++) {
      cache.record(10n, {
        computeUnitPrice: BigInt(1_000_000 - i),
        writable: [randomAddress(), account],
        computeUnits: 300n,
      });
    }
    const [slot] = cache.recent(10n);
    expect(slot?.transactions).toHaveLength(SAMPLES_PER_SLOT);
    expect(slot?.prioritizationFee).toBe(BigInt(1_000_000 - SAMPLES_PER_SLOT - 99));
    expect(cache.forAccounts(10n, [account])).toEqual([
      { slot: 10n, prioritizationFee: BigInt(1_000_000 - SAMPLES_PER_SLOT - 99) },
    ]);
  });

  it("sums one payer's units at one price into one record, the payer named or the first account written", () => {
    const cache = new RecentPrioritizationFees();
    const payer = randomAddress();
    const other = randomAddress();
    for (let i = 0; i < 1_000; i++)
      cache.record(3n, { computeUnitPrice: 10n ** 9n, writable: [payer, other], computeUnits: 450n });
    cache.record(3n, { computeUnitPrice: 10n ** 9n, writable: [other], computeUnits: 50n, feePayer: payer });
    cache.record(3n, { computeUnitPrice: 5n, writable: [payer], computeUnits: 1_000n });
    // Without its units a transaction weighs nothing, so it is no record (yet still the slot's lowest).
    cache.record(3n, { computeUnitPrice: 1n, writable: [payer] });
    expect(cache.recent(3n)).toEqual([
      {
        slot: 3n,
        prioritizationFee: 1n,
        transactions: [
          { feePayer: payer, computeUnitPrice: 10n ** 9n, computeUnits: 450_050n },
          { feePayer: payer, computeUnitPrice: 5n, computeUnits: 1_000n },
        ],
      },
    ]);
  });

  it("lets no flood of small transactions push out heavier ones: a full slot takes only a heavier record, in place of the lightest", () => {
    const cache = new RecentPrioritizationFees();
    // The honest: SAMPLES_PER_SLOT / 2 payers, 40,000 units each.
    const honest = Array.from({ length: SAMPLES_PER_SLOT / 2 }, randomAddress);
    for (const payer of honest)
      cache.record(7n, { computeUnitPrice: 20_000n, writable: [payer], computeUnits: 40_000n });
    // Then 10,000 payers at a huge price, 450 units each: they fill the rest, and no more.
    for (let i = 0; i < 10_000; i++)
      cache.record(7n, { computeUnitPrice: 10n ** 9n, writable: [randomAddress()], computeUnits: 450n });
    const units = (slot = cache.recent(7n)[0]) =>
      (slot?.transactions ?? []).reduce((sum, paid) => sum + paid.computeUnits, 0n);
    expect(cache.recent(7n)[0]?.transactions).toHaveLength(SAMPLES_PER_SLOT);
    expect(units()).toBe(BigInt(SAMPLES_PER_SLOT / 2) * 40_450n);
    // A heavier one displaces a lightest one; another as light as the lightest does not get in.
    const heavy = randomAddress();
    cache.record(7n, { computeUnitPrice: 30_000n, writable: [heavy], computeUnits: 451n });
    cache.record(7n, { computeUnitPrice: 30_000n, writable: [randomAddress()], computeUnits: 450n });
    const [slot] = cache.recent(7n);
    expect(slot?.transactions).toHaveLength(SAMPLES_PER_SLOT);
    expect(units(slot)).toBe(BigInt(SAMPLES_PER_SLOT / 2) * 40_450n + 1n);
    expect(slot?.transactions).toContainEqual({
      feePayer: heavy,
      computeUnitPrice: 30_000n,
      computeUnits: 451n,
    });
    for (const payer of honest)
      expect(slot?.transactions).toContainEqual({
        feePayer: payer,
        computeUnitPrice: 20_000n,
        computeUnits: 40_000n,
      });
    expect(slot?.prioritizationFee).toBe(20_000n);
  });

  it("tracks at most ACCOUNTS_PER_SLOT accounts a slot; one past it reports the slot's lowest", () => {
    const cache = new RecentPrioritizationFees();
    cache.record(5n, { computeUnitPrice: 1n, writable: [randomAddress()] });
    for (let i = 1; i < ACCOUNTS_PER_SLOT - 1; i++) {
      cache.record(5n, { computeUnitPrice: 500n, writable: [randomAddress()] });
    }
    const tracked = randomAddress();
    const untracked = randomAddress();
    // The last account the slot has room for, then one past the cap.
    cache.record(5n, { computeUnitPrice: 800n, writable: [tracked] });
    cache.record(5n, { computeUnitPrice: 900n, writable: [untracked] });
    expect(cache.forAccounts(5n, [tracked])).toEqual([{ slot: 5n, prioritizationFee: 800n }]);
    expect(cache.forAccounts(5n, [untracked])).toEqual([{ slot: 5n, prioritizationFee: 1n }]);
  });

  it("keeps slots in order and drops those past the window", () => {
    const cache = new RecentPrioritizationFees();
    for (let slot = 0n; slot < 400n; slot++) cache.record(slot, { computeUnitPrice: slot, writable: [] });
    const kept = cache.recent(399n);
    expect(kept).toHaveLength(150);
    expect(kept[0]?.slot).toBe(250n);
    expect(kept.at(-1)?.slot).toBe(399n);
  });
});
