/**
 * Program-derived addresses derived synchronously, judged by kit: the same curve verdict for any 32
 * bytes (the edges of the field and the sign bit included), the same address and bump for any seeds
 * and program, the same associated token accounts, and the runtime's limits refused.
 */
import { type Address, getProgramDerivedAddress, isOffCurveAddress } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import {
  findAssociatedTokenAddress,
  findProgramAddress,
  isOnCurve,
  ProgramAddressError,
} from "../../src/chain/program-address.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";

const P = 2n ** 255n - 19n;
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 });
const address = bytes32.map((bytes) => encodeBase58(bytes) as Address);

/** `value` as 32 little-endian bytes, with the sign bit (the top bit of the last byte) as given. */
function littleEndian(value: bigint, signBit: boolean): Uint8Array {
  const bytes = Buffer.from(value.toString(16).padStart(64, "0"), "hex").reverse();
  if (signBit) bytes[31] = (bytes[31] as number) | 0x80;
  return bytes;
}

const kitSaysOnCurve = (bytes: Uint8Array) => !isOffCurveAddress(encodeBase58(bytes) as Address);

describe("program-derived addresses", () => {
  it("tells points on the curve as kit does, for any bytes", () => {
    let onCurve = 0;
    fc.assert(
      fc.property(bytes32, (bytes) => {
        const verdict = isOnCurve(bytes);
        if (verdict) onCurve++;
        expect(verdict).toBe(kitSaysOnCurve(bytes));
      }),
      { numRuns: 3_000 },
    );
    // About half of all values are points: both verdicts were met.
    expect(onCurve).toBeGreaterThan(1_000);
    expect(onCurve).toBeLessThan(2_000);
  });

  it("tells the edges of the field as kit does: y of 0, ±1, p and past it, with either sign bit", () => {
    const edges = [0n, 1n, 2n, P - 2n, P - 1n, P, P + 1n, 2n ** 255n - 1n];
    for (const y of edges) {
      for (const signBit of [false, true]) {
        const bytes = littleEndian(y, signBit);
        expect(isOnCurve(bytes), `y = ${y}, sign bit ${signBit}`).toBe(kitSaysOnCurve(bytes));
      }
    }
    // x = 0 (y = ±1) is a point only with its sign bit clear.
    expect(isOnCurve(littleEndian(1n, false))).toBe(true);
    expect(isOnCurve(littleEndian(1n, true))).toBe(false);
  });

  it("derives kit's address and bump for any seeds and program", async () => {
    const seeds = fc.array(fc.uint8Array({ maxLength: 32 }), { maxLength: 15 });
    await fc.assert(
      fc.asyncProperty(address, seeds, async (program, seedList) => {
        const [expected, bump] = await getProgramDerivedAddress({ programAddress: program, seeds: seedList });
        expect(findProgramAddress(program, seedList)).toEqual({ address: expected, bump });
      }),
      { numRuns: 150 },
    );
  });

  it("derives kit's associated token accounts under both token programs", async () => {
    await fc.assert(
      fc.asyncProperty(
        address,
        address,
        fc.constantFrom(TOKEN_PROGRAM, TOKEN_2022_PROGRAM),
        async (owner, mint, program) => {
          const [expected] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
          expect(findAssociatedTokenAddress(owner, mint, program)).toBe(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("refuses what the runtime (and kit) refuse: sixteen seeds beside the bump, a seed over 32 bytes", async () => {
    const program = TOKEN_PROGRAM;
    const sixteen = Array.from({ length: 16 }, () => new Uint8Array(1));
    expect(() => findProgramAddress(program, sixteen)).toThrow(ProgramAddressError);
    await expect(getProgramDerivedAddress({ programAddress: program, seeds: sixteen })).rejects.toThrow();
    const long = [new Uint8Array(33)];
    expect(() => findProgramAddress(program, long)).toThrow(ProgramAddressError);
    await expect(getProgramDerivedAddress({ programAddress: program, seeds: long })).rejects.toThrow();
    // The most it takes: fifteen seeds of 32 bytes.
    const most = Array.from({ length: 15 }, (_, index) => new Uint8Array(32).fill(index));
    const [expected, bump] = await getProgramDerivedAddress({ programAddress: program, seeds: most });
    expect(findProgramAddress(program, most)).toEqual({ address: expected, bump });
  });
});
