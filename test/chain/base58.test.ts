import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { addressOf, encodeBase58 } from "../../src/chain/base58.js";

describe("base58 encoding of the sandbox's hot path", () => {
  it("gives exactly bs58's text for every length, leading zeros and all-ones bytes", () => {
    for (let n = 0; n < 20_000; n++) {
      const bytes = randomBytes(n % 70);
      if (n % 7 === 0) bytes.fill(0, 0, n % 5);
      if (n % 11 === 0) bytes.fill(255);
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
    }
    expect(encodeBase58(new Uint8Array(32))).toBe("11111111111111111111111111111111");
  });

  it("caches addresses by their bytes, views included", () => {
    const key = randomBytes(32);
    const view = new Uint8Array(Buffer.concat([randomBytes(7), key])).subarray(7);
    expect(addressOf(key)).toBe(bs58.encode(key));
    expect(addressOf(view)).toBe(bs58.encode(key));
  });
});
