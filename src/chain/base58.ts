/**
 * Base58 (Bitcoin alphabet) encoding for the sandbox's hot path: every transaction needs its
 * signature and several account addresses as text, and the generic byte-at-a-time encoder costs
 * several microseconds per address. This one works in limbs of 58^5 and 16-bit input chunks, and
 * gives exactly the same text (it is checked against `bs58` in the tests).
 */

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const ONE = 0x31;
// Five base-58 digits per limb: 58^5 = 656,356,768 < 2^30, so limb * 65536 + carry < 2^53.
const LIMB = 656_356_768;
const LIMB_DIGITS = 5;

// Scratch space, reused: the hot path encodes one value at a time.
let limbs = new Float64Array(32);
let codes = Buffer.allocUnsafe(128);

/** The base58 text of `bytes`, as `bs58.encode` gives it. */
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
const addressCache = new Map<string, string>();

/** The base58 address of a 32-byte public key (cached). */
export function addressOf(key: Uint8Array): string {
  const raw = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");
  let address = addressCache.get(raw);
  if (address === undefined) {
    address = encodeBase58(key);
    if (addressCache.size >= ADDRESS_CACHE_LIMIT) addressCache.clear();
    addressCache.set(raw, address);
  }
  return address;
}
