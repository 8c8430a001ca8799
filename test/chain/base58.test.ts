import { randomBytes } from "node:crypto";
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addressOf,
  Base58Error,
  decodeAddressBytes,
  decodeBase58,
  decodeSignatureBytes,
  encodeBase58,
  maxBase58Chars,
} from "../../src/chain/base58.js";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

// The reference: @solana/kit's generic (BigInt) codec, whose names run the other way round (its
// "encoder" turns base58 text into bytes).
const kitBase58 = {
  encode: (bytes: Uint8Array) => getBase58Decoder().decode(bytes),
  decode: (text: string) => new Uint8Array(getBase58Encoder().encode(text)),
};

/** The reference's answer as bytes or "refused", to compare with decodeBase58 under a byte bound. */
function reference(text: string, maxBytes: number): Uint8Array | "refused" {
  try {
    const bytes = kitBase58.decode(text);
    return bytes.length > maxBytes ? "refused" : bytes;
  } catch {
    return "refused";
  }
}

function ours(text: string, maxBytes: number): Uint8Array | "refused" {
  try {
    return decodeBase58(text, maxBytes);
  } catch (error) {
    expect(error).toBeInstanceOf(Base58Error);
    return "refused";
  }
}

describe("base58 encoding of the sandbox's hot path", () => {
  it("gives the known texts of the base58 test vectors", () => {
    const vectors: [string, string][] = [
      ["", ""],
      ["00", "1"],
      ["0000287fb4cd", "11233QC4"],
      ["48656c6c6f20576f726c6421", "2NEpo7TZRRrLZSi2U"],
      ["00eb15231dfceb60925886b67d065299925915aeb172c06647", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"],
    ];
    for (const [hex, text] of vectors) {
      expect(encodeBase58(Buffer.from(hex, "hex"))).toBe(text);
      expect(Buffer.from(decodeBase58(text, hex.length / 2)).toString("hex")).toBe(hex);
    }
  });

  it("gives exactly the reference's text for every length, leading zeros and all-ones bytes", () => {
    for (let n = 0; n < 20_000; n++) {
      const bytes = randomBytes(n % 70);
      if (n % 7 === 0) bytes.fill(0, 0, n % 5);
      if (n % 11 === 0) bytes.fill(255);
      expect(encodeBase58(bytes)).toBe(kitBase58.encode(bytes));
    }
    expect(encodeBase58(new Uint8Array(32))).toBe("11111111111111111111111111111111");
  });

  it("caches addresses by their bytes, views included", () => {
    const key = randomBytes(32);
    const view = new Uint8Array(Buffer.concat([randomBytes(7), key])).subarray(7);
    expect(addressOf(key)).toBe(kitBase58.encode(key));
    expect(addressOf(view)).toBe(kitBase58.encode(key));
  });
});

describe("base58 decoding of client text", () => {
  it("gives exactly the reference's bytes for encoded values of every length, leading zeros and all-ones", () => {
    for (let n = 0; n < 5_000; n++) {
      const bytes = randomBytes(n % 140);
      if (n % 7 === 0) bytes.fill(0, 0, n % 5);
      if (n % 11 === 0) bytes.fill(255);
      const text = kitBase58.encode(bytes);
      expect(decodeBase58(text, bytes.length)).toEqual(kitBase58.decode(text));
    }
    expect(decodeBase58("", 0)).toEqual(new Uint8Array(0));
    expect(decodeBase58("1111", 4)).toEqual(new Uint8Array(4));
  });

  it("agrees with the reference on random text: the same bytes, or both refuse (bad characters, too large)", () => {
    const base58Text = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 120 });
    const anyText = fc.oneof(base58Text, fc.string({ maxLength: 60 }), fc.string({ unit: "binary" }));
    fc.assert(
      fc.property(anyText, fc.integer({ min: 0, max: 100 }), (text, maxBytes) => {
        expect(ours(text, maxBytes)).toEqual(reference(text, maxBytes));
      }),
      { numRuns: 10_000 },
    );
  });

  it("bounds text by length exactly: the longest text of n bytes fits, one more character never does", () => {
    for (let bytes = 1; bytes <= 1_232; bytes += bytes < 80 ? 1 : 97) {
      const largest = kitBase58.encode(new Uint8Array(bytes).fill(255));
      expect(largest.length).toBeLessThanOrEqual(maxBase58Chars(bytes));
      const longer = "2".padEnd(maxBase58Chars(bytes) + 1, "1");
      expect(kitBase58.decode(longer).length).toBeGreaterThan(bytes);
    }
    expect(maxBase58Chars(32)).toBe(44);
    expect(maxBase58Chars(64)).toBe(88);
  });

  it("refuses a 100,000-character input by its length, before decoding it", () => {
    const huge = "z".repeat(100_000);
    // Refused for its length ("… characters"), not after decoding ("decodes to more than … bytes").
    expect(() => decodeBase58(huge, 1_232)).toThrow(Base58Error);
    expect(() => decodeBase58(huge, 1_232)).toThrow("base58 text of 100000 characters exceeds 1232 bytes");
    expect(() => decodeAddressBytes(huge)).toThrow(Base58Error);
    expect(() => decodeAddressBytes(huge)).toThrow(/must be 32 to 44 base58 characters/);
    expect(() => decodeSignatureBytes(huge)).toThrow(Base58Error);
    expect(() => decodeSignatureBytes(huge)).toThrow(/base58 characters/);
  });

  it("decodes addresses and signatures of their exact size only, and says why it refuses", () => {
    const key = randomBytes(32);
    expect(decodeAddressBytes(kitBase58.encode(key))).toEqual(new Uint8Array(key));
    const signature = randomBytes(64);
    expect(decodeSignatureBytes(kitBase58.encode(signature))).toEqual(new Uint8Array(signature));
    const kind = (decode: () => unknown) => {
      try {
        decode();
      } catch (error) {
        return error instanceof Base58Error ? error.kind : "other";
      }
      return "accepted";
    };
    expect(kind(() => decodeAddressBytes(kitBase58.encode(randomBytes(31)).padStart(32, "1")))).toBe("size");
    expect(kind(() => decodeAddressBytes("0".repeat(40)))).toBe("character");
    expect(kind(() => decodeAddressBytes(kitBase58.encode(signature)))).toBe("size");
    expect(kind(() => decodeSignatureBytes(kitBase58.encode(key)))).toBe("size");
    expect(kind(() => decodeAddressBytes("1".repeat(31)))).toBe("size");
  });
});
