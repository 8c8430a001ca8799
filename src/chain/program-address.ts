/**
 * Program-derived addresses, as the runtime derives them (`Pubkey::find_program_address`): the
 * SHA-256 of the seeds, a bump, the program and "ProgramDerivedAddress", for the highest bump whose
 * digest is not an ed25519 point. kit's `getProgramDerivedAddress` gives the same addresses but costs
 * ~0.8 ms each (an asynchronous WebCrypto digest per bump, and the curve check by exponentiation),
 * and every intent derives its fresh escrow's token accounts; this costs ~50 µs.
 */
import { hash } from "node:crypto";
import type { Address } from "@solana/kit";
import { addressBytes, encodeBase58 } from "./base58.js";
import { ASSOCIATED_TOKEN_PROGRAM } from "./programs.js";

const PDA_MARKER = Buffer.from("ProgramDerivedAddress");
const MAX_SEEDS = 16;
const MAX_SEED_BYTES = 32;

/** The field of ed25519, and the curve's d. */
const P = 2n ** 255n - 19n;
const D =
  37_095_705_934_669_439_343_138_083_508_754_565_189_542_113_879_843_219_016_388_785_533_085_940_283_555n;

/** A derivation the runtime would refuse: too many seeds, a seed too long, or no bump off the curve. */
export class ProgramAddressError extends Error {}

/** The program-derived address of `seeds` under `program`, and its bump. */
export function findProgramAddress(
  program: Address,
  seeds: readonly Uint8Array[],
): { address: Address; bump: number } {
  if (seeds.length >= MAX_SEEDS) throw new ProgramAddressError(`at most ${MAX_SEEDS - 1} seeds and a bump`);
  if (seeds.some((seed) => seed.length > MAX_SEED_BYTES))
    throw new ProgramAddressError(`a seed is at most ${MAX_SEED_BYTES} bytes`);
  const bump = Buffer.alloc(1);
  const input = [...seeds, bump, addressBytes(program), PDA_MARKER];
  for (let candidate = 255; candidate >= 0; candidate--) {
    bump[0] = candidate;
    const digest = hash("sha256", Buffer.concat(input), "buffer");
    if (!isOnCurve(digest)) return { address: encodeBase58(digest) as Address, bump: candidate };
  }
  throw new ProgramAddressError("no bump gives an address off the curve");
}

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export function findAssociatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Address {
  return findProgramAddress(ASSOCIATED_TOKEN_PROGRAM, [
    addressBytes(owner),
    addressBytes(tokenProgram),
    addressBytes(mint),
  ]).address;
}

/**
 * Whether the 32 bytes decompress to an ed25519 point, exactly as kit (and the runtime) decide: y is
 * the little-endian value without its top bit, and x² = (y² − 1) / (d·y² + 1) must have a root, which
 * is to say (y² − 1)(d·y² + 1) is zero or a square mod p; x = 0 with the sign bit set is refused.
 * The square is told by the Jacobi symbol, a fifth of the cost of the exponentiation kit uses.
 */
export function isOnCurve(bytes: Uint8Array): boolean {
  const signBit = (bytes[31] as number) & 0x80;
  const words = Buffer.from(bytes.buffer, bytes.byteOffset, 32);
  const y =
    words.readBigUInt64LE(0) |
    (words.readBigUInt64LE(8) << 64n) |
    (words.readBigUInt64LE(16) << 128n) |
    ((words.readBigUInt64LE(24) & 0x7fff_ffff_ffff_ffffn) << 192n);
  const y2 = (y * y) % P;
  const u = (y2 - 1n + P) % P;
  // Never zero: −1/d is not a square mod p.
  const v = (D * y2 + 1n) % P;
  if (u === 0n) return signBit === 0;
  return jacobi((u * v) % P, P) === 1;
}

/** The Jacobi symbol (a/n) of an odd n > 0, by the binary algorithm. */
function jacobi(value: bigint, modulus: bigint): number {
  let a = value % modulus;
  let n = modulus;
  let symbol = 1;
  while (a !== 0n) {
    let halvings = 0;
    while ((a & 1n) === 0n) {
      a >>= 1n;
      halvings++;
    }
    // (2/n) is −1 when n ≡ 3 or 5 (mod 8).
    const residue = n & 7n;
    if (halvings % 2 === 1 && (residue === 3n || residue === 5n)) symbol = -symbol;
    // Quadratic reciprocity: swapping flips the sign when both are ≡ 3 (mod 4).
    [a, n] = [n, a];
    if ((a & 3n) === 3n && (n & 3n) === 3n) symbol = -symbol;
    a %= n;
  }
  return n === 1n ? symbol : 0;
}
