/**
 * /book-stream with real `ws` clients on a real server: ten levels a side whose sizes are exactly the
 * level definition of `src/trading/book-stream.ts` and agree with what `/order` quotes for them, a new
 * book after a trade, `no_market` for a pair without a direct pool, error frames for bad messages, the
 * subscription limit, `skipped` for a consumer held back, the upgrade's access rules in production, and
 * two instances sharing one Redis (one computes, both deliver).
 */
import type { Address } from "@solana/kit";
import { generateKeyPairSigner } from "@solana/kit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { cpmmAmountOut } from "../../src/trading/spot/venues/cpmm.js";
import type { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";
import { BOOK_LEVELS, tickStepBps } from "../../src/trading/streams/book-levels.js";
import { BookStreamHub } from "../../src/trading/streams/book-stream.js";
import { SharedQuotes } from "../../src/trading/streams/shared-quotes.js";
import { signWithKit } from "../support/kit.js";
import {
  connectStream,
  FakeSocket,
  type StreamMessage,
  serveStream,
  waitUntil,
} from "../support/pair-streams.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { REDIS_TEST_URL, redisAvailable, redisTestPrefix } from "../support/services.js";
import { expectProductionStreamAccess } from "../support/streams.js";
import { demoMint } from "../support/tokens.js";

interface Level {
  price: number;
  cumulative_size_human: number;
}

interface BookUpdate {
  sb: string;
  sq: string;
  mid?: number;
  tick?: number;
  crossed?: boolean;
  b?: Level[];
  a?: Level[];
  e?: string;
}

interface Frame extends StreamMessage {
  u: number;
  ts: number;
  subscribe?: { sb: string; sq: string }[];
  unsubscribe?: { sb: string; sq: string }[];
  updates: BookUpdate[];
  skipped: number;
}

const VENUE_SEED = "book-stream-test";
const token = (symbol: string): Address => demoMint(VENUE_SEED, symbol);
const dETH = token("dETH");
const dBTC = token("dBTC");
const dJUP = token("dJUP");

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
}, 120_000);
afterAll(async () => t?.stop());

const streamUrl = () => `${t.url.replace("http", "ws")}/book-stream`;
const connect = (url = streamUrl()) => connectStream<Frame>(url);
const updateOf = (frame: Frame, base: string, quote: string) =>
  frame.updates.find((update) => update.sb === base && update.sq === quote);

/** One direct pool of a pair as `/order` sees it: reserves available (atomic) and what its fee leaves. */
interface Direct {
  pool: CpmmPool;
  base: bigint;
  quote: bigint;
  kept: bigint;
}

const B = 10_000n;

/** The pair's pools with both sides available, in the router's order. */
function directPools(base: Address, quote: Address): Direct[] {
  return t.server.trading.book
    .allPools()
    .filter((pool) => pool.mints.includes(base) && pool.mints.includes(quote))
    .map((pool) => {
      const side = pool.sideOf(base);
      return {
        pool,
        base: pool.available(side),
        quote: pool.available(side === 0 ? 1 : 0),
        kept: B - BigInt(pool.record.feeBps),
      };
    })
    .filter((direct) => direct.base > 0n && direct.quote > 0n);
}

/** The deepest of the pair's pools (the most base; ties: the lower fee): the one `mid` is read from. */
function deepest(base: Address, quote: Address): Direct {
  const [first, ...rest] = directPools(base, quote);
  if (!first) throw new Error(`no pool for ${base}/${quote}`);
  return rest.reduce(
    (best, direct) =>
      direct.base > best.base || (direct.base === best.base && direct.kept > best.kept) ? direct : best,
    first,
  );
}

/** The pool's mid in human units, (quote reserve) / (base reserve), as the module computes it. */
function midOf(direct: Direct, base: Address): number {
  const { pool } = direct;
  const baseSide = pool.sideOf(base);
  const quoteDecimals = pool.tokens[baseSide === 0 ? 1 : 0].decimals;
  return (
    Number(direct.quote) / 10 ** quoteDecimals / (Number(direct.base) / 10 ** pool.tokens[baseSide].decimals)
  );
}

/** The first of `values` that is best by `better`: the router's choice (ties keep the first). */
function firstBest<T>(values: readonly T[], better: (a: T, b: T) => boolean): number {
  return values.reduce((best, value, index) => (better(value, values[best] as T) ? index : best), 0);
}

/** The pool a sale of `size` base goes to: the most quote for it. */
const saleVenue = (pools: Direct[], size: bigint) =>
  pools[
    firstBest(
      pools.map((direct) => cpmmAmountOut(direct.base, direct.quote, size, direct.pool.record.feeBps)),
      (a, b) => a > b,
    )
  ] as Direct;

/** The least quote for which the pool pays out `size` base: ⌈size·y·B / (γ'·(x − size))⌉. */
const purchaseCost = (direct: Direct, size: bigint) =>
  size >= direct.base
    ? undefined
    : (size * direct.quote * B + direct.kept * (direct.base - size) - 1n) /
      (direct.kept * (direct.base - size));

/** The pool a purchase of `size` base goes to: the least quote for it. */
const purchaseVenue = (pools: Direct[], size: bigint) =>
  pools[
    firstBest(
      pools.map((direct) => purchaseCost(direct, size)),
      (a, b) => a !== undefined && (b === undefined || a < b),
    )
  ] as Direct;

/** GET /order for a direct route only; the output and the market it went through. */
async function directOrder(input: Address, output: Address, amount: bigint) {
  const response = await fetch(
    `${t.url}/order?inputMint=${input}&outputMint=${output}&amount=${amount}&onlyDirectRoutes=true&priceImpactTolerancePct=100`,
  );
  const body = (await response.json()) as { outAmount: string; routePlan: { marketKey: string }[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.routePlan).toHaveLength(1);
  return { outAmount: BigInt(body.outAmount), marketKey: body.routePlan[0]?.marketKey };
}

/** The frame's numbers are doubles (about 1e-16 relative each): this bounds their error in a product. */
const FLOAT_SLACK = 1e-12;

/**
 * Checks one pair's update against the definition in `src/trading/book-levels.ts`, in exact integers
 * on the pools' reserves: the grid on the deepest pool's mid; each size S the largest whole amount
 * whose trade, in the pool `/order` takes for it, ends at or inside the level's price p (S does, S + 1
 * does not). For the levels `checked`, `/order` itself, in atomic units with the touch of the pool it
 * takes: selling S pays S·√(bid·p) − 1 < out < S·√(bid·p) + (√(bid·p) − p); ⌈S·√(ask·p)⌉ of quote
 * buys at least S and under (1 + p − √(ask·p)) / ask more.
 */
async function expectLevels(
  base: Address,
  quote: Address,
  update: BookUpdate,
  checked: number[],
): Promise<Set<string>> {
  const pools = directPools(base, quote);
  const anchor = deepest(base, quote);
  const baseSide = anchor.pool.sideOf(base);
  const baseDecimals = anchor.pool.tokens[baseSide].decimals;
  const toAtomicPrice = 10 ** (anchor.pool.tokens[baseSide === 0 ? 1 : 0].decimals - baseDecimals);
  const mid = update.mid as number;
  const step = tickStepBps(anchor.pool.record.feeBps);
  expect(mid).toBe(midOf(anchor, base));
  expect(update.tick).toBeCloseTo((mid * step) / 10_000, 12);
  expect(update.b).toHaveLength(BOOK_LEVELS);
  expect(update.a).toHaveLength(BOOK_LEVELS);
  // Crossed when one pool's best bid, γ·y/x, is above another's best ask, y/(γ·x).
  const bids = pools.map((d) => (Number(d.kept) * Number(d.quote)) / (10_000 * Number(d.base)));
  const asks = pools.map((d) => (10_000 * Number(d.quote)) / (Number(d.kept) * Number(d.base)));
  expect(update.crossed).toBe(Math.max(...bids) > Math.min(...asks));

  // Level k's price exactly: y·(B ∓ k·step) / (x·B) of the deepest pool.
  const price = (offset: bigint) => ({
    numerator: anchor.quote * (B + offset),
    denominator: anchor.base * B,
  });
  // After selling s into `d`, its marginal price γ'·x·y·B / (x·B + s·γ')² is still at or above the level's.
  const soldWithin = (s: bigint, offset: bigint) => {
    const d = saleVenue(pools, s);
    const { numerator, denominator } = price(-offset);
    return d.kept * d.base * d.quote * B * denominator >= numerator * (d.base * B + s * d.kept) ** 2n;
  };
  // After buying s from `d`, its marginal cost x·y·B / (γ'·(x − s)²) is still at or below the level's.
  const boughtWithin = (s: bigint, offset: bigint) => {
    const d = purchaseVenue(pools, s);
    const { numerator, denominator } = price(offset);
    return s < d.base && d.kept * (d.base - s) ** 2n * numerator >= d.base * d.quote * B * denominator;
  };
  const atomic = (level: Level) => BigInt(Math.round(level.cumulative_size_human * 10 ** baseDecimals));

  const bidVenues = new Set<string>();
  let previous = { bid: 0n, ask: 0n };
  for (let k = 1; k <= BOOK_LEVELS; k++) {
    const bidLevel = update.b?.[k - 1] as Level;
    const askLevel = update.a?.[k - 1] as Level;
    expect(bidLevel.price).toBeCloseTo(mid - k * (update.tick as number), 10);
    expect(askLevel.price).toBeCloseTo(mid + k * (update.tick as number), 10);
    const offset = BigInt(k * step);
    const bid = atomic(bidLevel);
    const ask = atomic(askLevel);
    // Cumulative from spot: positive from the first level (the tick clears the fee), and growing.
    expect(bid).toBeGreaterThan(previous.bid);
    expect(ask).toBeGreaterThan(previous.ask);
    previous = { bid, ask };
    expect(soldWithin(bid, offset) && !soldWithin(bid + 1n, offset), `bid level ${k}`).toBe(true);
    expect(boughtWithin(ask, offset) && !boughtWithin(ask + 1n, offset), `ask level ${k}`).toBe(true);
    bidVenues.add(saleVenue(pools, bid).pool.key);
    if (!checked.includes(k)) continue;

    const seller = saleVenue(pools, bid);
    const bidTouch = (midOf(seller, base) * toAtomicPrice * Number(seller.kept)) / 10_000;
    const bidPrice = bidLevel.price * toAtomicPrice;
    const bidAverage = Math.sqrt(bidTouch * bidPrice);
    const sold = await directOrder(base, quote, bid);
    expect(sold.marketKey).toBe(seller.pool.key);
    const integral = Number(bid) * bidAverage;
    const slack = integral * FLOAT_SLACK;
    expect(Number(sold.outAmount), `bid level ${k}`).toBeGreaterThan(integral - 1 - slack);
    expect(Number(sold.outAmount), `bid level ${k}`).toBeLessThan(integral + (bidAverage - bidPrice) + slack);

    const buyer = purchaseVenue(pools, ask);
    const askTouch = (midOf(buyer, base) * toAtomicPrice * 10_000) / Number(buyer.kept);
    const askPrice = askLevel.price * toAtomicPrice;
    const askAverage = Math.sqrt(askTouch * askPrice);
    const cost = Number(ask) * askAverage;
    const bought = await directOrder(quote, base, BigInt(Math.ceil(cost * (1 + FLOAT_SLACK))));
    expect(bought.marketKey).toBe(buyer.pool.key);
    expect(bought.outAmount, `ask level ${k}`).toBeGreaterThanOrEqual(ask);
    expect(Number(bought.outAmount - ask), `ask level ${k}`).toBeLessThan(
      (1 + (askPrice - askAverage) + cost * FLOAT_SLACK) / askTouch,
    );
  }
  return bidVenues;
}

describe("/book-stream", () => {
  it("sends ten levels a side, exact to the pool's curve and matching what /order quotes for them", async () => {
    const client = await connect();
    try {
      client.send({ op: "subscribe", base_mint: dETH, quote_mint: USDC_MINT });
      client.send({ op: "subscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT });
      client.send({ op: "subscribe", base_mint: USDC_MINT, quote_mint: WRAPPED_SOL_MINT });
      const acknowledged: string[] = [];
      const updates = new Map<string, BookUpdate>();
      while (acknowledged.length < 3) {
        const frame = await client.next((f) => f.subscribe !== undefined);
        expect(frame.u).toBeGreaterThan(0);
        expect(frame.skipped).toBe(0);
        for (const ack of frame.subscribe ?? []) {
          expect(Object.keys(ack).sort()).toEqual(["sb", "sq"]);
          acknowledged.push(`${ack.sb}|${ack.sq}`);
        }
        for (const update of frame.updates) updates.set(`${update.sb}|${update.sq}`, update);
      }
      expect(acknowledged.sort()).toEqual(
        [
          `${dETH}|${USDC_MINT}`,
          `${WRAPPED_SOL_MINT}|${USDC_MINT}`,
          `${USDC_MINT}|${WRAPPED_SOL_MINT}`,
        ].sort(),
      );

      // dETH/USDC has one pool; SOL/USDC two, of which the deeper (25 bp) one makes the book.
      const eth = updates.get(`${dETH}|${USDC_MINT}`) as BookUpdate;
      expect(eth.mid).toBeGreaterThan(3_000);
      expect(eth.mid).toBeLessThan(4_000);
      await expectLevels(dETH, USDC_MINT, eth, [1, 4, 10]);
      const sol = updates.get(`${WRAPPED_SOL_MINT}|${USDC_MINT}`) as BookUpdate;
      expect(deepest(WRAPPED_SOL_MINT, USDC_MINT).pool.record.feeBps).toBe(25);
      await expectLevels(WRAPPED_SOL_MINT, USDC_MINT, sol, [1, 10]);
      // The reverse pair is the same pool seen the other way: its mid is the reciprocal.
      const inverse = updates.get(`${USDC_MINT}|${WRAPPED_SOL_MINT}`) as BookUpdate;
      expect((inverse.mid as number) * (sol.mid as number)).toBeCloseTo(1, 12);
      await expectLevels(USDC_MINT, WRAPPED_SOL_MINT, inverse, [1, 10]);
    } finally {
      client.socket.close();
    }
  });

  it("sends the pair's new book after a trade moves its pool, then acknowledges an unsubscription", async () => {
    const client = await connect();
    try {
      client.send({ op: "subscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT });
      const first = await client.next((frame) => frame.subscribe !== undefined);
      const before = updateOf(first, WRAPPED_SOL_MINT, USDC_MINT) as BookUpdate;
      const solBefore = deepest(WRAPPED_SOL_MINT, USDC_MINT).base;

      // A large sale of SOL, through the deeper pool (a direct route, large enough to prefer it).
      const seller = await generateKeyPairSigner();
      const chain = new RpcChain({ url: t.server.chain.rpcUrl });
      await chain.requestAirdrop(seller.address, 600_000_000_000n);
      const order = (await (
        await fetch(
          `${t.url}/order?inputMint=${WRAPPED_SOL_MINT}&outputMint=${USDC_MINT}&amount=500000000000&onlyDirectRoutes=true&userPublicKey=${seller.address}&priceImpactTolerancePct=100`,
        )
      ).json()) as { transaction: string };
      await chain.sendTransaction(Buffer.from(await signWithKit(seller, order.transaction), "base64"));
      // The venue sees the landed trade at its next refresh; the frame after that carries the new book.
      await waitUntil(() => deepest(WRAPPED_SOL_MINT, USDC_MINT).base > solBefore);
      const moved = await client.next(
        (frame) =>
          updateOf(frame, WRAPPED_SOL_MINT, USDC_MINT)?.mid ===
          midOf(deepest(WRAPPED_SOL_MINT, USDC_MINT), WRAPPED_SOL_MINT),
      );
      const after = updateOf(moved, WRAPPED_SOL_MINT, USDC_MINT) as BookUpdate;
      expect(after.mid).toBeLessThan(before.mid as number);
      expect(after.b?.[0]?.price).toBeLessThan(before.b?.[0]?.price as number);
      expect(moved.skipped).toBe(0);
      // The deep pool now prices SOL well below the shallow one: their touches cross; the nearest bids
      // go to the shallow pool, the farther ones to the deep pool, and each matches /order.
      expect(after.crossed).toBe(true);
      const venues = await expectLevels(WRAPPED_SOL_MINT, USDC_MINT, after, [1, 5, 6, 10]);
      expect(venues.size).toBe(2);

      client.send({ op: "unsubscribe", base_mint: WRAPPED_SOL_MINT, quote_mint: USDC_MINT });
      const gone = await client.next((frame) => frame.unsubscribe !== undefined);
      expect(gone.unsubscribe).toEqual([{ sb: WRAPPED_SOL_MINT, sq: USDC_MINT }]);
      expect(gone.updates).toEqual([]);
    } finally {
      client.socket.close();
    }
  });

  it("answers no_market for a pair without a direct pool", async () => {
    const client = await connect();
    try {
      const pairs = [
        // Routed through USDC or SOL by /order, but no pool pairs them directly.
        [dBTC, dJUP],
        // Not a token of the venue at all.
        ["11111111111111111111111111111111", USDC_MINT],
        [dETH, dETH],
      ] as const;
      for (const [base, quote] of pairs) client.send({ op: "subscribe", base_mint: base, quote_mint: quote });
      const updates: BookUpdate[] = [];
      while (updates.length < pairs.length) {
        const frame = await client.next((f) => f.updates.length > 0);
        updates.push(...frame.updates);
      }
      expect(updates).toEqual(pairs.map(([base, quote]) => ({ sb: base, sq: quote, e: "no_market" })));
    } finally {
      client.socket.close();
    }
  });

  it("answers bad messages with an error frame and stays open", async () => {
    const client = await connect();
    try {
      client.socket.send("not json");
      expect(await client.next((frame) => frame.type === "bad_request")).toEqual({
        type: "bad_request",
        message: expect.stringContaining("JSON"),
      });
      client.send({ op: "subscribe", base_mint: "nope", quote_mint: USDC_MINT });
      expect((await client.next((frame) => frame.type === "bad_request")).message).toContain("base_mint");
      // The quote stream's prediction-market subscription is not one of this stream's messages.
      client.send({ op: "subscribe_all_prediction_markets" });
      expect((await client.next((frame) => frame.type === "bad_request")).message).toContain(
        `{"op":"subscribe"|"unsubscribe","base_mint","quote_mint","since"?:seq}`,
      );
      client.send({ op: "subscribe", base_mint: dETH, quote_mint: USDC_MINT });
      const frame = await client.next((f) => f.subscribe !== undefined);
      expect(updateOf(frame, dETH, USDC_MINT)?.b).toHaveLength(BOOK_LEVELS);
    } finally {
      client.socket.close();
    }
  });

  it("refuses a subscription past the limit, keeping the connection and its pairs", async () => {
    const hub = new BookStreamHub(t.server.trading.book, { frameMs: 50, maxSubscriptions: 2 });
    hub.start();
    const served = await serveStream("/book-stream", (socket) => hub.accept(socket));
    const client = await connect(served.url);
    try {
      client.send({ op: "subscribe", base_mint: dETH, quote_mint: USDC_MINT });
      client.send({ op: "subscribe", base_mint: dBTC, quote_mint: USDC_MINT });
      client.send({ op: "subscribe", base_mint: dJUP, quote_mint: USDC_MINT });
      expect((await client.next((frame) => frame.type === "bad_request")).message).toBe(
        "at most 2 subscriptions per connection",
      );
      // Room again after an unsubscription.
      client.send({ op: "unsubscribe", base_mint: dBTC, quote_mint: USDC_MINT });
      client.send({ op: "subscribe", base_mint: dJUP, quote_mint: USDC_MINT });
      const acks: string[] = [];
      while (!acks.includes(dJUP)) {
        const frame = await client.next((f) => f.subscribe !== undefined);
        acks.push(...(frame.subscribe ?? []).map((ack) => ack.sb));
      }
      expect(acks.filter((mint) => mint !== dBTC).sort()).toEqual([dETH, dJUP].sort());
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      client.socket.close();
      await hub.stop();
      await served.close();
    }
  });

  it("tells a consumer that was held back how many slots it skipped", async () => {
    const hub = new BookStreamHub(t.server.trading.book, { frameMs: 20 });
    const socket = new FakeSocket<Frame>();
    hub.accept(socket.asSocket);
    hub.start();
    try {
      socket.bufferedAmount = 2 << 20;
      socket.receive({ op: "subscribe", base_mint: dETH, quote_mint: USDC_MINT });
      // Each pass looks at the socket once and holds its frame back.
      await waitUntil(() => socket.bufferedReads >= 4);
      const heldBack = socket.bufferedReads;
      socket.bufferedAmount = 0;
      await waitUntil(() => socket.frames.length > 0);
      expect(socket.frames[0]?.skipped).toBe(heldBack);
      expect(socket.frames[0]?.subscribe).toEqual([{ sb: dETH, sq: USDC_MINT }]);
      expect(updateOf(socket.frames[0] as Frame, dETH, USDC_MINT)?.a).toHaveLength(BOOK_LEVELS);
    } finally {
      await hub.stop();
    }
  });
});

describe("/book-stream access in production", () => {
  it("needs a key with the streams permission, in a header", () =>
    expectProductionStreamAccess("/book-stream"));
});

/** A book stream that counts the books it prices itself, for telling who computes. */
class CountingHub extends BookStreamHub {
  priced = 0;

  protected override price(base: Address, quote: Address): string {
    this.priced += 1;
    return super.price(base, quote);
  }
}

/**
 * A slot long enough that the leader's lease (three slots) outlasts the event-loop stalls of a loaded
 * CI machine: a lapsed lease hands the lead over, as it should, and the follower would then compute.
 */
const SLOT_MS = 400;

/** One instance's book stream: a hub sharing its books through Redis, behind its own listener. */
async function instance(prefix: string) {
  const hub = new CountingHub(t.server.trading.book, { frameMs: 100 });
  let computed = 0;
  const shared = await SharedQuotes.connect({
    url: REDIS_TEST_URL,
    prefix,
    name: "book-stream",
    slotMs: SLOT_MS,
    compute: (pairs) => {
      computed += 1;
      return hub.computeQuotes(pairs);
    },
  });
  hub.share(shared);
  hub.start();
  const served = await serveStream("/book-stream", (socket) => hub.accept(socket));
  const clients: Awaited<ReturnType<typeof connect>>[] = [];
  /** A new client of this instance, subscribed to dETH/USDC; resolves with the book it is first sent. */
  const firstBook = async () => {
    const client = await connect(served.url);
    clients.push(client);
    client.send({ op: "subscribe", base_mint: dETH, quote_mint: USDC_MINT });
    return updateOf(await client.next((frame) => frame.subscribe !== undefined), dETH, USDC_MINT);
  };
  return {
    hub,
    shared,
    firstBook,
    computed: () => computed,
    async stop() {
      for (const client of clients) client.socket.close();
      await hub.stop();
      await served.close();
    },
  };
}

describe.skipIf(!redisAvailable)("/book-stream over Redis", () => {
  it("computes the books on one instance, under book-stream: keys, and delivers them on both", async () => {
    const { prefix, cleanup } = redisTestPrefix();
    const first = await instance(prefix);
    const second = await instance(prefix);
    const redis = new Redis(REDIS_TEST_URL);
    try {
      const books = await Promise.all([first.firstBook(), second.firstBook()]);
      expect(books[0]?.b).toHaveLength(BOOK_LEVELS);
      expect(books[1]).toEqual(books[0]);
      await waitUntil(() => first.computed() + second.computed() >= 3);
      const [leader, follower] = first.computed() > 0 ? [first, second] : [second, first];
      expect(follower.computed()).toBe(0);
      expect(leader.shared.isLeader).toBe(true);
      expect(follower.shared.isLeader).toBe(false);

      // Once the leader's books are published, the follower serves a new client from them without
      // pricing anything itself.
      const key = `${dETH}|${USDC_MINT}`;
      await waitUntil(() => follower.shared.latest.has(key));
      const pricedBefore = follower.hub.priced;
      const served = await follower.firstBook();
      expect(served).toEqual(books[0]);
      expect(JSON.parse(follower.shared.latest.get(key) as string)).toEqual(served);
      expect(follower.hub.priced).toBe(pricedBefore);
      expect(follower.computed()).toBe(0);
      expect(leader.hub.priced).toBeGreaterThan(0);

      // The book stream's keys are its own: the quote stream's are untouched.
      expect(await redis.get(`${prefix}book-stream:leader`)).not.toBeNull();
      expect(await redis.hexists(`${prefix}book-stream:wanted`, key)).toBe(1);
      expect(await redis.keys(`${prefix}quote-stream:*`)).toEqual([]);
    } finally {
      redis.disconnect();
      await first.stop().catch(() => {});
      await second.stop().catch(() => {});
      await cleanup();
    }
  });
});
