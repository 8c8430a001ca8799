/**
 * The venue's own keys, created on first start in `DATA_DIR/chain/` as solana-keygen files (mode
 * 0600): on the sandbox chain the mint authority of USDC, CASH, the demo tokens and every outcome mint,
 * and the treasury that pays fees and airdrops; off it, the key that signs HTTP responses (contract §10).
 * Their secrets are never logged.
 */
import path from "node:path";
import { createKeyPairSignerFromBytes, type KeyPairSigner } from "@solana/kit";
import type { Keypair } from "./ed25519.js";
import { loadOrCreateKeypair, readKeypairFile } from "./keypair-file.js";

export interface VenueKeys {
  mintAuthority: Keypair;
  treasury: Keypair;
}

export interface VenueSigners {
  mintAuthority: KeyPairSigner;
  treasury: KeyPairSigner;
}

/** The directory under DATA_DIR that holds the venue's chain keys. */
export function venueKeyDir(dataDir: string): string {
  return path.join(dataDir, "chain");
}

/** Loads the venue's keys from DATA_DIR, creating any that do not exist yet. */
export function loadVenueKeys(dataDir: string): VenueKeys {
  const dir = venueKeyDir(dataDir);
  return {
    mintAuthority: loadOrCreateKeypair(path.join(dir, "mint-authority.json")),
    treasury: loadOrCreateKeypair(path.join(dir, "treasury.json")),
  };
}

/** Where the venue's response-signing key is kept under DATA_DIR. */
export function responseSigningKeyFile(dataDir: string): string {
  return path.join(venueKeyDir(dataDir), "response-signing.json");
}

/**
 * The venue's ed25519 key for signing HTTP responses. With `file` (an operator's key file, which must
 * exist) every instance given the same file signs with the same key; without it the key is
 * DATA_DIR/chain/response-signing.json, created on first start, so instances sharing DATA_DIR/chain/
 * (as they must for the pools) share it too. It is its own key: no chain key ever signs HTTP answers.
 */
export function loadResponseSigningKey(dataDir: string, file?: string): Keypair {
  return file === undefined ? loadOrCreateKeypair(responseSigningKeyFile(dataDir)) : readKeypairFile(file);
}

/** The venue's keys as kit signers. */
export async function venueSigners(keys: VenueKeys): Promise<VenueSigners> {
  const [mintAuthority, treasury] = await Promise.all([
    createKeyPairSignerFromBytes(keys.mintAuthority.secretKey),
    createKeyPairSignerFromBytes(keys.treasury.secretKey),
  ]);
  return { mintAuthority, treasury };
}
