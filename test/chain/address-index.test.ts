import { describe, expect, it } from "vitest";
import { AddressIndex } from "../../src/chain/address-index.js";
import { encodeBase58 } from "../../src/chain/base58.js";

/** `n` distinct base58 addresses. */
function addresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const bytes = new Uint8Array(32);
    new DataView(bytes.buffer).setUint32(0, i + 1);
    bytes[31] = i % 251;
    return encodeBase58(bytes);
  });
}

describe("AddressIndex", () => {
  it("finds every address it was given, through the owner's own list, across growth", () => {
    const keys = addresses(20_000);
    // Values point at where the owner keeps each address: here, at its position in `keys` reversed.
    const at = (value: number) => keys[keys.length - 1 - value] as string;
    const index = new AddressIndex(at);
    keys.forEach((key, i) => {
      expect(index.add(key, keys.length - 1 - i)).toBe(true);
    });
    expect(index.size).toBe(keys.length);
    for (const [i, key] of keys.entries()) expect(index.get(key)).toBe(keys.length - 1 - i);
  });

  it("answers undefined for an address it does not hold, however close", () => {
    const keys = addresses(1_000);
    const index = new AddressIndex((value) => keys[value] as string, keys.length);
    keys.slice(0, 500).forEach((key, i) => {
      index.add(key, i);
    });
    for (const key of keys.slice(500)) expect(index.has(key)).toBe(false);
    expect(index.get("")).toBeUndefined();
    expect(index.get(`${keys[0]}x`)).toBeUndefined();
    expect(index.get((keys[0] as string).slice(1))).toBeUndefined();
  });

  it("keeps what it holds when room is reserved for more", () => {
    const keys = addresses(3_000);
    const index = new AddressIndex((value) => keys[value] as string);
    keys.slice(0, 100).forEach((key, i) => {
      index.add(key, i);
    });
    index.reserve(keys.length);
    keys.slice(100).forEach((key, i) => {
      index.add(key, i + 100);
    });
    index.reserve(10);
    for (const [i, key] of keys.entries()) expect(index.get(key)).toBe(i);
  });

  it("keeps the first value of an address added twice", () => {
    const keys = addresses(2);
    const owner = [keys[0], keys[0], keys[1]] as string[];
    const index = new AddressIndex((value) => owner[value] as string);
    expect(index.add(keys[0] as string, 0)).toBe(true);
    expect(index.add(keys[0] as string, 1)).toBe(false);
    expect(index.get(keys[0] as string)).toBe(0);
    expect(index.size).toBe(1);
  });

  it("refuses values it cannot hold", () => {
    const index = new AddressIndex(() => "x");
    for (const value of [-1, 1.5, 2 ** 31, Number.NaN])
      expect(() => index.add("x", value)).toThrow(RangeError);
    expect(index.size).toBe(0);
  });
});
