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
  return jacobiModP((u * v) % P) === 1;
}

// The Jacobi symbol's operands as eight little-endian 32-bit limbs, in three scratch arrays that
// trade roles: `isOnCurve` runs to the end without yielding, and BigInt arithmetic made ~60 kB of
// garbage a call.
const LIMBS = 8;
const scratch = [new Uint32Array(LIMBS), new Uint32Array(LIMBS), new Uint32Array(LIMBS)] as const;
const scratchWords = new BigUint64Array(scratch[0].buffer);
const P_LIMBS = Uint32Array.of(0xffff_ffed, ...new Array<number>(6).fill(0xffff_ffff), 0x7fff_ffff);

/**
 * The Jacobi symbol (value/p), 0 ≤ value < p, by the binary algorithm on limbs. With a and n odd,
 * a − n replaces the larger of the two (when a < n, n − a replaces a and a becomes n: reciprocity
 * flips the sign when both are ≡ 3 mod 4); then its factors of two go ((2/n) is −1 when n ≡ 3 or 5
 * mod 8). When a reaches zero the symbol is 0 unless n reached 1.
 */
function jacobiModP(value: bigint): number {
  let [a, n, spare] = scratch;
  for (let i = 0; i < 4; i++) scratchWords[i] = BigInt.asUintN(64, value >> BigInt(64 * i));
  n.set(P_LIMBS);
  let symbol = 1;
  // Limbs in use: both operands only shrink.
  let length = LIMBS;
  let zeros = trailingZeros(a, length);
  for (;;) {
    if (zeros < 0) break;
    if (zeros > 0) {
      shiftRight(a, zeros, length);
      const residue = (n[0] as number) & 7;
      if (zeros & 1 && (residue === 3 || residue === 5)) symbol = -symbol;
    }
    // spare = a − n; a borrow out of the top limb means a < n.
    let borrow = 0;
    for (let i = 0; i < length; i++) {
      const difference = (a[i] as number) - (n[i] as number) - borrow;
      spare[i] = difference;
      borrow = difference < 0 ? 1 : 0;
    }
    if (borrow === 0) {
      const old = a;
      a = spare;
      spare = old;
    } else {
      negate(spare, length);
      if (((a[0] as number) & 3) === 3 && ((n[0] as number) & 3) === 3) symbol = -symbol;
      const [oldA, oldN] = [a, n];
      a = spare;
      n = oldA;
      spare = oldN;
    }
    while (length > 1 && a[length - 1] === 0 && n[length - 1] === 0) length--;
    zeros = trailingZeros(a, length);
  }
  return isOne(n, length) ? symbol : 0;
}

// The number of trailing zero bits of `a`, or −1 when it is zero.
function trailingZeros(a: Uint32Array, length: number): number {
  for (let i = 0; i < length; i++) {
    const limb = a[i] as number;
    if (limb !== 0) return i * 32 + 31 - Math.clz32(limb & -limb);
  }
  return -1;
}

function shiftRight(a: Uint32Array, bits: number, length: number): void {
  const limbs = bits >>> 5;
  const shift = bits & 31;
  for (let i = 0; i < length; i++) {
    const low = i + limbs < length ? (a[i + limbs] as number) : 0;
    if (shift === 0) a[i] = low;
    else {
      const high = i + limbs + 1 < length ? (a[i + limbs + 1] as number) : 0;
      a[i] = (low >>> shift) | (high << (32 - shift));
    }
  }
}

// a := 2^(32·length) − a: the two's complement, which turns a − n that borrowed into n − a.
function negate(a: Uint32Array, length: number): void {
  let carry = 1;
  for (let i = 0; i < length; i++) {
    const sum = (~(a[i] as number) >>> 0) + carry;
    a[i] = sum;
    carry = sum > 0xffff_ffff ? 1 : 0;
  }
}

function isOne(n: Uint32Array, length: number): boolean {
  if (n[0] !== 1) return false;
  for (let i = 1; i < length; i++) if (n[i] !== 0) return false;
  return true;
}
