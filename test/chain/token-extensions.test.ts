/**
 * Token-2022 extension state in `jsonParsed`, from the bytes a mint stores, in Agave's shapes
 * (solana-account-decoder's parse_token_extension): the scaled UI amount's multipliers as decimal
 * strings, as Rust prints an f64, and one of the wrong size as `unparseableExtension`.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { decodeAddressBytes } from "../../src/chain/base58.js";
import { parseTokenExtensions } from "../../src/chain/sandbox/token-extensions.js";

/** A mint's data: the base layout padded to 165 bytes, its account type, then the given TLV entries. */
function mintWith(...entries: [type: number, value: Uint8Array][]): Uint8Array {
  const tlv = entries.map(([type, value]) => {
    const header = Buffer.alloc(4);
    header.writeUInt16LE(type, 0);
    header.writeUInt16LE(value.length, 2);
    return Buffer.concat([header, value]);
  });
  return Buffer.concat([Buffer.alloc(165), Buffer.from([1]), ...tlv]);
}

function scaledUiAmount(authority: Uint8Array, multiplier: number, at: bigint, next: number): Uint8Array {
  const value = Buffer.alloc(56);
  value.set(authority, 0);
  value.writeDoubleLE(multiplier, 32);
  value.writeBigInt64LE(at, 40);
  value.writeDoubleLE(next, 48);
  return value;
}

describe("Token-2022 extension state", () => {
  it("reads the scaled UI amount as Agave writes it", async () => {
    const authority = (await generateKeyPairSigner()).address;
    const data = mintWith([25, scaledUiAmount(decodeAddressBytes(authority), 1.5, 1_800_000_000n, 1e-7)]);
    expect(parseTokenExtensions(data)).toEqual([
      {
        extension: "scaledUiAmountConfig",
        state: {
          authority,
          multiplier: "1.5",
          newMultiplierEffectiveTimestamp: 1_800_000_000,
          newMultiplier: "0.0000001",
        },
      },
    ]);
    const none = mintWith([25, scaledUiAmount(new Uint8Array(32), 2, 0n, 1e21)]);
    expect(parseTokenExtensions(none)[0]).toMatchObject({
      state: { authority: null, multiplier: "2", newMultiplier: "1000000000000000000000" },
    });
  });

  it("answers a scaled UI amount of the wrong size as unparseable, and goes on", () => {
    const data = mintWith([25, new Uint8Array(55)], [9, new Uint8Array(0)]);
    expect(parseTokenExtensions(data)).toEqual([
      { extension: "unparseableExtension" },
      { extension: "nonTransferable" },
    ]);
  });
});
