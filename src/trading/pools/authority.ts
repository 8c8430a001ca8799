/**
 * Pool authorities: each pool's vaults are the associated token accounts of its own authority, whose
 * key is derived from one root secret in `DATA_DIR/chain/pool-authority-root.json` (mode 0600) and
 * the pool's public key id. Nothing secret is stored in the database; every instance that serves
 * firm quotes for the pools needs the same root file.
 */
import { createHmac } from "node:crypto";
import path from "node:path";
import { type Keypair, keypairFromSeed } from "../../chain/ed25519.js";
import { loadOrCreateKeypair } from "../../chain/keypair-file.js";
import { venueKeyDir } from "../../chain/sandbox/venue-keys.js";

/** Derives pool authority keypairs from the venue's root secret. */
export class PoolAuthorities {
  private readonly cache = new Map<string, Keypair>();

  constructor(private readonly rootSeed: Uint8Array) {}

  /** Loads the root secret from DATA_DIR, creating it on first use. */
  static load(dataDir: string): PoolAuthorities {
    const root = loadOrCreateKeypair(path.join(venueKeyDir(dataDir), "pool-authority-root.json"));
    return new PoolAuthorities(root.secretKey.subarray(0, 32));
  }

  /** The authority keypair of the pool with this key id. */
  authority(keyId: string): Keypair {
    let keypair = this.cache.get(keyId);
    if (!keypair) {
      const seed = createHmac("sha256", this.rootSeed).update(`oddsgate/pool\0${keyId}`).digest();
      keypair = keypairFromSeed(seed);
      this.cache.set(keyId, keypair);
    }
    return keypair;
  }
}
