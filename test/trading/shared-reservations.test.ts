/**
 * Firm-quote reservations shared through Redis (issue 22, item 2): two instances on one PostgreSQL
 * database and one Redis never promise the same pool tokens twice, and a client's bounds (quotes per
 * wallet, funds promised, pool share) hold across instances as they hold on one. Issue 36, finding 2:
 * a wallet's funds back its quotes once across clients and instances, the client refused them takes
 * the next turn on every instance, and all quotes together hold at most a share of a pool's output.
 */
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import type { Keypair } from "../../src/chain/ed25519.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import {
  FirmQuoteRefused,
  FirmQuotes,
  type FirmQuoteTerms,
  ReservationConflict,
  type ReservationStore,
} from "../../src/trading/quotes/firm-quotes.js";
import { RedisReservations } from "../../src/trading/quotes/reservations-redis.js";
import { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { newFundedWallet } from "../support/kit.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { postgresAvailable, REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";
import { ticketOf } from "../support/tickets.js";

const SOL = "So11111111111111111111111111111111111111112" as Address;

/** A 1,000,000 / 1,000,000 pool of USDC and SOL, as each instance loads it from the same chain. */
function pool(): CpmmPool {
  const record = {
    address: "Poo1111111111111111111111111111111111111111" as Address,
    venue: "cpmm",
    keyId: "k",
    mintA: USDC_MINT,
    mintB: SOL,
    feeBps: 30,
  };
  const token = (mint: Address) => ({ mint, decimals: 6, program: mint });
  const made = new CpmmPool(record, [token(USDC_MINT), token(SOL)], [USDC_MINT, SOL], {} as Keypair);
  made.observeBalance(0, 1_000_000n);
  made.observeBalance(1, 1_000_000n);
  return made;
}

const wallet = "Wa11et11111111111111111111111111111111111111" as Address;
const other = "Other11111111111111111111111111111111111111" as Address;

/** A firm quote selling `inAmount` USDC for SOL on `on`, holding its output there; `amount` of that output. */
function terms(on: CpmmPool, inAmount: bigint, extra: Partial<FirmQuoteTerms> = {}) {
  const outAmount = on.quote(USDC_MINT, inAmount)?.outAmount ?? 0n;
  return {
    quote: {
      wallet,
      client: "ip:1",
      inputMint: USDC_MINT,
      inAmount,
      balance: 10_000_000n,
      holds: [{ side: `${on.key}:1`, amount: outAmount, reserve: on.balance(1) }],
      ...extra,
    },
    legs: [{ pool: on, outputMint: SOL, maxOut: outAmount, inAmount }],
    outAmount,
  };
}

describe.skipIf(!redisAvailable)("a quote priced before another held its pool, on either store", () => {
  const { prefix, cleanup } = redisTestPrefix();
  const redisStores: RedisReservations[] = [];
  afterAll(async () => {
    await Promise.all(redisStores.map((made) => made.close()));
    await cleanup();
  });
  const stores: [string, (on: CpmmPool) => Promise<ReservationStore>][] = [
    ["in process", async () => new FirmQuotes({ perWallet: 0, perClient: 0 })],
    [
      "in Redis",
      async (on) => {
        const made = await RedisReservations.connect({
          url: REDIS_TEST_URL,
          prefix: `${prefix}${redisStores.length}:`,
          limits: { perWallet: 0, perClient: 0 },
          pool: () => on,
        });
        redisStores.push(made);
        return made;
      },
    ],
  ];

  it.each(stores)(
    "%s: is refused as a conflict, and priced again holds what the first left",
    async (_, open) => {
      const on = pool();
      const store = await open(on);
      const sell = on.quote(SOL, 500_000n)?.outAmount ?? 0n;
      // Two requests priced on the same reserves (each then awaited its checks), the first held first.
      const [first, second] = [terms(on, 1_000_000n), terms(on, 1_000_000n)];
      expect(second.outAmount).toBe(first.outAmount);
      (await store.reserve(first.quote, 100n, 250n, first.legs, store.view())).attach([]);
      await expect(store.reserve(second.quote, 100n, 250n, second.legs, store.view())).rejects.toThrow(
        ReservationConflict,
      );
      // Refused before anything was held: the pool holds the first quote's output only.
      expect(on.available(1)).toBe(1_000_000n - first.outAmount);
      const again = terms(on, 1_000_000n);
      expect(again.outAmount).toBeLessThan(first.outAmount);
      (await store.reserve(again.quote, 100n, 250n, again.legs, store.view())).attach([]);
      expect(on.available(1)).toBe(1_000_000n - first.outAmount - again.outAmount);
      // A quote the other way, priced before all this, pays into the held side: the holds left its price.
      const legs = [{ pool: on, outputMint: USDC_MINT, maxOut: sell, inAmount: 500_000n }];
      const reverse = { ...first.quote, inputMint: SOL, inAmount: 500_000n, holds: [] };
      await expect(store.reserve(reverse, 100n, 250n, legs, store.view())).resolves.toBeDefined();
    },
  );
});

describe.skipIf(!redisAvailable)("reservations in Redis, two stores on one prefix", () => {
  const { prefix, cleanup } = redisTestPrefix();
  const stores: RedisReservations[] = [];
  const pools = [pool(), pool()];
  /** A store as one instance has it, over that instance's copy of the pool. */
  async function store(index: number, limits = { perWallet: 0, perClient: 0, poolShareBps: 0 }) {
    const made = await RedisReservations.connect({
      url: REDIS_TEST_URL,
      // Stores 0 and 1 share keys, as do 2 and 3, and 4 and 5.
      prefix: `${prefix}${Math.floor(index / 2)}:`,
      limits,
      pool: () => pools[index % 2],
    });
    stores.push(made);
    return made;
  }
  afterAll(async () => {
    await Promise.all(stores.map((made) => made.close()));
    await cleanup();
  });

  it("prices the second instance's quote with the first's promise, exactly as one instance would", async () => {
    const [first, second] = [await store(0), await store(1)];
    const [here, there] = pools as [CpmmPool, CpmmPool];
    // One instance alone: the second quote is priced after the first holds its output.
    const alone = pool();
    const single = new FirmQuotes({ perWallet: 0, perClient: 0 });
    const big = terms(alone, 9_000_000n);
    await single.reserve(big.quote, 100n, 250n, big.legs);
    const expected = terms(alone, 1_000_000n).outAmount;

    const view = second.view();
    const asked = terms(there, 1_000_000n);
    const firstQuote = terms(here, 9_000_000n);
    expect(firstQuote.outAmount).toBe(big.outAmount);
    (await first.reserve(firstQuote.quote, 100n, 250n, firstQuote.legs, first.view())).attach([]);
    // The second instance priced before it knew: Redis refuses it, and the pool here now holds the promise.
    await expect(second.reserve(asked.quote, 100n, 250n, asked.legs, view)).rejects.toThrow(
      ReservationConflict,
    );
    const again = terms(there, 1_000_000n);
    expect(again.outAmount).toBe(expected);
    expect(again.outAmount).toBeLessThan(asked.outAmount);
    const held = await second.reserve(again.quote, 100n, 250n, again.legs, second.view());
    expect(held.holds).toHaveLength(1);
    // The first instance's pool holds the second's promise too (as the lone instance holds both), until it is cancelled.
    await single.reserve(terms(alone, 1_000_000n).quote, 100n, 250n, terms(alone, 1_000_000n).legs);
    await waitFor(() => terms(here, 100_000n).outAmount === terms(alone, 100_000n).outAmount);
    held.cancel();
    await waitFor(() => terms(here, 100_000n).outAmount > terms(alone, 100_000n).outAmount);
  });

  it("holds a client's bounds across instances: per wallet, in all, funds, pool share, until expiry", async () => {
    const limits = { perWallet: 2, perClient: 3, poolShareBps: 1_000 };
    const [a, b] = [await store(2, limits), await store(3, limits)];
    const fresh = pool();
    // These hold no pool output: the share is shown on its own below.
    const reserve = (
      on: ReservationStore,
      inAmount: bigint,
      extra: Partial<FirmQuoteTerms> = {},
      expiry = 250n,
    ) => on.reserve(terms(fresh, inAmount, { holds: [], ...extra }).quote, 100n, expiry);
    await reserve(a, 4_000_000n, {}, 150n);
    // Funds: the wallet's 10 USDC less the 4 promised through the other instance.
    await expect(reserve(b, 6_000_001n)).rejects.toThrow(/holds 6000000 of .* not already promised/);
    await reserve(b, 6_000_000n);
    await expect(reserve(a, 1n)).rejects.toMatchObject({ reason: "wallet_limit" });
    await reserve(a, 1n, { wallet: other });
    const third = "Third111111111111111111111111111111111111111" as Address;
    await expect(b.check(terms(fresh, 1n, { wallet: third, holds: [] }).quote, 100n)).rejects.toMatchObject({
      reason: "client_limit",
    });
    // Another client is counted on its own, and the share is of the pool's reserve per client.
    const share = (amount: bigint, client: string) => ({
      wallet: other,
      client,
      inputMint: USDC_MINT,
      inAmount: 1n,
      balance: 10n,
      holds: [{ side: "pool:1", amount, reserve: 1_000n }],
    });
    (await a.reserve(share(60n, "key:k1"), 100n, 250n)).attach([]);
    await expect(b.check(share(41n, "key:k1"), 100n)).rejects.toThrow(/more than 10%/);
    await b.check(share(40n, "key:k1"), 100n);
    await b.check(share(100n, "key:k2"), 100n);
    // Past the first quote's blockhash, its funds and its count are free on both instances.
    await b.check(terms(fresh, 4_000_000n, { holds: [] }).quote, 151n);
    await expect(b.check(terms(fresh, 4_000_001n, { holds: [] }).quote, 151n)).rejects.toBeInstanceOf(
      FirmQuoteRefused,
    );
  });

  it("backs a wallet's quotes with its funds once across clients and instances, and gives them to the client refused next (issue 36)", async () => {
    const limits = { perWallet: 8, perClient: 0, poolShareBps: 0 };
    const [a, b] = [await store(8, limits), await store(9, limits)];
    const ask = (client: string, inAmount: bigint) => ({
      wallet,
      client,
      inputMint: USDC_MINT,
      inAmount,
      balance: 1_000n,
      holds: [],
    });
    (await a.reserve(ask("key:1", 550n), 100n, 250n)).attach([]);
    await expect(b.reserve(ask("key:2", 550n), 101n, 250n)).rejects.toThrow(
      /holds 450 of .* not already promised/,
    );
    // key:2 is next: key:1 adds nothing through either instance, even what the rest would cover.
    await expect(a.check(ask("key:1", 10n), 102n)).rejects.toThrow(/waits for them first/);
    await expect(b.check(ask("key:3", 10n), 102n)).rejects.toThrow(/waits for them first/);
    // Past key:1's blockhash the funds are key:2's, and once served, the line is empty.
    await expect(a.check(ask("key:1", 10n), 251n)).rejects.toThrow(/waits for them first/);
    (await a.reserve(ask("key:2", 1_000n), 252n, 400n)).attach([]);
    await expect(b.check(ask("key:1", 1n), 253n)).rejects.toThrow(/holds 0 of/);
    await expect(b.check(ask("key:3", 1_001n), 253n)).rejects.toThrow(/not already promised/);
  });

  it("bounds what all clients' quotes hold of a pool side together, across instances (issue 36)", async () => {
    const limits = { perWallet: 0, perClient: 0, poolShareBps: 1_000, poolHoldBps: 2_000 };
    const [a, b] = [await store(10, limits), await store(11, limits)];
    const holding = (amount: bigint, client: string) => ({
      wallet: other,
      client,
      inputMint: USDC_MINT,
      inAmount: 1n,
      balance: 100n,
      holds: [{ side: "pool:1", amount, reserve: 1_000n }],
    });
    const first = await a.reserve(holding(100n, "key:k1"), 100n, 250n);
    (await b.reserve(holding(100n, "key:k2"), 100n, 250n)).attach([]);
    await expect(b.check(holding(1n, "key:k3"), 100n)).rejects.toThrow(/more than 20% all together/);
    first.cancel();
    await waitForAsync(() => b.check(holding(100n, "key:k3"), 100n));
  });

  it("counts u64 amounts exactly, past what a double holds", async () => {
    const limits = { perWallet: 0, perClient: 0, poolShareBps: 1_000 };
    const [a, b] = [await store(6, limits), await store(7, limits)];
    const u64 = 2n ** 64n - 1n;
    const quote = (inAmount: bigint, held = 0n) => ({
      wallet,
      client: "ip:1",
      inputMint: USDC_MINT,
      inAmount,
      balance: u64,
      holds: [{ side: "pool:1", amount: held, reserve: u64 }],
    });
    await a.reserve(quote(u64 - 5n, u64 / 10n - 1n), 100n, 250n);
    await expect(b.check(quote(6n), 100n)).rejects.toThrow(/holds 5 of/);
    await b.check(quote(5n, 1n), 100n);
    await expect(b.check(quote(5n, 2n), 100n)).rejects.toThrow(/more than 10%/);
  });

  it("frees a quote's bounds on every instance when it is cancelled or delivered", async () => {
    const limits = { perWallet: 1, perClient: 0, poolShareBps: 0 };
    const [a, b] = [await store(4, limits), await store(5, limits)];
    const fresh = pool();
    const cancelled = await a.reserve(terms(fresh, 1n).quote, 100n, 250n);
    await expect(b.check(terms(fresh, 1n).quote, 100n)).rejects.toMatchObject({ reason: "wallet_limit" });
    cancelled.cancel();
    await waitForAsync(() => b.check(terms(fresh, 1n).quote, 100n));
    const delivered = await b.reserve(terms(fresh, 1n).quote, 100n, 250n);
    const holds = [fresh.reserve(SOL, 10n, 250n, 1n)];
    delivered.attach(holds);
    await expect(a.check(terms(fresh, 1n).quote, 100n)).rejects.toMatchObject({ reason: "wallet_limit" });
    // The pool delivers the output (its vault drops by it).
    fresh.observeBalance(1, fresh.balance(1) - 10n);
    await waitForAsync(() => a.check(terms(fresh, 1n).quote, 100n));
  });
});

/** Resolves once `condition` holds, checking every 10 ms (Redis pub/sub has no event to await here). */
async function waitFor(condition: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(condition()).toBe(true), { timeout: 10_000, interval: 10 });
}

/** Resolves once `attempt` resolves, retrying every 10 ms. */
async function waitForAsync(attempt: () => Promise<unknown>): Promise<void> {
  await vi.waitFor(attempt, { timeout: 10_000, interval: 10 });
}

describe.skipIf(!redisAvailable || !postgresAvailable)(
  "two instances on one PostgreSQL and one Redis",
  () => {
    const postgres = BACKENDS.find((backend) => backend.name === "postgres") as Backend;
    const { prefix, cleanup } = redisTestPrefix();
    let first: TestServer;
    let second: RunningServer;
    let chain: RpcChain;

    beforeAll(async () => {
      first = await startTestServer({
        backend: postgres,
        settings: {
          DEMO_CATALOGUE: "true",
          VENUE_SEED: "shared-reservations",
          REDIS_URL: REDIS_TEST_URL,
          REDIS_PREFIX: prefix,
          // One client (this test's address) asks for most of a pool: only the pool's output bounds it.
          FIRM_QUOTE_POOL_SHARE_BPS: "0",
          FIRM_QUOTE_POOL_HOLD_BPS: "0",
          FIRM_QUOTES_PER_WALLET: "2",
        },
      });
      second = await startServer(
        loadConfig({}, { ...first.settings, PORT: "0", SOLANA_RPC_URL: first.server.chain.rpcUrl }),
      );
      chain = new RpcChain({ url: first.server.chain.rpcUrl });
    }, 180_000);
    afterAll(async () => {
      await second?.close();
      await first?.stop();
      await cleanup();
    });

    async function order(url: string, query: Record<string, string | bigint>, secret?: string) {
      const params = new URLSearchParams(
        Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
      );
      const response = await fetch(`${url}/order?${params}`, {
        headers: secret ? { "x-api-key": secret } : {},
      });
      return {
        status: response.status,
        body: (await response.json()) as { code?: string; outAmount?: string; transaction?: string },
      };
    }

    it("prices a firm quote on one instance without the output another promised, and bounds the wallet across both", async () => {
      // A pool that is the only direct route of its pair, so every quote below is priced on it.
      const all = first.server.trading.book.allPools();
      const otherOf = (candidate: CpmmPool) => candidate.mints[candidate.sideOf(USDC_MINT) === 0 ? 1 : 0];
      const target = all.find(
        (candidate) =>
          candidate.mints.includes(USDC_MINT) &&
          all.filter((each) => each.mints.includes(USDC_MINT) && otherOf(each) === otherOf(candidate))
            .length === 1,
      ) as CpmmPool;
      const output = otherOf(target);
      const reserveOut = target.balance(target.sideOf(output));
      // Enough USDC to ask for nearly all of the pool's output.
      const budget = target.balance(target.sideOf(USDC_MINT)) * 50n;
      const buyer = await newFundedWallet(first.url, chain, 1_000_000_000n, [[USDC_MINT, budget * 2n]]);
      const ask = (url: string, amount: bigint, user?: Address) =>
        order(url, {
          inputMint: USDC_MINT,
          outputMint: output,
          amount,
          onlyDirectRoutes: "true",
          priceImpactTolerancePct: "100",
          ...(user ? { userPublicKey: user } : {}),
        });
      // A hundredth of the pool's USDC: still priced to a whole unit of output once nearly all of it is
      // promised, whatever the pool's price (a fixed 1 USDC rounded to nothing on the pools whose output
      // is worth much more than a USDC a unit, and the pool picked varies with storage's order).
      const small = target.balance(target.sideOf(USDC_MINT)) / 100n;
      const before = await ask(second.url, small);
      expect(before.status, JSON.stringify(before.body)).toBe(200);

      const whole = await ask(first.url, budget, buyer.address);
      expect(whole.status, JSON.stringify(whole.body)).toBe(200);
      expect(BigInt(whole.body.outAmount ?? 0) * 100n).toBeGreaterThan(reserveOut * 97n);
      // The first instance prices the next quote past its promise; the second, firm for another
      // wallet, prices it the same.
      const alone = await ask(first.url, small);
      expect(alone.status, JSON.stringify(alone.body)).toBe(200);
      const other = await newFundedWallet(first.url, chain, 1_000_000_000n, [[USDC_MINT, small]]);
      const onSecond = await ask(second.url, small, other.address);
      expect(onSecond.status, JSON.stringify(onSecond.body)).toBe(200);
      expect(onSecond.body.outAmount).toBe(alone.body.outAmount);
      expect(BigInt(onSecond.body.outAmount ?? 0) * 10n).toBeLessThan(BigInt(before.body.outAmount ?? 0));
      // The buyer's re-quote on the second instance joins its family: priced without its own promise,
      // opening the same ticket, so one of them lands at most.
      const requote = await ask(second.url, small, buyer.address);
      expect(requote.status, JSON.stringify(requote.body)).toBe(200);
      expect(BigInt(requote.body.outAmount ?? 0)).toBeGreaterThan(BigInt(onSecond.body.outAmount ?? 0) * 10n);
      expect(ticketOf(requote.body.transaction as string)).toBe(ticketOf(whole.body.transaction as string));
      // The wallet's bound (2 per client) counts both instances' families: a second pair, then a third.
      const pairs = all
        .filter((each) => each.mints.includes(USDC_MINT) && otherOf(each) !== output)
        .map(otherOf);
      const elsewhere = (url: string, outputMint: Address) =>
        order(url, {
          inputMint: USDC_MINT,
          outputMint,
          amount: small,
          priceImpactTolerancePct: "100",
          userPublicKey: buyer.address,
        });
      const secondPair = await elsewhere(second.url, pairs[0] as Address);
      expect(secondPair.status, JSON.stringify(secondPair.body)).toBe(200);
      const third = await elsewhere(first.url, pairs.find((mint) => mint !== pairs[0]) as Address);
      expect(third.status).toBe(400);
      expect(third.body).toMatchObject({ code: "invalid_user_public_key", reason: "too_many_firm_quotes" });
    });

    it("backs one wallet's firm quotes with its funds once under two API keys on two instances (issue 36)", async () => {
      const dUSDT = demoTokens("shared-reservations").find((token) => token.symbol === "dUSDT")
        ?.address as Address;
      const [one, two] = await Promise.all(
        ["seller one", "seller two"].map(
          async (name) => (await createKey(first.server.storage.db, { name })).secret,
        ),
      );
      const sale = {
        inputMint: dUSDT,
        outputMint: USDC_MINT,
        onlyDirectRoutes: "true",
        priceImpactTolerancePct: "100",
      };
      const probe = await order(first.url, { ...sale, amount: 1_000n });
      expect(probe.status, JSON.stringify(probe.body)).toBe(200);
      const pool = first.server.trading.book.poolOf(
        (probe.body as { routePlan?: { marketKey: string }[] }).routePlan?.[0]?.marketKey ?? "",
      ) as CpmmPool;
      // Each sale is 55% of the wallet's dUSDT and a fiftieth of the pool.
      const amount = pool.balance(pool.sideOf(dUSDT)) / 50n;
      const seller = await newFundedWallet(first.url, chain, 1_000_000_000n, [
        [dUSDT, (amount * 100n) / 55n],
      ]);
      const ask = (url: string, secret: string) =>
        order(url, { ...sale, amount, userPublicKey: seller.address }, secret);
      const onFirst = await ask(first.url, one as string);
      expect(onFirst.status, JSON.stringify(onFirst.body)).toBe(200);
      const onSecond = await ask(second.url, two as string);
      expect(onSecond.status, JSON.stringify(onSecond.body)).toBe(400);
      expect(onSecond.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
      // The second key is next for the wallet's funds: the first renews nothing on either instance.
      const renewed = await ask(second.url, one as string);
      expect(renewed.status).toBe(400);
      expect(renewed.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    });
  },
);
