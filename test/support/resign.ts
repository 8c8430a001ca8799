/**
 * The replay attacker's tool: a second, equally valid signature of a message already signed. Ed25519
 * as RFC 8032 (and node:crypto, and every wallet) signs deterministically, but a verifier accepts any
 * nonce, so whoever holds a key can sign one message as often as they like, each time differently.
 */
import crypto from "node:crypto";
import { ed25519 } from "@noble/curves/ed25519";
import { createKeyPairSignerFromPrivateKeyBytes, type KeyPairSigner } from "@solana/kit";
import { expect } from "vitest";
import { verifySignature } from "../../src/chain/ed25519.js";
import { parseWireTransaction } from "../../src/chain/wire.js";

/** A kit signer whose seed the test keeps, so that it can re-sign what it signed. */
export interface ResignableSigner {
  signer: KeyPairSigner;
  seed: Uint8Array;
}

export async function newResignableSigner(): Promise<ResignableSigner> {
  const seed = new Uint8Array(crypto.randomBytes(32));
  return { signer: await createKeyPairSignerFromPrivateKeyBytes(seed), seed };
}

const ORDER = ed25519.CURVE.n;

function scalarOf(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).reverse().toString("hex") || "0"}`) % ORDER;
}

function scalarBytes(scalar: bigint): Uint8Array {
  return new Uint8Array(Buffer.from(scalar.toString(16).padStart(64, "0"), "hex").reverse());
}

/** A valid Ed25519 signature of `message` by `seed`'s key, with a random nonce. */
export function signWithFreshNonce(seed: Uint8Array, message: Uint8Array): Uint8Array {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(seed);
  const nonce = scalarOf(crypto.randomBytes(64));
  const commitment = ed25519.Point.BASE.multiply(nonce).toBytes();
  const challenge = scalarOf(
    crypto.createHash("sha512").update(commitment).update(pointBytes).update(message).digest(),
  );
  const signature = new Uint8Array(64);
  signature.set(commitment, 0);
  signature.set(scalarBytes((nonce + challenge * scalar) % ORDER), 32);
  return signature;
}

/**
 * `transaction` (base64 wire, already signed by `wallet`) with `wallet`'s signature replaced by a
 * fresh one: the same message, another valid transaction id when `wallet` pays the fee. Base64.
 */
export function resign(transaction: string, wallet: ResignableSigner): string {
  const wire = new Uint8Array(Buffer.from(transaction, "base64"));
  const tx = parseWireTransaction(wire);
  const index = tx.accountKeys
    .slice(0, tx.header.numRequiredSignatures)
    .findIndex((key) => Buffer.from(key).equals(Buffer.from(ed25519.getPublicKey(wallet.seed))));
  if (index < 0) throw new Error("the wallet is not a signer of this transaction");
  const signature = signWithFreshNonce(wallet.seed, tx.message);
  expect(verifySignature(tx.accountKeys[index] as Uint8Array, tx.message, signature)).toBe(true);
  expect(Buffer.from(signature).equals(Buffer.from(tx.signatures[index] as Uint8Array))).toBe(false);
  // The signatures follow a one-byte count (fewer than 128 signers).
  wire.set(signature, 1 + index * 64);
  return Buffer.from(wire).toString("base64");
}
