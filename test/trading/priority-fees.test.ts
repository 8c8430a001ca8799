/**
 * Priority fees: the percentile rule over a node's slot lowests and its floors; the venue's rule over
 * what each transaction paid (weighted by compute units, each fee payer capped, a quiet window padded)
 * and what it costs to move a level under it; the estimator over a stand-in chain; then the real
 * server: the issue's attack (30 transactions at 10^9 µlamports a unit, 0.015 SOL) leaving
 * `GET /priority-fees` and `/priority-fees/stream` at the floors, and what moving `veryHigh` really
 * costs, the bodies validated against the reference schema, the sandbox JSON-RPC's per-slot answer for
 * those transactions, bad_request frames, slow consumers, the heartbeat, 503 before the chain has been
 * read, and the production upgrade check.
 */
import { EventEmitter, once } from "node:events";
import websocket from "@fastify/websocket";
import {
  AccountRole,
  type Address,
  generateKeyPairSigner,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { buildApp } from "../../src/app/build-app.js";
import { buildSignedTransaction } from "../../src/chain/build-transaction.js";
import type { Chain, LandedPrice, SlotPrioritizationFees } from "../../src/chain/chain.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { PriorityFeeStreamHub } from "../../src/trading/routes/priority-fees-stream.js";
import {
  MAX_PAYER_SHARE,
  MIN_WINDOW_UNITS,
  PRIORITY_FEE_FLOORS,
  PriorityFeeEstimator,
  type PriorityFeeLevels,
  priorityFeeLevels,
  weightedPriorityFeeLevels,
  windowWeight,
} from "../../src/trading/streams/priority-fees.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { expectProductionStreamAccess } from "../support/streams.js";
import { refusingChain, unstartedTradingApi } from "../support/trading-api.js";

const FLOORS = { mediumMicroLamports: 1_000, highMicroLamports: 5_000, veryHighMicroLamports: 10_000 };

/** A stand-in chain whose recent slots a test sets. */
class StubChain implements Pick<Chain, "getRecentPrioritizationFees"> {
  slots: SlotPrioritizationFees[] = [];
  failure: Error | undefined;
  reads = 0;

  async getRecentPrioritizationFees(): Promise<SlotPrioritizationFees[]> {
    this.reads += 1;
    if (this.failure) throw this.failure;
    return this.slots;
  }

  /** As a node reports them: one slot a price from `slot` on, each its slot's lowest. */
  setPrices(slot: bigint, prices: bigint[]): void {
    this.slots = prices.map((price, i) => ({ slot: slot + BigInt(i), prioritizationFee: price }));
  }

  /** As the sandbox reports them: one slot where these paid. */
  setPaid(slot: bigint, transactions: LandedPrice[]): void {
    const lowest = transactions.reduce(
      (low, paid) => (paid.computeUnitPrice < low ? paid.computeUnitPrice : low),
      transactions[0]?.computeUnitPrice ?? 0n,
    );
    this.slots = [{ slot, prioritizationFee: lowest, transactions }];
  }
}

/** `count` fee payers (named `name-i`), each paying `price` for `units` compute units. */
function payers(name: string, count: number, price: bigint, units: number): LandedPrice[] {
  return Array.from({ length: count }, (_, i) => ({
    feePayer: `${name}-${i}` as Address,
    computeUnitPrice: price,
    computeUnits: BigInt(units),
  }));
}

/** The issue's attack: 30 transactions of 450 units (a transfer, a limit and a price) at 10^9 µlamports a unit. */
const ATTACK_PRICE = 1_000_000_000n;
const ATTACK_UNITS = 450;
/** What each of them costs: the signature and ceil(450 × 10^9 / 10^6) lamports of priority fee. */
const ATTACK_FEE = 5_000n + 450_000n;
/** The issue's budget: 0.015 SOL. */
const ISSUE_BUDGET = 15_000_000n;

/**
 * The cheapest attack that raises `level` to at least `price` over `honest`: for each count of fee
 * payers, the fewest units each must consume at `price` (found by bisection through the rule itself),
 * and what that costs in lamports (the priority fee on those units, and a signature for every
 * 1,400,000 units, a transaction's most). Undefined when no attacker with up to 40 payers can.
 */
function cheapestAttack(
  honest: readonly LandedPrice[],
  price: bigint,
  level: keyof PriorityFeeLevels = "veryHighMicroLamports",
): { payers: number; unitsEach: number; lamports: bigint } | undefined {
  const moves = (count: number, units: number) =>
    weightedPriorityFeeLevels([...honest, ...payers("attacker", count, price, units)])[level] >=
    Number(price);
  let best: { payers: number; unitsEach: number; lamports: bigint } | undefined;
  for (let count = 1; count <= 40; count++) {
    let high = 1e12;
    if (!moves(count, high)) continue;
    let low = 0;
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (moves(count, mid)) high = mid;
      else low = mid;
    }
    const perPayer =
      (BigInt(high) * price + 999_999n) / 1_000_000n + 5_000n * BigInt(Math.ceil(high / 1_400_000));
    const lamports = BigInt(count) * perPayer;
    if (!best || lamports < best.lamports) best = { payers: count, unitsEach: high, lamports };
  }
  return best;
}

/** A WebSocket client that keeps every frame and lets a test wait for one (event-driven, no polling). */
async function openStream(url: string, options: WebSocket.ClientOptions = {}) {
  const socket = new WebSocket(url, options);
  const frames: Record<string, unknown>[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  socket.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as Record<string, unknown>);
    wake?.();
  });
  socket.on("close", () => wake?.());
  await once(socket, "open");
  /** The next frame not read yet that satisfies `predicate` (frames before it are read too). */
  const next = async (predicate: (frame: Record<string, unknown>) => boolean = () => true) => {
    for (;;) {
      while (read < frames.length) {
        const frame = frames[read++] as Record<string, unknown>;
        if (predicate(frame)) return frame;
      }
      if (socket.readyState !== WebSocket.OPEN)
        throw new Error(`stream closed; frames: ${JSON.stringify(frames)}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  return { socket, frames, next };
}

const levelsFrame = (levels: PriorityFeeLevels) => (frame: Record<string, unknown>) =>
  frame.mediumMicroLamports === levels.mediumMicroLamports &&
  frame.highMicroLamports === levels.highMicroLamports &&
  frame.veryHighMicroLamports === levels.veryHighMicroLamports;

describe("the percentile rule", () => {
  it("has the documented floors", () => {
    expect(PRIORITY_FEE_FLOORS).toEqual(FLOORS);
  });

  it("takes the 50th, 75th and 95th percentiles by nearest rank", () => {
    // 100 prices 10,000 … 1,000,000: the k-th percentile is the k-th smallest.
    const prices = Array.from({ length: 100 }, (_, i) => BigInt((100 - i) * 10_000));
    expect(priorityFeeLevels(prices)).toEqual({
      mediumMicroLamports: 500_000,
      highMicroLamports: 750_000,
      veryHighMicroLamports: 950_000,
    });
    // 7 prices: ranks ceil(3.5) = 4, ceil(5.25) = 6, ceil(6.65) = 7.
    expect(priorityFeeLevels([70n, 10n, 60n, 20n, 50n, 30n, 40n].map((p) => p * 1_000n))).toEqual({
      mediumMicroLamports: 40_000,
      highMicroLamports: 60_000,
      veryHighMicroLamports: 70_000,
    });
  });

  it("raises each level to its floor: no samples, nothing paid, or little paid", () => {
    expect(priorityFeeLevels([])).toEqual(FLOORS);
    expect(priorityFeeLevels([0n, 0n, 0n])).toEqual(FLOORS);
    expect(priorityFeeLevels([2_000n, 7_000n])).toEqual({
      mediumMicroLamports: 2_000,
      highMicroLamports: 7_000,
      veryHighMicroLamports: 10_000,
    });
  });

  it("caps a hostile price at the largest exact JSON integer", () => {
    const huge = 2n ** 64n - 1n;
    expect(priorityFeeLevels([huge])).toEqual({
      mediumMicroLamports: Number.MAX_SAFE_INTEGER,
      highMicroLamports: Number.MAX_SAFE_INTEGER,
      veryHighMicroLamports: Number.MAX_SAFE_INTEGER,
    });
  });
});

describe("the venue's rule: compute-unit-weighted, each fee payer capped, a quiet window padded", () => {
  it("weighs each price by the compute units that paid it, not by the transactions", () => {
    // 60 payers of 1,000,000 units at 20,000, 15 at 100,000, and 15 transactions of 450 units at 10^9.
    const honest = [...payers("low", 60, 20_000n, 1_000_000), ...payers("high", 15, 100_000n, 1_000_000)];
    const cheap = payers("cheap", 15, ATTACK_PRICE, ATTACK_UNITS);
    expect(weightedPriorityFeeLevels([...honest, ...cheap])).toEqual({
      mediumMicroLamports: 20_000,
      highMicroLamports: 20_000,
      veryHighMicroLamports: 100_000,
    });
    // Counted a transaction each (a node's rule over these prices), the 15 would be the top sixth.
    const prices = [...honest, ...cheap].map((paid) => paid.computeUnitPrice);
    expect(priorityFeeLevels(prices).veryHighMicroLamports).toBe(1_000_000_000);
  });

  it("reduces to the nearest rank when every payer weighs the same and the window is full", () => {
    const paid = Array.from({ length: 100 }, (_, i) => ({
      feePayer: `payer-${i}` as Address,
      computeUnitPrice: BigInt((100 - i) * 10_000),
      computeUnits: 1_000_000n,
    }));
    expect(weightedPriorityFeeLevels(paid)).toEqual({
      mediumMicroLamports: 500_000,
      highMicroLamports: 750_000,
      veryHighMicroLamports: 950_000,
    });
  });

  it("caps one payer at MAX_PAYER_SHARE of the window: 100,000,000 units at 10^9 (100 SOL) move nothing", () => {
    const honest = payers("honest", 40, 20_000n, 1_500_000);
    const whale = payers("whale", 1, ATTACK_PRICE, 100_000_000);
    const units = [...honest, ...whale].map((paid) => Number(paid.computeUnits));
    // 40 × 1,500,000 whole, and the whale cut to 4% of the 62,500,000 they make.
    expect(windowWeight(units)).toBeCloseTo(62_500_000, 0);
    expect(MAX_PAYER_SHARE).toBe(0.04);
    expect(weightedPriorityFeeLevels([...honest, ...whale])).toEqual({
      mediumMicroLamports: 20_000,
      highMicroLamports: 20_000,
      veryHighMicroLamports: 20_000,
    });
  });

  it("counts the units a window lighter than MIN_WINDOW_UNITS lacks as paying nothing", () => {
    expect(MIN_WINDOW_UNITS).toBe(48_000_000);
    expect(windowWeight([])).toBe(MIN_WINDOW_UNITS);
    expect(windowWeight([1_000_000, 2_000_000])).toBe(MIN_WINDOW_UNITS);
    expect(weightedPriorityFeeLevels([])).toEqual(FLOORS);
    // One payer's 10,000,000 units: cut to 4% of the window, under veryHigh's 5%.
    expect(weightedPriorityFeeLevels(payers("one", 1, 50_000n, 10_000_000))).toEqual(FLOORS);
    // Two payers' 1,200,000 units each are exactly 5%: a tie, which does not move it...
    expect(weightedPriorityFeeLevels(payers("two", 2, 50_000n, 1_200_000))).toEqual(FLOORS);
    // ...and one unit more does; high and medium need more (25% and 50%, from 7 and 13 payers).
    expect(weightedPriorityFeeLevels(payers("two", 2, 50_000n, 1_200_001))).toEqual({
      ...FLOORS,
      veryHighMicroLamports: 50_000,
    });
    expect(weightedPriorityFeeLevels(payers("many", 13, 50_000n, 1_920_000))).toEqual({
      mediumMicroLamports: 50_000,
      highMicroLamports: 50_000,
      veryHighMicroLamports: 50_000,
    });
  });

  it("caps a hostile price at the largest exact JSON integer", () => {
    expect(weightedPriorityFeeLevels(payers("huge", 30, 2n ** 64n - 1n, 2_000_000))).toEqual({
      mediumMicroLamports: Number.MAX_SAFE_INTEGER,
      highMicroLamports: Number.MAX_SAFE_INTEGER,
      veryHighMicroLamports: Number.MAX_SAFE_INTEGER,
    });
  });
});

describe("what it costs to move a level", () => {
  it("the issue's attack, 30 transactions at 10^9 for 0.015 SOL, from one payer or thirty, moves nothing", () => {
    expect(30n * ATTACK_FEE).toBeLessThanOrEqual(ISSUE_BUDGET);
    const onePayer = Array.from({ length: 30 }, () => payers("attacker", 1, ATTACK_PRICE, ATTACK_UNITS)[0]);
    const thirtyPayers = payers("attacker", 30, ATTACK_PRICE, ATTACK_UNITS);
    for (const attack of [onePayer, thirtyPayers] as LandedPrice[][]) {
      expect(weightedPriorityFeeLevels(attack)).toEqual(FLOORS);
      // Nor over a little honest traffic: 20 payers' transfers paying nothing.
      expect(weightedPriorityFeeLevels([...payers("honest", 20, 0n, 150), ...attack])).toEqual(FLOORS);
    }
    // Counted a transaction each, as the levels were, it raised all three to 10^9.
    expect(priorityFeeLevels(thirtyPayers.map((paid) => paid.computeUnitPrice))).toEqual({
      mediumMicroLamports: 1_000_000_000,
      highMicroLamports: 1_000_000_000,
      veryHighMicroLamports: 1_000_000_000,
    });
  });

  it("one payer cannot move veryHigh whatever it spends", () => {
    const quiet = weightedPriorityFeeLevels(payers("attacker", 1, ATTACK_PRICE, 1e12));
    expect(quiet).toEqual(FLOORS);
    const busy = [...payers("honest", 60, 20_000n, 1_000_000)];
    expect(weightedPriorityFeeLevels([...busy, ...payers("attacker", 1, ATTACK_PRICE, 1e12)])).toEqual(
      weightedPriorityFeeLevels(busy),
    );
  });

  it("over a quiet window, veryHigh to 10^9 takes two payers and 2,400,002 units: over 2.4 SOL, 160 times the issue's budget", () => {
    const attack = cheapestAttack([], ATTACK_PRICE);
    expect(attack).toEqual({ payers: 2, unitsEach: 1_200_001, lamports: 2n * (1_200_001_000n + 5_000n) });
    expect((attack?.lamports ?? 0n) / ISSUE_BUDGET).toBe(160n);
    // At 2.5 × 10^7, the price that takes a 200,000-unit veryHigh order to the 5,000,000-lamport cap.
    const capping = cheapestAttack([], 25_000_000n);
    expect(capping?.lamports).toBeGreaterThan(4n * ISSUE_BUDGET);
    // high and medium: more than 25% and 50% of the window, from at least 7 and 13 payers.
    const high = cheapestAttack([], ATTACK_PRICE, "highMicroLamports");
    expect(high?.payers).toBeGreaterThanOrEqual(7);
    expect(high?.lamports).toBeGreaterThan(12n * 10n ** 9n);
    const medium = cheapestAttack([], ATTACK_PRICE, "mediumMicroLamports");
    expect(medium?.payers).toBeGreaterThanOrEqual(13);
    expect(medium?.lamports).toBeGreaterThan(24n * 10n ** 9n);
  });

  it("costs more the busier the chain: over 60,000,000 honest units, more than a nineteenth of them", () => {
    const honest = payers("honest", 60, 20_000n, 1_000_000);
    const attack = cheapestAttack(honest, ATTACK_PRICE);
    // The attacker's units must be more than 5% of the window they join: u > 60,000,000 / 19.
    const units = BigInt((attack?.payers ?? 0) * (attack?.unitsEach ?? 0));
    expect(units).toBeGreaterThan(60_000_000n / 19n);
    expect(units).toBeLessThan(60_000_000n / 19n + 100n);
    expect(attack?.lamports).toBeGreaterThan(3_157_000_000n);
  });
});

describe("PriorityFeeEstimator", () => {
  it("reports the floors until read, then the levels of the chain's prices, notifying only changes", async () => {
    const chain = new StubChain();
    const estimator = new PriorityFeeEstimator({ chain });
    const heard: PriorityFeeLevels[] = [];
    const stop = estimator.onChange((levels) => heard.push(levels));
    expect(estimator.ready).toBe(false);
    expect(estimator.levels()).toEqual(FLOORS);

    // The first read is heard even when it finds the floors: the levels are now known.
    await estimator.refresh();
    expect(estimator.ready).toBe(true);
    expect(heard).toEqual([FLOORS]);

    chain.setPrices(10n, [100_000n, 200_000n, 300_000n, 400_000n]);
    const levels = await estimator.refresh();
    const expected = {
      mediumMicroLamports: 200_000,
      highMicroLamports: 300_000,
      veryHighMicroLamports: 400_000,
    };
    expect(levels).toEqual(expected);
    expect(estimator.levels()).toEqual(expected);
    await estimator.refresh();
    // Other prices with the same levels: not a change either.
    chain.setPrices(11n, [150_000n, 200_000n, 300_000n, 400_000n]);
    await estimator.refresh();
    expect(heard).toEqual([FLOORS, expected]);

    stop();
    chain.setPrices(12n, [1n]);
    expect(await estimator.refresh()).toEqual(FLOORS);
    expect(heard).toHaveLength(2);
  });

  it("keeps the last levels when the chain cannot be read, and reports the failure", async () => {
    const chain = new StubChain();
    const errors: unknown[] = [];
    const estimator = new PriorityFeeEstimator({ chain }, { onError: (error) => errors.push(error) });
    chain.setPrices(3n, [50_000n]);
    await estimator.refresh();
    chain.failure = new Error("node down");
    await expect(estimator.refresh()).rejects.toThrow("node down");
    expect(estimator.levels().mediumMicroLamports).toBe(50_000);

    // On its schedule, the failure goes to onError and the refreshes go on.
    estimator.start();
    await estimator.nextRefresh();
    estimator.stop();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toBe(chain.failure);
    expect(estimator.levels().mediumMicroLamports).toBe(50_000);
  });
});

describe("PriorityFeeEstimator over what each transaction paid", () => {
  it("uses the weighted rule, and sees units added to a record it already had", async () => {
    const chain = new StubChain();
    const estimator = new PriorityFeeEstimator({ chain });
    const two = payers("payer", 2, 50_000n, 1_200_000);
    chain.setPaid(9n, two);
    expect(await estimator.refresh()).toEqual(FLOORS);
    // The same records, one of them heavier by a unit: now more than 5%.
    chain.setPaid(9n, [two[0] as LandedPrice, { ...(two[1] as LandedPrice), computeUnits: 1_200_001n }]);
    expect(await estimator.refresh()).toEqual({ ...FLOORS, veryHighMicroLamports: 50_000 });
  });
});

/** SPL Token's AmountToUiAmount of `amount` on the USDC mint: reads only the mint, consumes compute. */
function amountToUiAmount(amount: number): Instruction {
  const data = new Uint8Array(9);
  data[0] = 23;
  new DataView(data.buffer).setBigUint64(1, BigInt(amount), true);
  return {
    programAddress: TOKEN_PROGRAM,
    accounts: [{ address: USDC_MINT, role: AccountRole.READONLY }],
    data,
  };
}

async function rpcCall(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await response.json()) as { result?: unknown; error?: unknown };
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

describe("GET /priority-fees and /priority-fees/stream on the real server", () => {
  let t: TestServer;
  let chain: RpcChain;
  let estimator: PriorityFeeEstimator;
  let streamUrl: string;

  beforeAll(async () => {
    t = await startTestServer();
    chain = new RpcChain({ url: t.server.chain.rpcUrl, pollIntervalMs: 20 });
    estimator = t.server.trading.priorityFees;
    streamUrl = `${t.server.tradeUrl.replace("http", "ws")}/priority-fees/stream`;
  }, 120_000);
  afterAll(async () => t?.stop());

  async function getLevels(): Promise<unknown> {
    const response = await fetch(`${t.server.tradeUrl}/priority-fees`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body: unknown = await response.json();
    expect(validateAgainstReference("PriorityFeesResponse", body)).toEqual([]);
    return body;
  }

  it("answers the floors while every recent transaction paid no priority, valid against the reference", async () => {
    await estimator.refresh();
    expect(await getLevels()).toEqual(FLOORS);
  });

  it("sends the current levels on connect, and a bad_request for any message, staying open", async () => {
    const client = await openStream(streamUrl);
    try {
      expect(await client.next()).toEqual(FLOORS);
      client.socket.send(JSON.stringify({ op: "subscribe" }));
      expect(await client.next()).toEqual({
        type: "bad_request",
        message: expect.stringContaining("no messages"),
      });
      client.socket.send("not json");
      expect(await client.next()).toEqual({ type: "bad_request", message: "messages must be JSON text" });
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      client.socket.close();
    }
  });

  it("leaves the levels at the floors after the issue's attack: 30 transactions at 10^9 µlamports a unit, 0.015 SOL, from one payer or from five", async () => {
    const client = await openStream(streamUrl);
    try {
      expect(await client.next()).toEqual(FLOORS);
      const recipient = (await generateKeyPairSigner()).address;
      const attack = async (payers: KeyPairSigner[], each: number) => {
        const before = await Promise.all(payers.map((payer) => chain.getBalance(payer.address)));
        const sent = await Promise.all(
          payers.flatMap((payer) =>
            Array.from({ length: each }, async (_, i) =>
              chain.sendTransaction(
                await buildSignedTransaction(
                  payer,
                  [
                    getSetComputeUnitLimitInstruction({ units: ATTACK_UNITS }),
                    getSetComputeUnitPriceInstruction({ microLamports: ATTACK_PRICE }),
                    getTransferSolInstruction({
                      source: payer,
                      destination: recipient,
                      amount: 1_000_000n + BigInt(i),
                    }),
                  ],
                  await chain.getLatestBlockhash(),
                ),
              ),
            ),
          ),
        );
        const after = await Promise.all(payers.map((payer) => chain.getBalance(payer.address)));
        const transferred =
          BigInt(payers.length) *
          Array.from({ length: each }, (_, i) => 1_000_000n + BigInt(i)).reduce((a, b) => a + b, 0n);
        const spent = before.reduce((a, b) => a + b, 0n) - after.reduce((a, b) => a + b, 0n) - transferred;
        return { sent, spent };
      };
      const funded = async (count: number) => {
        const payers = await Promise.all(Array.from({ length: count }, () => generateKeyPairSigner()));
        for (const payer of payers) await chain.requestAirdrop(payer.address, 1_000_000_000n);
        return payers;
      };

      const one = await attack(await funded(1), 30);
      // What the issue's attacker spent: 30 × (5,000 + 450,000) lamports, within 0.015 SOL.
      expect(one.spent).toBe(30n * ATTACK_FEE);
      expect(one.spent).toBeLessThanOrEqual(ISSUE_BUDGET);
      expect(await estimator.refresh()).toEqual(FLOORS);
      expect(await getLevels()).toEqual(FLOORS);

      const five = await attack(await funded(5), 6);
      expect(five.spent).toBe(30n * ATTACK_FEE);
      expect(await estimator.refresh()).toEqual(FLOORS);
      expect(await getLevels()).toEqual(FLOORS);

      // The node's own answer is Solana's still: every slot the attack landed in, filtered by the
      // account only it wrote, paid 10^9.
      const slots = new Set(
        (await chain.getSignatureStatuses([...one.sent, ...five.sent])).map((status) => Number(status?.slot)),
      );
      const perSlot = (await rpcCall(t.server.chain.rpcUrl, "getRecentPrioritizationFees", [
        [recipient],
      ])) as { slot: number; prioritizationFee: number }[];
      for (const slot of slots) expect(perSlot).toContainEqual({ slot, prioritizationFee: 1_000_000_000 });

      // The stream said the floors on connect and nothing since.
      expect(client.frames).toEqual([FLOORS]);
    } finally {
      client.socket.close();
    }
  });

  it("moves veryHigh only past 5% of a block's compute from two payers, and costs what the rule says", async () => {
    const client = await openStream(streamUrl);
    try {
      expect(await client.next()).toEqual(FLOORS);
      const price = 1_000_000n;
      // A heavy transaction: 61 token instructions reading the USDC mint, some 22,000 units.
      const heavy = async (payer: KeyPairSigner, n: number) =>
        buildSignedTransaction(
          payer,
          [
            getSetComputeUnitLimitInstruction({ units: 30_000 }),
            getSetComputeUnitPriceInstruction({ microLamports: price }),
            ...Array.from({ length: 61 }, (_, i) => amountToUiAmount(i === 0 ? n : 1)),
          ],
          await chain.getLatestBlockhash(),
        );
      const [first, second] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
      for (const payer of [first, second])
        await chain.requestAirdrop((payer as KeyPairSigner).address, 1_000_000_000n);
      const simulated = await chain.simulateTransaction(await heavy(first as KeyPairSigner, 0));
      expect(simulated.err).toBeNull();
      const units = simulated.unitsConsumed;
      expect(units).toBeGreaterThan(20_000n);
      // Each payer: just over 2.5% of MIN_WINDOW_UNITS.
      const each = Math.ceil((MIN_WINDOW_UNITS * 0.025) / Number(units)) + 1;
      const spend = async (payer: KeyPairSigner) => {
        const before = await chain.getBalance(payer.address);
        await Promise.all(
          Array.from({ length: each }, async (_, n) => chain.sendTransaction(await heavy(payer, n))),
        );
        return before - (await chain.getBalance(payer.address));
      };

      // One payer alone moves nothing: it carries at most 4% of the window.
      const firstSpent = await spend(first as KeyPairSigner);
      expect(await estimator.refresh()).toEqual(FLOORS);
      // A second one takes veryHigh to their price; high and medium stay.
      const secondSpent = await spend(second as KeyPairSigner);
      const raised = { ...FLOORS, veryHighMicroLamports: Number(price) };
      expect(await estimator.refresh()).toEqual(raised);
      expect(await getLevels()).toEqual(raised);
      await client.next(levelsFrame(raised));

      // What it cost: each transaction's signature and its 30,000-unit limit at the price, which is
      // more than the 2,400,000 units the rule asks for at the price, 2.4 × price lamports.
      const spent = firstSpent + secondSpent;
      expect(spent).toBe(BigInt(2 * each) * (5_000n + (30_000n * price) / 1_000_000n));
      expect(spent).toBeGreaterThan((BigInt(MIN_WINDOW_UNITS) * price) / 20n / 1_000_000n);
      for (const frame of client.frames)
        expect(validateAgainstReference("PriorityFeesResponse", frame)).toEqual([]);
    } finally {
      client.socket.close();
    }
  });

  it("answers plain HTTP on the stream's path with a {code,msg} 426", async () => {
    const response = await fetch(`${t.server.tradeUrl}/priority-fees/stream`);
    expect(response.status).toBe(426);
    expect(await response.json()).toEqual({
      code: "upgrade_required",
      msg: expect.stringContaining("WebSocket"),
    });
  });
});

describe("/priority-fees/stream connection rules", () => {
  let estimator: PriorityFeeEstimator;
  let stub: StubChain;
  let hub: PriorityFeeStreamHub;
  let url: string;
  const app = Fastify();

  beforeAll(async () => {
    stub = new StubChain();
    estimator = new PriorityFeeEstimator({ chain: stub });
    await estimator.refresh();
    hub = new PriorityFeeStreamHub(estimator, { pingMs: 100, silenceMs: 1_500, maxMessagesPerSecond: 2 });
    hub.start();
    await app.register(websocket);
    app.get("/stream", { websocket: true }, (socket) => hub.accept(socket));
    url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}/stream`;
  });
  afterAll(async () => {
    hub.stop();
    await app.close();
  });

  it("closes a peer that stops answering pings, keeps one that answers", async () => {
    const silent = await openStream(url, { autoPong: false });
    const lively = await openStream(url);
    await once(silent.socket, "close");
    expect(lively.socket.readyState).toBe(WebSocket.OPEN);
    lively.socket.close();
  });

  it("refuses messages past the rate with bad_request frames", async () => {
    const client = await openStream(url);
    try {
      await client.next();
      for (let i = 0; i < 4; i++) client.socket.send("{}");
      const answers = [await client.next(), await client.next(), await client.next(), await client.next()];
      expect(answers.map((frame) => frame.message)).toEqual([
        expect.stringContaining("no messages"),
        expect.stringContaining("no messages"),
        "more than 2 messages per second",
        "more than 2 messages per second",
      ]);
    } finally {
      client.socket.close();
    }
  });
});

/** A stand-in server-side socket: records frames, reports the `bufferedAmount` a test sets. */
class FakeSocket extends EventEmitter {
  bufferedAmount = 0;
  readonly frames: unknown[] = [];
  closedWith: number | undefined;

  send(data: string): void {
    this.frames.push(JSON.parse(data));
    this.emit("frame");
  }

  close(code: number): void {
    this.closedWith = code;
    this.emit("close");
  }

  ping(): void {}

  terminate(): void {
    this.close(1006);
  }
}

describe("/priority-fees/stream slow consumers", () => {
  it("holds frames back from a socket that does not read, sends it the latest once it does, closes it if it never does", async () => {
    const stub = new StubChain();
    const estimator = new PriorityFeeEstimator({ chain: stub });
    await estimator.refresh();
    const hub = new PriorityFeeStreamHub(estimator, {
      checkMs: 5,
      maxChecksBehind: 3,
      maxBufferedBytes: 1_000,
    });
    hub.start();
    try {
      const fast = new FakeSocket();
      const slow = new FakeSocket();
      hub.accept(fast as unknown as WebSocket);
      hub.accept(slow as unknown as WebSocket);
      expect(slow.frames).toEqual([FLOORS]);

      slow.bufferedAmount = 1_001;
      stub.setPrices(1n, [20_000n]);
      await estimator.refresh();
      stub.setPrices(2n, [30_000n]);
      await estimator.refresh();
      expect(fast.frames).toHaveLength(3);
      expect(slow.frames).toEqual([FLOORS]);

      // It reads: the next check sends only the latest levels.
      const caughtUp = once(slow, "frame");
      slow.bufferedAmount = 0;
      await caughtUp;
      expect(slow.frames).toEqual([FLOORS, fast.frames[2]]);

      // It stops reading for good: closed after maxChecksBehind checks, with nothing more queued.
      slow.bufferedAmount = 1_001;
      stub.setPrices(3n, [40_000n]);
      await estimator.refresh();
      await once(slow, "close");
      expect(slow.closedWith).toBe(1013);
      expect(slow.frames).toHaveLength(2);
      expect(hub.size).toBe(1);
    } finally {
      hub.stop();
    }
  });
});

describe("a trade API whose priority fees have not been read yet", () => {
  const dir = tempDir();
  let storage: Storage;
  let app: ZodApp;

  beforeAll(async () => {
    storage = await openStorage({ DATA_DIR: dir.dir });
    app = await buildApp({
      config: QUIET_DEVELOPMENT,
      catalog: new CatalogHolder(),
      access: openAccess(),
      trading: unstartedTradingApi(storage.db, refusingChain()),
    });
  });
  afterAll(async () => {
    await app?.close();
    await storage?.close();
    await dir.cleanup();
  });

  it("answers 503 not_ready rather than levels it has not read", async () => {
    const response = await app.inject({ method: "GET", url: "/priority-fees" });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ code: "not_ready", msg: expect.stringContaining("priority fee") });
  });
});

describe("/priority-fees/stream access in production", () => {
  it("needs a key with the streams permission, in a header", () =>
    expectProductionStreamAccess("/priority-fees/stream"));
});
