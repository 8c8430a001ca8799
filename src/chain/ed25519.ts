/**
 * Ed25519 keypairs through `node:crypto` in solana-keygen's format: a JSON array of 64 bytes, the
 * 32-byte seed then the public key.
 */
import crypto from "node:crypto";
import type { Address } from "@solana/kit";
import bs58 from "bs58";

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI (public) or PKCS#8 (private).
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
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
 * The keypair of a 32-byte Ed25519 seed (for keys derived from a secret rather than stored). Costs
 * about 0.7 ms (OpenSSL's key import and public-key derivation): callers on hot paths cache.
 */
export function keypairFromSeed(seed: Uint8Array): Keypair {
  if (seed.length !== 32) throw new Error("an Ed25519 seed is 32 bytes");
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const spki = crypto.createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  return {
    address: bs58.encode(publicKey) as Address,
    publicKey,
    secretKey,
    sign: (message) => new Uint8Array(crypto.sign(null, message, privateKey)),
  };
}

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message`. */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = crypto.createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, publicKey]),
    format: "der",
    type: "spki",
  });
  return crypto.verify(null, message, key, signature);
}
