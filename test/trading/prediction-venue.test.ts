/** The prediction venue's pricing rules: book ladders, whole-contract buys and sales, redemption payouts. */
import { describe, expect, it } from "vitest";
import { CONTRACT_UNITS, payoutPerContract, priceBook } from "../../src/trading/spot/venues/prediction.js";

describe("redemption payouts", () => {
  const determined = (result: string | null, scalarOutcomePct: number | null = null) => ({
    status: "determined",
    result,
    scalarOutcomePct,
  });

  it("pays 1 USDC per winning contract and nothing per losing one", () => {
    expect(payoutPerContract("yes", determined("yes"))).toBe(CONTRACT_UNITS);
    expect(payoutPerContract("no", determined("yes"))).toBe(0n);
    expect(payoutPerContract("no", { ...determined("no"), status: "finalized" })).toBe(CONTRACT_UNITS);
  });

  it("splits a scalar result: yes pays pct/10000, no the rest", () => {
    expect(payoutPerContract("yes", determined("", 2_500))).toBe(250_000n);
    expect(payoutPerContract("no", determined("", 2_500))).toBe(750_000n);
    expect(payoutPerContract("yes", determined("", 10_000))).toBe(CONTRACT_UNITS);
  });

  it("pays nothing before determination or without a result", () => {
    expect(payoutPerContract("yes", { status: "active", result: "", scalarOutcomePct: null })).toBeNull();
    expect(payoutPerContract("yes", { status: "closed", result: "yes", scalarOutcomePct: null })).toBeNull();
    expect(payoutPerContract("yes", determined("", null))).toBeNull();
  });
});

describe("order book ladders", () => {
  it("mirrors each side's bids into the other side's asks, best first, in micro-USDC", () => {
    const book = priceBook(
      { yes_bids: { "0.4100": 5, "0.4200": 3 }, no_bids: { "0.5500": 7, "0.5600": 2 }, sequence: 1 },
      0,
    );
    expect(book.bids.yes).toEqual([
      [420_000n, 3n],
      [410_000n, 5n],
    ]);
    expect(book.asks.yes).toEqual([
      [440_000n, 2n],
      [450_000n, 7n],
    ]);
    expect(book.asks.no).toEqual([
      [580_000n, 3n],
      [590_000n, 5n],
    ]);
  });

  it("drops levels at 0 or 1 and empty ones", () => {
    const book = priceBook(
      { yes_bids: { "0.0000": 5, "1.0000": 1, "0.3000": 0 }, no_bids: {}, sequence: 1 },
      0,
    );
    expect(book.bids.yes).toEqual([]);
    expect(book.asks.no).toEqual([]);
  });
});
