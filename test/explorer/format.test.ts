/** The explorer's one formatter: prices in one form, chances from prices, times with their zone. */
import { describe, expect, it } from "vitest";
import { byChance, centsText, chanceOf, clock, dateTime, percent, price } from "../../web/src/format.js";

describe("the explorer's formatter", () => {
  it("writes every price in one form: whole cents bare, else one decimal", () => {
    expect(price("0.2900")).toBe("29¢");
    expect(price("0.27")).toBe("27¢");
    expect(price(0.295)).toBe("29.5¢");
    expect(price("0.0050")).toBe("0.5¢");
    expect(price("1.0000")).toBe("100¢");
    expect(price(null)).toBe("—");
    expect(price(undefined)).toBe("—");
    // A chart's axis value in cents: 29.0 is 29¢, as the table beside it says.
    expect(centsText(29)).toBe("29¢");
    expect(centsText(29.04)).toBe("29¢");
    expect(centsText(28.96)).toBe("29¢");
    expect(centsText(29.25)).toBe("29.3¢");
    expect(centsText(Number.NaN)).toBe("—");
  });

  it("writes chances as whole percents, never 0% or 100% short of certainty", () => {
    expect(percent(0.42)).toBe("42%");
    expect(percent(0.004)).toBe("<1%");
    expect(percent(0.996)).toBe(">99%");
    expect(percent(0)).toBe("0%");
    expect(percent(1)).toBe("100%");
    expect(percent(null)).toBe("—");
  });

  it("reads a market's chance from its price", () => {
    expect(chanceOf({ yesBid: "0.4000", yesAsk: "0.4400" })).toBeCloseTo(0.42);
    // A wide spread gives way to the last trade; a one-sided book too.
    expect(chanceOf({ yesBid: "0.0100", yesAsk: "0.9000", last: "0.3000" })).toBe(0.3);
    expect(chanceOf({ yesBid: "0.0100", yesAsk: "0.9000" })).toBeCloseTo(0.455);
    expect(chanceOf({ yesBid: null, yesAsk: "0.0300" })).toBe(0.03);
    expect(chanceOf({ yesBid: null, yesAsk: null })).toBeNull();
    expect(chanceOf({ yesBid: "0.5", yesAsk: "0.6", result: "yes" })).toBe(1);
    expect(chanceOf({ yesBid: "0.5", yesAsk: "0.6", result: "no" })).toBe(0);
    const ranked = byChance(
      ["a", "b", "c", "d"],
      (item) => ({ a: 0.1, b: null, c: 0.7, d: 0.1 })[item] ?? null,
    );
    expect(ranked).toEqual(["c", "a", "d", "b"]);
  });

  it("writes times with their zone", () => {
    const at = Date.UTC(2026, 11, 3, 14, 5, 9) / 1000;
    expect(dateTime(at, "UTC")).toBe("Dec 3, 2:05 PM UTC");
    expect(dateTime(at, "America/New_York")).toBe("Dec 3, 9:05 AM EST");
    expect(clock(at, "UTC")).toBe("14:05:09 UTC");
    expect(dateTime(null)).toBe("—");
    // The browser's own zone is named too.
    expect(dateTime(at)).toMatch(/ (UTC|GMT[+-]?\d*|[A-Z]{2,5})$/);
  });
});
