/**
 * Ed25519 keypairs through `node:crypto` in solana-keygen's format: a JSON array of 64 bytes, the
 * 32-byte seed then the public key.
 */
import crypto from "node:crypto";
import type { Address } from "@solana/kit";
import { addressOf } from "./base58.js";

// The DER prefix that wraps a raw 32-byte Ed25519 seed as PKCS#8.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
/** A keypair held as Node key objects, with its raw 64-byte solana-keygen form. */
export interface Keypair {
  address: Address;
  publicKey: Uint8Array;
  /** seed ‖ public key, as solana-keygen writes it. */
  secretKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

/** Rebuilds a keypair from solana-keygen's 64 bytes; throws when the halves do not match. */
export function keypairFromSecretKey(secretKey: Uint8Array): Keypair {
  if (secretKey.length !== 64) throw new Error("a keypair is 64 bytes: a 32-byte seed and its public key");
  const keypair = keypairFromSeed(secretKey.subarray(0, 32));
  if (!Buffer.from(keypair.publicKey).equals(Buffer.from(secretKey.subarray(32)))) {
    throw new Error("the keypair's public half does not belong to its seed");
  }
  return keypair;
}

/** A fresh random keypair. */
export function generateKeypair(): Keypair {
  return keypairFromSeed(crypto.randomBytes(32));
}

/**
 * The keypair of a 32-byte Ed25519 seed (for keys derived from a secret rather than stored). About
 * 35 µs; callers on hot paths still cache.
 */
export function keypairFromSeed(seed: Uint8Array): Keypair {
  if (seed.length !== 32) throw new Error("an Ed25519 seed is 32 bytes");
  const privateKey = importSeed(seed);
  const publicKey = new Uint8Array(
    Buffer.from(crypto.createPublicKey(privateKey).export({ format: "jwk" }).x as string, "base64url"),
  );
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  return {
    address: addressOf(publicKey),
    publicKey,
    secretKey,
    sign: (message) => new Uint8Array(crypto.sign(null, message, privateKey)),
  };
}

// OpenSSL's DER (PKCS#8) import costs ~390 µs here, its JWK import ~30 µs. A JWK must carry the
// public half `x`, which Node (20 and 22) derives from `d` instead of reading; should a later Node
// check an empty `x` against `d`, the import throws and the DER form is used.
function importSeed(seed: Uint8Array): crypto.KeyObject {
  try {
    const d = Buffer.from(seed).toString("base64url");
    return crypto.createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d, x: "" }, format: "jwk" });
  } catch {
    return crypto.createPrivateKey({
      key: Buffer.concat([PKCS8_PREFIX, seed]),
      format: "der",
      type: "pkcs8",
    });
  }
}

// Public keys verify many signatures (a wallet's every transaction): each is imported once (JWK,
// ~7 µs, against ~75 µs as SPKI DER), up to a bound.
const PUBLIC_KEY_CACHE_LIMIT = 10_000;
const publicKeys = new Map<string, crypto.KeyObject>();

function importPublicKey(publicKey: Uint8Array): crypto.KeyObject {
  const x = Buffer.from(publicKey).toString("base64url");
  let key = publicKeys.get(x);
  if (key === undefined) {
    key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
    if (publicKeys.size >= PUBLIC_KEY_CACHE_LIMIT) publicKeys.clear();
    publicKeys.set(x, key);
  }
  return key;
}

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message`. */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return crypto.verify(null, message, importPublicKey(publicKey), signature);
  } catch {
    // Bytes that are no public key sign nothing.
    return false;
  }
}
