/**
 * Route search over constant-product markets: direct vs two-leg routes, `maxLegs`, the venue filter,
 * async markets, and (by property) that a route never promises more than its markets' reserves give
 * and is never worse than any route the graph offers.
 */
import { createHash } from "node:crypto";
import { type Address, address, getAddressDecoder } from "@solana/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExecutionMode, LegQuote, TradingMarket } from "../../src/trading/spot/market.js";
import { MarketGraph, type Route, type RouteRequest } from "../../src/trading/spot/router.js";
import { cpmmAmountOut, cpmmSpotOut } from "../../src/trading/spot/venues/cpmm.js";

const SOL = address("So11111111111111111111111111111111111111112");
const USDC = address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
const USDT = address("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY9NcFzjHGbXoPo");
const BONK = address("DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263");
const JUP = address("JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN");
/** A prediction market's outcome mint (async venue). */
const YES = keyFor("outcome-yes");

/** A deterministic, valid 32-byte address for a label. */
function keyFor(label: string): Address {
  return getAddressDecoder().decode(createHash("sha256").update(`oddsgate-router-test:${label}`).digest());
}

/** A fixed-reserve constant-product market (quotes never move its reserves). */
class TestPool implements TradingMarket {
  readonly key: Address;
  readonly mints: readonly [Address, Address];
  private readonly reserves: Map<Address, bigint>;

  constructor(
    readonly venue: string,
    [mintA, reserveA]: readonly [Address, bigint],
    [mintB, reserveB]: readonly [Address, bigint],
    readonly feeBps = 30,
    readonly executionMode: ExecutionMode = "sync",
    label = `${venue}:${mintA}:${mintB}:${reserveA}:${reserveB}:${feeBps}:${executionMode}`,
  ) {
    this.key = keyFor(label);
    this.mints = [mintA, mintB];
    this.reserves = new Map([
      [mintA, reserveA],
      [mintB, reserveB],
    ]);
  }

  reserveOf(mint: Address): bigint {
    const reserve = this.reserves.get(mint);
    if (reserve === undefined) throw new Error(`${mint} is not a mint of ${this.key}`);
    return reserve;
  }

  otherMint(mint: Address): Address {
    return this.mints[0] === mint ? this.mints[1] : this.mints[0];
  }

  /** The same floating-point estimate the real pools rank by, so near-ties exercise the exact re-check. */
  estimate(inputMint: Address, amountIn: bigint): number {
    if (!this.reserves.has(inputMint)) return 0;
    const reserveIn = Number(this.reserveOf(inputMint));
    const reserveOut = Number(this.reserveOf(this.otherMint(inputMint)));
    const inAfterFee = Number(amountIn) * (1 - this.feeBps / 10_000);
    return reserveIn > 0 ? (reserveOut * inAfterFee) / (reserveIn + inAfterFee) : 0;
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    if (!this.reserves.has(inputMint)) return null;
    const reserveIn = this.reserveOf(inputMint);
    const reserveOut = this.reserveOf(this.otherMint(inputMint));
    return {
      outAmount: cpmmAmountOut(reserveIn, reserveOut, amountIn, this.feeBps),
      spotOutAmount: cpmmSpotOut(reserveIn, reserveOut, amountIn, this.feeBps),
      inAmount: amountIn,
    };
  }
}

function pool(
  venue: string,
  a: readonly [Address, bigint],
  b: readonly [Address, bigint],
  feeBps = 30,
  executionMode: ExecutionMode = "sync",
): TestPool {
  return new TestPool(venue, a, b, feeBps, executionMode);
}

function request(inputMint: Address, outputMint: Address, amount: bigint, extra: Partial<RouteRequest> = {}) {
  return { inputMint, outputMint, amount, maxLegs: 2, ...extra } satisfies RouteRequest;
}

function out(p: TestPool, inputMint: Address, amount: bigint): bigint {
  return p.quote(inputMint, amount)!.outAmount;
}

/** The route's path as a list of mints and the keys of the markets it uses. */
function shape(route: Route | null) {
  if (!route) return null;
  return {
    path: [route.legs[0]!.inputMint, ...route.legs.map((leg) => leg.outputMint)],
    markets: route.legs.map((leg) => leg.market.key),
  };
}

const E9 = 1_000_000_000n;
const E6 = 1_000_000n;

describe("MarketGraph.bestRoute", () => {
  it("chooses the direct route when it pays more than any two-leg route", () => {
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6]);
    const solBonk = pool("cpmm", [SOL, 100n * E9], [BONK, 1_000_000_000n * 100_000n]);
    const bonkUsdc = pool("other", [BONK, 1_000_000_000n * 100_000n], [USDC, 10_000n * E6]);
    const graph = new MarketGraph([solBonk, bonkUsdc, solUsdc]);
    const amount = 1n * E9;

    const route = graph.bestRoute(request(SOL, USDC, amount))!;
    expect(shape(route)).toEqual({ path: [SOL, USDC], markets: [solUsdc.key] });
    expect(route.outAmount).toBe(out(solUsdc, SOL, amount));
    expect(route.inAmount).toBe(amount);
    expect(route.executionMode).toBe("sync");
    // The alternative really exists and really pays less.
    expect(out(bonkUsdc, BONK, out(solBonk, SOL, amount))).toBeLessThan(route.outAmount);
    expect(out(bonkUsdc, BONK, out(solBonk, SOL, amount))).toBeGreaterThan(0n);
  });

  it("routes through an intermediate mint when no direct market exists", () => {
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6]);
    const usdcJup = pool("other", [USDC, 2_000_000n * E6], [JUP, 4_000_000n * E6], 25);
    const graph = new MarketGraph([solUsdc, usdcJup]);
    const amount = 3n * E9;

    const route = graph.bestRoute(request(SOL, JUP, amount))!;
    expect(shape(route)).toEqual({ path: [SOL, USDC, JUP], markets: [solUsdc.key, usdcJup.key] });
    const mid = out(solUsdc, SOL, amount);
    expect(route.legs[0]).toMatchObject({ inAmount: amount, outAmount: mid });
    expect(route.legs[1]).toMatchObject({ inAmount: mid, outAmount: out(usdcJup, USDC, mid) });
    expect(route.outAmount).toBe(out(usdcJup, USDC, mid));
    expect(route.inAmount).toBe(amount);
    expect(route.executionMode).toBe("sync");
    // Reverse direction works through the same mint.
    expect(shape(graph.bestRoute(request(JUP, SOL, 1000n * E6)))).toEqual({
      path: [JUP, USDC, SOL],
      markets: [usdcJup.key, solUsdc.key],
    });
  });

  it("chooses a two-leg route when it pays more than a shallow direct market", () => {
    const shallow = pool("cpmm", [SOL, 10n * E9], [USDT, 1_500n * E6]);
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6], 5);
    const usdcUsdt = pool("other", [USDC, 50_000_000n * E6], [USDT, 50_000_000n * E6], 1);
    const graph = new MarketGraph([shallow, solUsdc, usdcUsdt]);
    const amount = 5n * E9;

    const route = graph.bestRoute(request(SOL, USDT, amount))!;
    expect(shape(route)).toEqual({ path: [SOL, USDC, USDT], markets: [solUsdc.key, usdcUsdt.key] });
    expect(route.outAmount).toBeGreaterThan(out(shallow, SOL, amount));
    expect(route.outAmount).toBe(out(usdcUsdt, USDC, out(solUsdc, SOL, amount)));
  });

  it("maxLegs 1 allows direct routes only", () => {
    const shallow = pool("cpmm", [SOL, 10n * E9], [USDT, 1_500n * E6]);
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6], 5);
    const usdcUsdt = pool("other", [USDC, 50_000_000n * E6], [USDT, 50_000_000n * E6], 1);
    const graph = new MarketGraph([shallow, solUsdc, usdcUsdt]);
    const amount = 5n * E9;

    const route = graph.bestRoute(request(SOL, USDT, amount, { maxLegs: 1 }))!;
    expect(shape(route)).toEqual({ path: [SOL, USDT], markets: [shallow.key] });
    expect(route.outAmount).toBe(out(shallow, SOL, amount));
    // Without a direct market there is no route at all.
    expect(graph.bestRoute(request(USDT, SOL, amount, { maxLegs: 1 }))).not.toBeNull();
    expect(
      new MarketGraph([solUsdc, usdcUsdt]).bestRoute(request(SOL, USDT, amount, { maxLegs: 1 })),
    ).toBeNull();
    expect(new MarketGraph([solUsdc, usdcUsdt]).bestRoute(request(SOL, USDT, amount))).not.toBeNull();
  });

  it("the venue filter excludes markets of other venues, on either leg", () => {
    const deepCpmm = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6]);
    const thinOther = pool("other", [SOL, 100n * E9], [USDC, 15_000n * E6]);
    const usdcJupCpmm = pool("cpmm", [USDC, 2_000_000n * E6], [JUP, 4_000_000n * E6]);
    const graph = new MarketGraph([deepCpmm, thinOther, usdcJupCpmm]);
    const amount = 2n * E9;

    expect(shape(graph.bestRoute(request(SOL, USDC, amount)))?.markets).toEqual([deepCpmm.key]);
    expect(
      shape(graph.bestRoute(request(SOL, USDC, amount, { venues: new Set(["other"]) })))?.markets,
    ).toEqual([thinOther.key]);
    // SOL → JUP needs USDC → JUP, which only "cpmm" has: the first leg on "other" is not enough.
    expect(graph.bestRoute(request(SOL, JUP, amount, { venues: new Set(["other"]) }))).toBeNull();
    // Both venues allowed, the first leg picks the deeper market.
    expect(
      shape(graph.bestRoute(request(SOL, JUP, amount, { venues: new Set(["cpmm", "other"]) })))?.markets,
    ).toEqual([deepCpmm.key, usdcJupCpmm.key]);
    expect(graph.bestRoute(request(SOL, USDC, amount, { venues: new Set() }))).toBeNull();
    expect(graph.bestRoute(request(SOL, USDC, amount, { venues: new Set(["nope"]) }))).toBeNull();
  });

  it("never uses an async market as the first leg of a two-leg route", () => {
    // USDC → YES on the async prediction venue pays generously, and YES trades against SOL on a sync pool,
    // but USDC → YES → SOL would need the async fill before the second leg: not a route.
    const prediction = pool("prediction", [USDC, 1_000_000n * E6], [YES, 1_000_000_000n * E6], 0, "async");
    const yesSol = pool("cpmm", [YES, 1_000_000_000n * E6], [SOL, 1_000_000n * E9]);
    const graph = new MarketGraph([prediction, yesSol]);

    expect(graph.bestRoute(request(USDC, SOL, 100n * E6))).toBeNull();
    // With a (worse) sync path available, that is the one chosen.
    const usdcSol = pool("cpmm", [USDC, 150_000n * E6], [SOL, 1_000n * E9]);
    const withSync = new MarketGraph([prediction, yesSol, usdcSol]);
    const route = withSync.bestRoute(request(USDC, SOL, 100n * E6))!;
    expect(route.legs.every((leg) => leg.market.executionMode === "sync")).toBe(true);
    expect(shape(route)).toEqual({ path: [USDC, SOL], markets: [usdcSol.key] });
    expect(route.outAmount).toBeLessThan(out(yesSol, YES, out(prediction, USDC, 100n * E6)));
  });

  it("uses an async market for a direct route, reported as async", () => {
    const prediction = pool("prediction", [USDC, 1_000_000n * E6], [YES, 2_000_000n * E6], 0, "async");
    const graph = new MarketGraph([prediction]);
    const route = graph.bestRoute(request(USDC, YES, 10n * E6))!;
    expect(shape(route)).toEqual({ path: [USDC, YES], markets: [prediction.key] });
    expect(route.executionMode).toBe("async");
  });

  it("routes directly from a mint whose markets it finds on demand, and the venue filter still applies", () => {
    const solUsdc = pool("cpmm", [SOL, 10_000n * E6], [USDC, 1_500_000n * E6]);
    const redemption = pool("prediction", [USDC, 1_000_000n * E6], [YES, 1_000_000n * E6], 0, "async");
    const asked: Address[] = [];
    const graph = new MarketGraph([solUsdc], {
      venue: "prediction",
      find: (mint) => {
        asked.push(mint);
        return mint === YES ? [redemption] : [];
      },
    });
    expect(graph.has(YES)).toBe(true);
    expect(graph.has(BONK)).toBe(false);
    const route = graph.bestRoute(request(YES, USDC, 10n * E6))!;
    expect(shape(route)).toEqual({ path: [YES, USDC], markets: [redemption.key] });
    expect(route.executionMode).toBe("async");
    // Found on demand, never part of a two-leg route, and held markets are not looked up again.
    expect(graph.bestRoute(request(YES, SOL, 10n * E6))).toBeNull();
    expect(graph.bestRoute(request(YES, USDC, 10n * E6, { venues: new Set(["cpmm"]) }))).toBeNull();
    // Either end may be a mint the venue builds markets for: both are asked, nothing found changes nothing.
    asked.length = 0;
    expect(shape(graph.bestRoute(request(SOL, USDC, 1n * E6))!)).toEqual({
      path: [SOL, USDC],
      markets: [solUsdc.key],
    });
    expect(asked.sort()).toEqual([SOL, USDC].sort());
  });

  it("finds on demand from the output mint too, beside a held market of the same pair", () => {
    const buy = pool("prediction", [USDC, 1_000_000n * E6], [YES, 3_000_000n * E6], 0, "async");
    // A pool listing the outcome token as well: the better of the two wins, whichever holds it.
    const yesPool = pool("cpmm", [USDC, 1_000_000n * E6], [YES, 2_000_000n * E6]);
    const graph = new MarketGraph([yesPool], {
      venue: "prediction",
      find: (mint) => (mint === YES ? [buy] : []),
    });
    const route = graph.bestRoute(request(USDC, YES, 10n * E6))!;
    expect(shape(route)).toEqual({ path: [USDC, YES], markets: [buy.key] });
    expect(route.executionMode).toBe("async");
    const pooled = graph.bestRoute(request(USDC, YES, 10n * E6, { venues: new Set(["cpmm"]) }))!;
    expect(shape(pooled)).toEqual({ path: [USDC, YES], markets: [yesPool.key] });
    // A market found for one mint pairs only its own two mints.
    expect(graph.bestRoute(request(SOL, YES, 10n * E6))).toBeNull();
  });

  it("never uses an async market as the second leg either (a two-leg route is sync)", () => {
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6]);
    const prediction = pool("prediction", [USDC, 1_000_000n * E6], [YES, 2_000_000n * E6], 0, "async");
    const graph = new MarketGraph([solUsdc, prediction]);
    expect(graph.bestRoute(request(SOL, YES, 1n * E9))).toBeNull();
  });

  it("a shorter route wins a tie", () => {
    // Direct: 100 / 150 reserves, 100 in, no fee → 150 · 100 / 200 = 75.
    // Two legs: 100 / 100, 100 in → 50; then 50 / 150, 50 in → 150 · 50 / 100 = 75. Equal outputs.
    const directPool = pool("cpmm", [SOL, 100n], [USDC, 150n], 0);
    const first = pool("cpmm", [SOL, 100n], [BONK, 100n], 0);
    const second = pool("cpmm", [BONK, 50n], [USDC, 150n], 0);
    expect(out(directPool, SOL, 100n)).toBe(75n);
    expect(out(second, BONK, out(first, SOL, 100n))).toBe(75n);
    for (const markets of [
      [directPool, first, second],
      [first, second, directPool],
    ]) {
      expect(shape(new MarketGraph(markets).bestRoute(request(SOL, USDC, 100n)))).toEqual({
        path: [SOL, USDC],
        markets: [directPool.key],
      });
    }
  });

  it("returns null when no route pays any output", () => {
    const solUsdc = pool("cpmm", [SOL, 10_000n * E9], [USDC, 1_500_000n * E6]);
    const graph = new MarketGraph([solUsdc]);
    expect(graph.bestRoute(request(SOL, USDC, 0n))).toBeNull();
    // 1 lamport is worth 0.00015 USDC units: rounds to nothing.
    expect(graph.bestRoute(request(SOL, USDC, 1n))).toBeNull();
    expect(graph.bestRoute(request(SOL, JUP, 1n * E9))).toBeNull();
    expect(graph.bestRoute(request(JUP, SOL, 1n * E9))).toBeNull();
    expect(new MarketGraph([]).bestRoute(request(SOL, USDC, 1n * E9))).toBeNull();
    expect(graph.has(SOL) && graph.has(USDC) && !graph.has(JUP)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties over random graphs
// ---------------------------------------------------------------------------------------------------

const VENUES = ["cpmm", "other"] as const;
/** Few mints and several pools, so most requests have direct and two-leg alternatives. */
const GRAPH_MINTS = [SOL, USDC, USDT, BONK] as const;

interface PoolSpec {
  a: number;
  b: number;
  reserveA: bigint;
  reserveB: bigint;
  feeBps: number;
  venue: (typeof VENUES)[number];
  async: boolean;
}

const poolSpec: fc.Arbitrary<PoolSpec> = fc
  .record({
    a: fc.integer({ min: 0, max: GRAPH_MINTS.length - 1 }),
    offset: fc.integer({ min: 1, max: GRAPH_MINTS.length - 1 }),
    reserveA: fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
    reserveB: fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
    feeBps: fc.integer({ min: 0, max: 1000 }),
    venue: fc.constantFrom(...VENUES),
    async: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  })
  .map(({ offset, ...spec }) => ({ ...spec, b: (spec.a + offset) % GRAPH_MINTS.length }));

function build(specs: readonly PoolSpec[]): TestPool[] {
  return specs.map(
    (s, i) =>
      new TestPool(
        s.venue,
        [GRAPH_MINTS[s.a]!, s.reserveA],
        [GRAPH_MINTS[s.b]!, s.reserveB],
        s.feeBps,
        s.async ? "async" : "sync",
        `property-pool-${i}`,
      ),
  );
}

/** Every route the graph could offer (direct, and two sync legs through one intermediate mint). */
function everyRoute(pools: readonly TestPool[], req: RouteRequest): { outAmount: bigint; legs: number }[] {
  const allowed = (p: TestPool) => !req.venues || req.venues.has(p.venue);
  const has = (p: TestPool, m: Address) => p.mints.includes(m);
  const routes: { outAmount: bigint; legs: number }[] = [];
  for (const p of pools) {
    if (allowed(p) && has(p, req.inputMint) && has(p, req.outputMint)) {
      routes.push({ outAmount: out(p, req.inputMint, req.amount), legs: 1 });
    }
  }
  if (req.maxLegs < 2) return routes;
  for (const first of pools) {
    if (!allowed(first) || first.executionMode !== "sync" || !has(first, req.inputMint)) continue;
    const middle = first.otherMint(req.inputMint);
    if (middle === req.outputMint) continue;
    const mid = out(first, req.inputMint, req.amount);
    for (const second of pools) {
      if (!allowed(second) || second.executionMode !== "sync") continue;
      if (!has(second, middle) || !has(second, req.outputMint)) continue;
      routes.push({ outAmount: mid > 0n ? out(second, middle, mid) : 0n, legs: 2 });
    }
  }
  return routes;
}

const routeRequest = fc
  .record({
    input: fc.integer({ min: 0, max: GRAPH_MINTS.length - 1 }),
    offset: fc.integer({ min: 1, max: GRAPH_MINTS.length - 1 }),
    amount: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    maxLegs: fc.constantFrom(1, 2),
    venues: fc.option(fc.subarray([...VENUES]), { nil: undefined }),
  })
  .map(
    ({ input, offset, amount, maxLegs, venues }): RouteRequest => ({
      inputMint: GRAPH_MINTS[input]!,
      outputMint: GRAPH_MINTS[(input + offset) % GRAPH_MINTS.length]!,
      amount,
      maxLegs,
      ...(venues ? { venues: new Set(venues) } : {}),
    }),
  );

describe("MarketGraph.bestRoute: properties", () => {
  it("never promises more than the reserves give, and chains legs exactly", () => {
    fc.assert(
      fc.property(fc.array(poolSpec, { minLength: 2, maxLength: 12 }), routeRequest, (specs, req) => {
        const pools = build(specs);
        const route = new MarketGraph(pools).bestRoute(req);
        if (!route) return;
        expect(route.legs.length).toBeGreaterThanOrEqual(1);
        expect(route.legs.length).toBeLessThanOrEqual(req.maxLegs);
        expect(route.legs[0]!.inputMint).toBe(req.inputMint);
        expect(route.legs.at(-1)!.outputMint).toBe(req.outputMint);
        expect(route.inAmount).toBe(req.amount);
        expect(route.legs[0]!.inAmount).toBe(req.amount);
        expect(route.outAmount).toBe(route.legs.at(-1)!.outAmount);
        expect(route.outAmount).toBeGreaterThan(0n);
        for (const [i, leg] of route.legs.entries()) {
          const market = leg.market as TestPool;
          expect(pools).toContain(market);
          if (req.venues) expect(req.venues.has(market.venue)).toBe(true);
          expect(market.mints).toContain(leg.inputMint);
          expect(market.otherMint(leg.inputMint)).toBe(leg.outputMint);
          expect(leg.outAmount).toBeLessThan(market.reserveOf(leg.outputMint));
          expect(leg.outAmount).toBe(out(market, leg.inputMint, leg.inAmount));
          if (i > 0) {
            expect(leg.inputMint).toBe(route.legs[i - 1]!.outputMint);
            expect(leg.inAmount).toBe(route.legs[i - 1]!.outAmount);
          }
        }
        if (route.legs.length > 1) {
          expect(route.executionMode).toBe("sync");
          expect(route.legs.every((leg) => leg.market.executionMode === "sync")).toBe(true);
          expect(route.legs[0]!.outputMint).not.toBe(req.outputMint);
        } else {
          expect(route.executionMode).toBe(route.legs[0]!.market.executionMode);
        }
        // The no-impact reference never undercuts the promised output (up to float rounding).
        expect(route.spotOutAmount).toBeGreaterThanOrEqual(Number(route.outAmount) * (1 - 1e-9));
      }),
      { numRuns: 1000 },
    );
  });

  it("pays at least as much as every direct route, and exactly the best route the graph offers", () => {
    fc.assert(
      fc.property(fc.array(poolSpec, { minLength: 2, maxLength: 12 }), routeRequest, (specs, req) => {
        const pools = build(specs);
        const route = new MarketGraph(pools).bestRoute(req);
        const candidates = everyRoute(pools, req);
        const best = candidates.reduce((max, c) => (c.outAmount > max ? c.outAmount : max), 0n);
        for (const direct of candidates.filter((c) => c.legs === 1)) {
          expect(route?.outAmount ?? 0n).toBeGreaterThanOrEqual(direct.outAmount);
        }
        if (best === 0n) {
          expect(route).toBeNull();
          return;
        }
        expect(route?.outAmount).toBe(best);
        // A shorter route wins a tie.
        const bestDirect = candidates.some((c) => c.legs === 1 && c.outAmount === best);
        if (bestDirect) expect(route!.legs.length).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });

  it("finds the best route on graphs with comparable reserves (many real alternatives)", () => {
    const smallPool = poolSpec.chain((spec) =>
      fc
        .record({
          reserveA: fc.bigInt({ min: 1n, max: 10_000n }),
          reserveB: fc.bigInt({ min: 1n, max: 10_000n }),
        })
        .map((r) => ({ ...spec, ...r })),
    );
    const smallRequest = routeRequest.chain((req) =>
      fc.bigInt({ min: 1n, max: 5_000n }).map((amount) => ({ ...req, amount })),
    );
    fc.assert(
      fc.property(fc.array(smallPool, { minLength: 2, maxLength: 12 }), smallRequest, (specs, req) => {
        const pools = build(specs);
        const route = new MarketGraph(pools).bestRoute(req);
        const best = everyRoute(pools, req).reduce((max, c) => (c.outAmount > max ? c.outAmount : max), 0n);
        expect(route?.outAmount ?? 0n).toBe(best);
        for (const leg of route?.legs ?? []) {
          expect(leg.outAmount).toBeLessThan((leg.market as TestPool).reserveOf(leg.outputMint));
        }
      }),
      { numRuns: 1000 },
    );
  });
});
