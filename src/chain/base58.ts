/**
 * Base58 (Bitcoin alphabet) encoding for the sandbox's hot path: every transaction needs its
 * signature and several account addresses as text, and the generic byte-at-a-time encoder costs
 * several microseconds per address. This one works in limbs of 58^5 and 16-bit input chunks, and
 * gives exactly the same text (the tests check it against @solana/kit's codec and known vectors).
 *
 * Decoding is the mirror image (five digits at a time into 16-bit limbs) with one more duty: it reads
 * client text, so it refuses text too long for the bytes it must hold before doing any arithmetic.
 */

import type { Address, Blockhash, Signature } from "@solana/kit";
import { LRUCache } from "lru-cache";
import { WIRE_LIMITS } from "../limits.js";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const ONE = 0x31;
// Five base-58 digits per limb: 58^5 = 656,356,768 < 2^30, so limb * 65536 + carry < 2^53.
const LIMB = 656_356_768;
const LIMB_DIGITS = 5;

// Scratch space, reused: the hot path encodes one value at a time.
let limbs = new Float64Array(32);
let codes = Buffer.allocUnsafe(128);

/** The base58 text of `bytes`, as every base58 (Bitcoin alphabet) encoder gives it. */
export function encodeBase58(bytes: Uint8Array): string {
  const length = bytes.length;
  let zeros = 0;
  while (zeros < length && bytes[zeros] === 0) zeros++;
  const maxLimbs = Math.ceil(((length - zeros) * 8) / 29) + 1;
  if (limbs.length < maxLimbs) limbs = new Float64Array(maxLimbs * 2);
  // Little-endian limbs of the value, each < LIMB.
  let used = 0;
  let i = zeros;
  // An odd count of significant bytes starts with one byte, then 16-bit chunks follow.
  if ((length - i) % 2 === 1) {
    limbs[used++] = bytes[i] as number;
    i++;
  }
  for (; i < length; i += 2) {
    let carry = ((bytes[i] as number) << 8) | (bytes[i + 1] as number);
    for (let j = 0; j < used; j++) {
      const x = (limbs[j] as number) * 65_536 + carry;
      carry = Math.floor(x / LIMB);
      limbs[j] = x - carry * LIMB;
    }
    while (carry > 0) {
      const next = Math.floor(carry / LIMB);
      limbs[used++] = carry - next * LIMB;
      carry = next;
    }
  }
  const size = zeros + used * LIMB_DIGITS;
  if (codes.length < size) codes = Buffer.allocUnsafe(size * 2);
  // Digits are written from the end of `codes`, least significant first.
  let at = size;
  for (let j = 0; j < used; j++) {
    let limb = limbs[j] as number;
    const last = j === used - 1;
    for (let d = 0; d < LIMB_DIGITS; d++) {
      if (last && limb === 0) break;
      const digit = limb % 58;
      codes[--at] = CODES[digit] as number;
      limb = (limb - digit) / 58;
    }
  }
  for (let z = 0; z < zeros; z++) codes[--at] = ONE;
  return codes.toString("latin1", at, size);
}

// Account addresses repeat from one transaction to the next (payers, token accounts, programs):
// their text is remembered, keyed by the raw bytes, up to a bound.
const ADDRESS_CACHE_LIMIT = 100_000;
const addressCache = new Map<string, Address>();

/** The base58 address of a 32-byte public key (cached); a Base58Error for any other length. */
export function addressOf(key: Uint8Array): Address {
  const raw = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");
  let address = addressCache.get(raw);
  if (address === undefined) {
    const text = encodeBase58(key);
    if (!encodes32Bytes(text, key)) throw wrongLength("an address", 32, key.length);
    address = text;
    if (addressCache.size >= ADDRESS_CACHE_LIMIT) addressCache.clear();
    addressCache.set(raw, address);
  }
  return address;
}

/** The base58 text of a 64-byte signature; a Base58Error for any other length. */
export function encodeSignature(bytes: Uint8Array): Signature {
  const text = encodeBase58(bytes);
  if (!encodes64Bytes(text, bytes)) throw wrongLength("a signature", 64, bytes.length);
  return text;
}

/** The base58 text of a 32-byte blockhash; a Base58Error for any other length. */
export function encodeBlockhash(bytes: Uint8Array): Blockhash {
  const text = encodeBase58(bytes);
  if (!encodesHash(text, bytes)) throw wrongLength("a blockhash", 32, bytes.length);
  return text;
}

// The encoder's output is canonical base58 of the bytes it was given, so the byte count alone makes
// it an address, blockhash or signature: these guards brand it without decoding it again (the hot
// path encodes every transaction's signature and keys).
function encodes32Bytes(_text: string, bytes: Uint8Array): _text is Address {
  return bytes.length === 32;
}

function encodesHash(_text: string, bytes: Uint8Array): _text is Blockhash {
  return bytes.length === 32;
}

function encodes64Bytes(_text: string, bytes: Uint8Array): _text is Signature {
  return bytes.length === 64;
}

function wrongLength(what: string, size: number, length: number): Base58Error {
  return new Base58Error("size", `${what} is ${size} bytes, not ${length}`);
}

// Decoding. Client text reaches the decoder (addresses, signatures, transactions), and base58 is
// quadratic in its length: every length is bounded before the first digit is read.

// The value of each alphabet character by char code; 255 for characters outside the alphabet.
const DIGITS = new Uint8Array(128).fill(255);
for (let i = 0; i < ALPHABET.length; i++) DIGITS[ALPHABET.charCodeAt(i)] = i;
// Five digits at a time into 16-bit limbs: limb * 58^5 + carry < 2^16 * 2^30 + 2^31 < 2^53.
const POWERS = [1, 58, 3_364, 195_112, 11_316_496, LIMB];
const BYTE_DIGITS = Math.log(256) / Math.log(58);

/** Why base58 text was refused: too long (or short) for what it must hold, or not base58 at all. */
export class Base58Error extends Error {
  constructor(
    readonly kind: "size" | "character",
    message: string,
  ) {
    super(message);
    this.name = "Base58Error";
  }
}

/**
 * The most characters base58 text of at most `bytes` bytes can have. It is exact: any longer text
 * decodes to more than `bytes` bytes, so refusing it by length refuses nothing valid.
 */
export function maxBase58Chars(bytes: number): number {
  return Math.ceil(bytes * BYTE_DIGITS);
}

// Scratch limbs of the decoder, reused like the encoder's.
let decodeLimbs = new Float64Array(64);

/**
 * The bytes of base58 `text`, exactly as any base58 decoder gives them, refusing with a Base58Error text
 * that cannot fit in `maxBytes`: by its length before any arithmetic (so a 100,000-character input
 * costs nothing), or by its value.
 */
export function decodeBase58(text: string, maxBytes: number): Uint8Array {
  const length = text.length;
  if (length > maxBase58Chars(maxBytes)) {
    throw new Base58Error("size", `base58 text of ${length} characters exceeds ${maxBytes} bytes`);
  }
  let zeros = 0;
  while (zeros < length && text.charCodeAt(zeros) === ONE) zeros++;
  const maxLimbs = Math.ceil((length - zeros) / 2) + 2;
  if (decodeLimbs.length < maxLimbs) decodeLimbs = new Float64Array(maxLimbs * 2);
  const limbs = decodeLimbs;
  // Little-endian 16-bit limbs of the value; the first chunk takes the odd digits, then fives.
  let used = 0;
  let i = zeros;
  while (i < length) {
    const take = i === zeros ? (length - zeros) % 5 || 5 : 5;
    let chunk = 0;
    for (const end = i + take; i < end; i++) {
      const code = text.charCodeAt(i);
      const digit = code < 128 ? (DIGITS[code] as number) : 255;
      if (digit === 255) throw new Base58Error("character", `invalid base58 character at ${i}`);
      chunk = chunk * 58 + digit;
    }
    const power = POWERS[take] as number;
    let carry = chunk;
    for (let j = 0; j < used; j++) {
      const x = (limbs[j] as number) * power + carry;
      carry = Math.floor(x / 65_536);
      limbs[j] = x - carry * 65_536;
    }
    while (carry > 0) {
      const next = Math.floor(carry / 65_536);
      limbs[used++] = carry - next * 65_536;
      carry = next;
    }
  }
  // The value's big-endian bytes without leading zero bytes, after the zero bytes the '1's stand for.
  let significant = used * 2;
  if (used > 0 && (limbs[used - 1] as number) < 256) significant--;
  if (zeros + significant > maxBytes) {
    throw new Base58Error("size", `base58 text decodes to more than ${maxBytes} bytes`);
  }
  const bytes = new Uint8Array(zeros + significant);
  let at = bytes.length;
  for (let j = 0; j < used; j++) {
    const limb = limbs[j] as number;
    bytes[--at] = limb & 0xff;
    if (at > zeros) bytes[--at] = limb >>> 8;
  }
  return bytes;
}

/** Decodes base58 text of exactly `size` bytes whose length lies in `chars`; Base58Error otherwise. */
function decodeExact(text: string, size: number, chars: { min: number; max: number }, what: string) {
  if (text.length < chars.min || text.length > chars.max) {
    throw new Base58Error("size", `${what} must be ${chars.min} to ${chars.max} base58 characters`);
  }
  const bytes = decodeBase58(text, size);
  if (bytes.length !== size) throw new Base58Error("size", `${what} must be ${size} bytes`);
  return bytes;
}

/** The 32 bytes of a base58 address (32 to 44 characters); a Base58Error when it is not one. */
export function decodeAddressBytes(text: string): Uint8Array {
  return decodeExact(text, 32, WIRE_LIMITS.addressChars, "an address");
}

// Addresses recur (mints, programs, vaults, payers): their bytes are remembered, up to a bound. Counted
// through maxSize, not max, which would allocate all 100,000 slots at start (as the other large caches).
const addressBytesCache = new LRUCache<string, Uint8Array>({ maxSize: 100_000, sizeCalculation: () => 1 });

/**
 * The 32 bytes of a base58 address, remembered for the next time (shared: never write to them); a
 * Base58Error when it is not one.
 */
export function addressBytes(text: string): Uint8Array {
  let bytes = addressBytesCache.get(text);
  if (bytes === undefined) {
    bytes = decodeAddressBytes(text);
    addressBytesCache.set(text, bytes);
  }
  return bytes;
}

/** Whether `text` is base58 of exactly 32 bytes (kit's `isAddress` checks the same with BigInt arithmetic). */
export function isAddressText(text: string): text is Address {
  try {
    addressBytes(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * `text` as an Address, checked by the decoder above (about 30 times faster than kit's `address()`);
 * a Base58Error when it is not base58 of exactly 32 bytes.
 */
export function parseAddress(text: string): Address {
  assertAddressText(text);
  return text;
}

function assertAddressText(text: string): asserts text is Address {
  addressBytes(text);
}

/**
 * `text` as an Address, checked as parseAddress checks it but not remembered: for bulk loads (a
 * catalogue's hundreds of thousands of addresses, most never used again), which would otherwise fill
 * the cache with them and evict the addresses transactions use.
 */
export function parseAddressUncached(text: string): Address {
  assertDecodesToAddress(text);
  return text;
}

function assertDecodesToAddress(text: string): asserts text is Address {
  decodeAddressBytes(text);
}

/** The 64 bytes of a base58 signature (64 to 88 characters); a Base58Error when it is not one. */
export function decodeSignatureBytes(text: string): Uint8Array {
  return decodeExact(text, 64, WIRE_LIMITS.signatureChars, "a signature");
}

/** Whether `text` is base58 of exactly 64 bytes. */
export function isSignatureText(text: string): text is Signature {
  try {
    decodeSignatureBytes(text);
    return true;
  } catch {
    return false;
  }
}

/** `text` as a Signature; a Base58Error when it is not base58 of exactly 64 bytes. */
export function parseSignature(text: string): Signature {
  assertSignatureText(text);
  return text;
}

function assertSignatureText(text: string): asserts text is Signature {
  decodeSignatureBytes(text);
}
