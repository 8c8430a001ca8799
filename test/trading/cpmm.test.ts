/**
 * Constant-product pool math (contract §6: exact integer math, rounding favours the venue by at most
 * one unit), checked by hand-computed examples and by properties over the whole u64 range.
 */
import { type Address, address } from "@solana/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateKeypair } from "../../src/chain/ed25519.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { TokenRecord } from "../../src/trading/spot/pools/store.js";
import { BPS, cpmmAmountOut, cpmmSpotOut, MAX_POOL_FEE_BPS } from "../../src/trading/spot/venues/cpmm.js";
import { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";

const U64_MAX = 2n ** 64n - 1n;

const reserve = fc.bigInt({ min: 1n, max: U64_MAX });
const amount = fc.bigInt({ min: 0n, max: U64_MAX });
const fee = fc.integer({ min: 0, max: MAX_POOL_FEE_BPS });

/** reserveOut · a / (reserveIn · 10000 + a) with a = amountIn · (10000 − fee), as numerator and denominator. */
function exact(reserveIn: bigint, reserveOut: bigint, amountIn: bigint, feeBps: number) {
  const a = amountIn * (BPS - BigInt(feeBps));
  return { numerator: reserveOut * a, denominator: reserveIn * BPS + a };
}

describe("cpmmAmountOut: hand-computed examples", () => {
  it("1_000_000 / 1_000_000 reserves, 1000 in, 30 bps fee → 996", () => {
    // a = 1000 · 9970 = 9_970_000
    // out = 1_000_000 · 9_970_000 / (1_000_000 · 10_000 + 9_970_000)
    //     = 9_970_000_000_000 / 10_009_970_000 = 996.0069…  (10_009_970_000 · 996 = 9_969_930_120_000,
    //       remainder 69_880_000 < 10_009_970_000) → 996
    expect(cpmmAmountOut(1_000_000n, 1_000_000n, 1000n, 30)).toBe(996n);
  });

  it("no fee, equal reserves, input equal to the reserve → exactly half the output reserve", () => {
    // 100 · 100 · 10000 / (100 · 10000 + 100 · 10000) = 50 exactly
    expect(cpmmAmountOut(100n, 100n, 100n, 0)).toBe(50n);
  });

  it("rounds down a fractional result (1000 / 2000 reserves, 1 in, no fee → 1.998… → 1)", () => {
    // 2000 · 10000 / (1000 · 10000 + 10000) = 20_000_000 / 10_010_000 = 1.998…
    expect(cpmmAmountOut(1000n, 2000n, 1n, 0)).toBe(1n);
  });

  it("pays 0 when the exact output is below one unit (1_000_000 / 1000 reserves, 999 in, no fee)", () => {
    // 1000 · 9_990_000 / (10_000_000_000 + 9_990_000) = 0.998… → 0
    expect(cpmmAmountOut(1_000_000n, 1000n, 999n, 0)).toBe(0n);
  });

  it("maximum fee: 1e9 / 1e9 reserves, 1e9 in, 1000 bps → 473_684_210", () => {
    // a = 1e9 · 9000 = 9e12; out = 1e9 · 9e12 / (1e13 + 9e12) = 9e21 / 1.9e13 = 473_684_210.52… → 473_684_210
    expect(cpmmAmountOut(1_000_000_000n, 1_000_000_000n, 1_000_000_000n, 1000)).toBe(473_684_210n);
  });

  it("u64 extremes: (2^64 − 1) in against (2^64 − 1) / (2^64 − 1) reserves, no fee → 2^63 − 1", () => {
    // (2^64 − 1)² · 10000 / (2 · (2^64 − 1) · 10000) = (2^64 − 1) / 2 = 2^63 − ½ → 2^63 − 1
    expect(cpmmAmountOut(U64_MAX, U64_MAX, U64_MAX, 0)).toBe(2n ** 63n - 1n);
  });

  it("a huge input against a tiny pool never drains it (1 / 1 reserves, 2^64 − 1 in → 0)", () => {
    expect(cpmmAmountOut(1n, 1n, U64_MAX, 0)).toBe(0n);
    // 2 · x / (1 + x) with x = 2^64 − 1 is just below 2 → 1
    expect(cpmmAmountOut(1n, 2n, U64_MAX, 0)).toBe(1n);
  });

  it("pays nothing for no input or an empty pool", () => {
    expect(cpmmAmountOut(1000n, 1000n, 0n, 30)).toBe(0n);
    expect(cpmmAmountOut(1000n, 1000n, -5n, 30)).toBe(0n);
    expect(cpmmAmountOut(0n, 1000n, 10n, 30)).toBe(0n);
    expect(cpmmAmountOut(1000n, 0n, 10n, 30)).toBe(0n);
  });
});

describe("cpmmAmountOut: properties over u64 reserves and amounts, 0–1000 bps fees", () => {
  it("never decreases the constant product", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, fee, (reserveIn, reserveOut, amountIn, feeBps) => {
        const out = cpmmAmountOut(reserveIn, reserveOut, amountIn, feeBps);
        expect((reserveIn + amountIn) * (reserveOut - out)).toBeGreaterThanOrEqual(reserveIn * reserveOut);
      }),
      { numRuns: 2000 },
    );
  });

  it("pays at least 0 and strictly less than the output reserve", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, fee, (reserveIn, reserveOut, amountIn, feeBps) => {
        const out = cpmmAmountOut(reserveIn, reserveOut, amountIn, feeBps);
        expect(out).toBeGreaterThanOrEqual(0n);
        expect(out).toBeLessThan(reserveOut);
      }),
      { numRuns: 2000 },
    );
  });

  it("rounds the exact rational output down by less than one unit", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, fee, (reserveIn, reserveOut, amountIn, feeBps) => {
        const out = cpmmAmountOut(reserveIn, reserveOut, amountIn, feeBps);
        const { numerator, denominator } = exact(reserveIn, reserveOut, amountIn, feeBps);
        // out ≤ numerator / denominator < out + 1
        expect(out * denominator).toBeLessThanOrEqual(numerator);
        expect(numerator).toBeLessThan((out + 1n) * denominator);
      }),
      { numRuns: 2000 },
    );
  });

  it("is monotonic in the input: more input never pays less", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, amount, fee, (reserveIn, reserveOut, x, y, feeBps) => {
        const [small, large] = x <= y ? [x, y] : [y, x];
        expect(cpmmAmountOut(reserveIn, reserveOut, small, feeBps)).toBeLessThanOrEqual(
          cpmmAmountOut(reserveIn, reserveOut, large, feeBps),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("is monotonic in nearby inputs too (amount vs amount + 1…1000, where rounding matters most)", () => {
    fc.assert(
      fc.property(
        reserve,
        reserve,
        fc.bigInt({ min: 0n, max: 1_000_000n }),
        fc.bigInt({ min: 1n, max: 1000n }),
        fee,
        (reserveIn, reserveOut, x, step, feeBps) => {
          expect(cpmmAmountOut(reserveIn, reserveOut, x, feeBps)).toBeLessThanOrEqual(
            cpmmAmountOut(reserveIn, reserveOut, x + step, feeBps),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a higher fee never pays more", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, fee, fee, (reserveIn, reserveOut, amountIn, f, g) => {
        const [low, high] = f <= g ? [f, g] : [g, f];
        expect(cpmmAmountOut(reserveIn, reserveOut, amountIn, high)).toBeLessThanOrEqual(
          cpmmAmountOut(reserveIn, reserveOut, amountIn, low),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("with comparable reserves and input (small values), still satisfies every bound", () => {
    const small = fc.bigInt({ min: 1n, max: 10_000n });
    fc.assert(
      fc.property(
        small,
        small,
        fc.bigInt({ min: 0n, max: 10_000n }),
        fee,
        (reserveIn, reserveOut, amountIn, f) => {
          const out = cpmmAmountOut(reserveIn, reserveOut, amountIn, f);
          const { numerator, denominator } = exact(reserveIn, reserveOut, amountIn, f);
          expect(out * denominator <= numerator && numerator < (out + 1n) * denominator).toBe(true);
          expect(out < reserveOut).toBe(true);
          expect((reserveIn + amountIn) * (reserveOut - out) >= reserveIn * reserveOut).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("never pays more than the no-impact spot output", () => {
    fc.assert(
      fc.property(reserve, reserve, amount, fee, (reserveIn, reserveOut, amountIn, feeBps) => {
        const out = Number(cpmmAmountOut(reserveIn, reserveOut, amountIn, feeBps));
        const spot = cpmmSpotOut(reserveIn, reserveOut, amountIn, feeBps);
        expect(out).toBeLessThanOrEqual(spot * (1 + 1e-12));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("CpmmPool: pricing with firm quotes outstanding", () => {
  const [a, b] = [address("So11111111111111111111111111111111111111112"), USDC_MINT];
  const token = (mint: Address): TokenRecord => ({ mint, decimals: 6, program: TOKEN_PROGRAM });
  const pool = (): CpmmPool => {
    const record = { address: a, venue: "cpmm", keyId: "k", mintA: a, mintB: b, feeBps: 30 };
    const made = new CpmmPool(record, [token(a), token(b)], [a, b], generateKeypair());
    made.observeBalance(0, 1_000_000_000n);
    made.observeBalance(1, 50_000_000_000n);
    return made;
  };
  const out = (market: CpmmPool, mint: Address, amount: bigint) =>
    market.quote(mint, amount)?.outAmount ?? 0n;

  it("prices a quote in the same direction as if the outstanding one had landed", () => {
    const market = pool();
    const first = out(market, a, 100_000_000n);
    market.reserve(b, first, 1_000n, 100_000_000n);
    // The curve after the first lands: its input in, its output out.
    expect(out(market, a, 100_000_000n)).toBe(
      cpmmAmountOut(1_100_000_000n, 50_000_000_000n - first, 100_000_000n, 30),
    );
  });

  it("never prices the other direction better for input a quote has promised but not paid", () => {
    const market = pool();
    const untouched = out(market, b, 5_000_000_000n);
    const first = out(market, a, 100_000_000n);
    const hold = market.reserve(b, first, 1_000n, 100_000_000n);
    // The promised input may never arrive: selling b for a is priced on a's balance alone.
    expect(out(market, b, 5_000_000_000n)).toBeLessThanOrEqual(untouched);
    hold.release();
    expect(out(market, b, 5_000_000_000n)).toBe(untouched);
    expect(out(market, a, 100_000_000n)).toBe(first);
  });
});
