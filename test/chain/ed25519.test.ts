import crypto from "node:crypto";
import { createKeyPairFromPrivateKeyBytes, getAddressFromPublicKey } from "@solana/kit";
import { describe, expect, it } from "vitest";
import {
  generateKeypair,
  keypairFromSecretKey,
  keypairFromSeed,
  verifySignature,
} from "../../src/chain/ed25519.js";

describe("ed25519 keypairs", () => {
  it("derives from a seed the same address as kit (WebCrypto) does", async () => {
    for (let i = 0; i < 20; i++) {
      const seed = crypto.randomBytes(32);
      const ours = keypairFromSeed(seed);
      const kit = await createKeyPairFromPrivateKeyBytes(seed);
      expect(ours.address).toBe(await getAddressFromPublicKey(kit.publicKey));
      expect(keypairFromSecretKey(ours.secretKey).address).toBe(ours.address);
    }
  });

  it("verifies its own signatures and refuses any other key, message or signature", () => {
    const keypair = generateKeypair();
    const other = generateKeypair();
    const message = crypto.randomBytes(300);
    const signature = keypair.sign(message);
    expect(verifySignature(keypair.publicKey, message, signature)).toBe(true);
    // The second check of the same key reads it from the cache, with the same answer.
    expect(verifySignature(keypair.publicKey, message, signature)).toBe(true);
    expect(verifySignature(other.publicKey, message, signature)).toBe(false);
    const altered = Uint8Array.from(message);
    altered[0] = (altered[0] as number) ^ 1;
    expect(verifySignature(keypair.publicKey, altered, signature)).toBe(false);
    const forged = Uint8Array.from(signature);
    forged[10] = (forged[10] as number) ^ 1;
    expect(verifySignature(keypair.publicKey, message, forged)).toBe(false);
    expect(verifySignature(new Uint8Array(31), message, signature)).toBe(false);
    expect(verifySignature(new Uint8Array(32).fill(255), message, signature)).toBe(false);
  });
});
