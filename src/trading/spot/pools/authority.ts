/**
 * The venue's derived keys. Each pool's vaults are the associated token accounts of its own
 * authority, and each order's escrow those of its own; their keys are derived from one root secret in
 * `DATA_DIR/chain/pool-authority-root.json` (mode 0600) and a public id, and the same secret seals the
 * intents the venue issues. Nothing secret is stored in the database; every instance that quotes firm
 * or settles orders needs the same root file.
 */
import { createHmac } from "node:crypto";
import path from "node:path";
import { LRUCache } from "lru-cache";
import { type Keypair, keypairFromSeed } from "../../../chain/ed25519.js";
import { loadOrCreateKeypair } from "../../../chain/keypair-file.js";
import { venueKeyDir } from "../../../chain/venue-keys.js";

/** Derives pool authority keypairs from the venue's root secret. */
export class PoolAuthorities {
  private readonly cache = new Map<string, Keypair>();
  /** Order keys recently derived: an order's are needed at quote, submission and settlement. */
  // Counted through maxSize: max would allocate all its slots at start (see base58.ts's cache).
  private readonly orders = new LRUCache<string, Keypair>({ maxSize: 50_000, sizeCalculation: () => 1 });

  constructor(private readonly rootSeed: Uint8Array) {}

  /** Loads the root secret from DATA_DIR, creating it on first use. */
  static load(dataDir: string): PoolAuthorities {
    const root = loadOrCreateKeypair(path.join(venueKeyDir(dataDir), "pool-authority-root.json"));
    return new PoolAuthorities(root.secretKey.subarray(0, 32));
  }

  /** The authority keypair of the pool with this key id. */
  authority(keyId: string): Keypair {
    return this.derive("pool", keyId);
  }

  /** The escrow authority keypair of the order with this id (kept a while: quote, submit and settle use it). */
  orderAuthority(orderId: string): Keypair {
    let keypair = this.orders.get(orderId);
    if (!keypair) {
      keypair = keypairFromSeed(
        createHmac("sha256", this.rootSeed).update(`oddsgate/order\0${orderId}`).digest(),
      );
      this.orders.set(orderId, keypair);
    }
    return keypair;
  }

  /** A tag proving the venue issued `text` (an intent's terms): hex HMAC-SHA256 under the root secret. */
  seal(text: string): string {
    return createHmac("sha256", this.rootSeed).update(`oddsgate/intent\0${text}`).digest("hex");
  }

  private derive(domain: string, id: string): Keypair {
    const key = `${domain}\0${id}`;
    let keypair = this.cache.get(key);
    if (!keypair) {
      keypair = keypairFromSeed(createHmac("sha256", this.rootSeed).update(`oddsgate/${key}`).digest());
      this.cache.set(key, keypair);
    }
    return keypair;
  }
}
