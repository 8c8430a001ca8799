/**
 * Token-2022 extension state in `jsonParsed`, from the bytes a mint stores, in Agave's shapes
 * (solana-account-decoder's parse_token_extension): the scaled UI amount's multipliers as decimal
 * strings, as Rust prints an f64; the confidential-transfer extensions' ElGamal keys and ciphertexts
 * as base64; and an extension of the wrong size as `unparseableExtension`.
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

  it("reads the confidential-transfer extensions, their keys and ciphertexts as base64", async () => {
    const authority = (await generateKeyPairSigner()).address;
    const bytes = (length: number, seed: number) =>
      Buffer.from(Array.from({ length }, (_, i) => (seed + i) % 256));
    const b64 = (length: number, seed: number) => bytes(length, seed).toString("base64");

    const mint = Buffer.concat([decodeAddressBytes(authority), Buffer.from([1]), bytes(32, 7)]);
    const feeConfig = Buffer.concat([Buffer.alloc(32), bytes(32, 1), Buffer.from([1]), bytes(64, 2)]);
    const mintBurn = Buffer.concat([bytes(64, 3), bytes(36, 4), bytes(32, 5), bytes(64, 6)]);
    expect(parseTokenExtensions(mintWith([4, mint], [16, feeConfig], [24, mintBurn]))).toEqual([
      {
        extension: "confidentialTransferMint",
        state: { authority, autoApproveNewAccounts: true, auditorElgamalPubkey: b64(32, 7) },
      },
      {
        extension: "confidentialTransferFeeConfig",
        state: {
          authority: null,
          withdrawWithheldAuthorityElgamalPubkey: b64(32, 1),
          harvestToMintEnabled: true,
          withheldAmount: b64(64, 2),
        },
      },
      {
        extension: "confidentialMintBurn",
        state: {
          confidentialSupply: b64(64, 3),
          decryptableSupply: b64(36, 4),
          supplyElgamalPubkey: b64(32, 5),
          pendingBurn: b64(64, 6),
        },
      },
    ]);
    // No auditor: 32 zero bytes.
    const unaudited = Buffer.concat([decodeAddressBytes(authority), Buffer.from([0]), Buffer.alloc(32)]);
    expect(parseTokenExtensions(mintWith([4, unaudited]))[0]).toMatchObject({
      state: { autoApproveNewAccounts: false, auditorElgamalPubkey: null },
    });

    const counters = Buffer.alloc(32);
    for (const [i, value] of [1n, 65_536n, 3n, 2n].entries()) counters.writeBigUInt64LE(value, i * 8);
    const account = Buffer.concat([
      Buffer.from([1]),
      bytes(32, 10),
      bytes(64, 11),
      bytes(64, 12),
      bytes(64, 13),
      bytes(36, 14),
      Buffer.from([1, 0]),
      counters,
    ]);
    expect(parseTokenExtensions(mintWith([5, account], [17, bytes(64, 15)]))).toEqual([
      {
        extension: "confidentialTransferAccount",
        state: {
          approved: true,
          elgamalPubkey: b64(32, 10),
          pendingBalanceLo: b64(64, 11),
          pendingBalanceHi: b64(64, 12),
          availableBalance: b64(64, 13),
          decryptableAvailableBalance: b64(36, 14),
          allowConfidentialCredits: true,
          allowNonConfidentialCredits: false,
          pendingBalanceCreditCounter: 1,
          maximumPendingBalanceCreditCounter: 65_536,
          expectedPendingBalanceCreditCounter: 3,
          actualPendingBalanceCreditCounter: 2,
        },
      },
      { extension: "confidentialTransferFeeAmount", state: { withheldAmount: b64(64, 15) } },
    ]);
  });
});
