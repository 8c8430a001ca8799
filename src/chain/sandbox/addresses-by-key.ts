/**
 * Addresses grouped under one key each (an owner, a program), refiled as the key changes: the shape
 * of the chain's in-memory account indexes (token-account-index.ts, program-account-index.ts).
 */
import type { Address } from "@solana/kit";

/** Addresses under keys (see the module comment). */
export class AddressesByKey {
  private readonly byKey = new Map<string, Set<Address>>();
  private readonly keyOf = new Map<Address, string>();

  clear(): void {
    this.byKey.clear();
    this.keyOf.clear();
  }

  /** Files `address` under `key`, or drops it when `key` is undefined. */
  file(address: Address, key: string | undefined): void {
    const previous = this.keyOf.get(address);
    if (previous === key) return;
    if (previous !== undefined) {
      const group = this.byKey.get(previous);
      group?.delete(address);
      if (group?.size === 0) this.byKey.delete(previous);
      this.keyOf.delete(address);
    }
    if (key === undefined) return;
    let group = this.byKey.get(key);
    if (!group) {
      group = new Set();
      this.byKey.set(key, group);
    }
    group.add(address);
    this.keyOf.set(address, key);
  }

  /** The addresses filed under `key`. */
  under(key: string): Iterable<Address> {
    return this.byKey.get(key) ?? [];
  }

  has(address: Address): boolean {
    return this.keyOf.has(address);
  }

  /** Every address filed. */
  all(): Iterable<Address> {
    return this.keyOf.keys();
  }
}
