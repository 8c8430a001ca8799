/**
 * The venue's own keys on the sandbox chain, created on first start in `DATA_DIR/chain/` as
 * solana-keygen files (mode 0600): the mint authority of USDC, the demo tokens and every outcome
 * mint, and the treasury that pays fees and airdrops. Their secrets are never logged.
 */
import path from "node:path";
import { createKeyPairSignerFromBytes, type KeyPairSigner } from "@solana/kit";
import type { Keypair } from "./ed25519.js";
import { loadOrCreateKeypair } from "./keypair-file.js";

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

/** The venue's keys as kit signers. */
export async function venueSigners(keys: VenueKeys): Promise<VenueSigners> {
  const [mintAuthority, treasury] = await Promise.all([
    createKeyPairSignerFromBytes(keys.mintAuthority.secretKey),
    createKeyPairSignerFromBytes(keys.treasury.secretKey),
  ]);
  return { mintAuthority, treasury };
}
