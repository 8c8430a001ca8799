/** A sync stores a record only when it differs as JSON: key order and absent members are no change. */
import { describe, expect, it } from "vitest";
import { sameJson } from "../../src/markets/sync.js";

describe("sameJson", () => {
  it("takes records whose members differ only in order as the same", () => {
    const stored = { ticker: "A", prices: { yesBid: "0.41", yesAsk: "0.43" }, tags: ["x", "y"] };
    const offered = { tags: ["x", "y"], prices: { yesAsk: "0.43", yesBid: "0.41" }, ticker: "A" };
    expect(sameJson(stored, offered)).toBe(true);
  });

  it("takes a member holding undefined as absent, as JSON does", () => {
    expect(sameJson({ ticker: "A", tokenized: undefined }, { ticker: "A" })).toBe(true);
    expect(sameJson({ ticker: "A" }, { ticker: "A", tokenized: undefined })).toBe(true);
    expect(sameJson({ ticker: "A", tokenized: false }, { ticker: "A" })).toBe(false);
  });

  it("finds a change at any depth, in arrays' order and length, and between null and absent", () => {
    const stored = { ticker: "A", rules: [{ cap: 1 }, { cap: 2 }], status: "active" };
    expect(sameJson(stored, { ...stored, status: "determined" })).toBe(false);
    expect(sameJson(stored, { ...stored, rules: [{ cap: 2 }, { cap: 1 }] })).toBe(false);
    expect(sameJson(stored, { ...stored, rules: [{ cap: 1 }] })).toBe(false);
    expect(sameJson(stored, { ...stored, rules: [{ cap: 1 }, { cap: "2" }] })).toBe(false);
    expect(sameJson({ ticker: "A", result: null }, { ticker: "A" })).toBe(false);
    expect(sameJson({ rules: [] }, { rules: {} })).toBe(false);
  });
});
