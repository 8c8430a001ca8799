/**
 * A lookup from account addresses to small integers that keeps no keys of its own: each value names
 * where its owner keeps the address (a market's rail and part, say), and the owner's `keyOf` reads it
 * back to confirm a hit. A Map costs ~47 bytes an entry at this size; this table 8-16 (an Int32Array
 * at most half full), which at 50,000 markets' 300,000 rail addresses is ~12 MB less heap, and five
 * times that at 250,000. Open addressing with linear probing on an FNV-1a hash of the text: keys come
 * from the venue's own catalogue, and a caller can only ask, so clusters stay as the hash makes them.
 */

const EMPTY = -1;
const MIN_CAPACITY = 16;

/** The smallest power of two (at least MIN_CAPACITY) that holds `count` addresses at most half full. */
function capacityFor(count: number): number {
  let capacity = MIN_CAPACITY;
  while (capacity < count * 2) capacity *= 2;
  return capacity;
}

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** Addresses to non-negative integers, confirmed through `keyOf` (see the module comment). */
export class AddressIndex {
  private slots: Int32Array;
  private count = 0;

  /**
   * `keyOf(value)` is the address stored under `value`; values are integers in [0, 2^31). Room is made
   * for `expected` addresses at once, so that building a large index does not rehash on the way.
   */
  constructor(
    private readonly keyOf: (value: number) => string,
    expected = 0,
  ) {
    this.slots = new Int32Array(capacityFor(expected)).fill(EMPTY);
  }

  /** Makes room for `total` addresses in all, so that adding up to that many does not rehash on the way. */
  reserve(total: number): void {
    if (capacityFor(total) > this.slots.length) this.rehash(capacityFor(total));
  }

  /** How many addresses are indexed. */
  get size(): number {
    return this.count;
  }

  /** The value stored for `address`, if any. */
  get(address: string): number | undefined {
    const mask = this.slots.length - 1;
    for (let slot = hashOf(address) & mask; ; slot = (slot + 1) & mask) {
      const value = this.slots[slot] as number;
      if (value === EMPTY) return undefined;
      if (this.keyOf(value) === address) return value;
    }
  }

  has(address: string): boolean {
    return this.get(address) !== undefined;
  }

  /** Stores `value` for `address` (whose `keyOf(value)` must be `address`), unless it is there already; returns whether it was added. */
  add(address: string, value: number): boolean {
    if (!Number.isInteger(value) || value < 0 || value > 0x7fffffff)
      throw new RangeError(`an address index holds integers in [0, 2^31), not ${value}`);
    // One probe finds either the address or the free slot it would take: each text is hashed once.
    const mask = this.slots.length - 1;
    let slot = hashOf(address) & mask;
    for (let held = this.slots[slot] as number; held !== EMPTY; held = this.slots[slot] as number) {
      if (this.keyOf(held) === address) return false;
      slot = (slot + 1) & mask;
    }
    if ((this.count + 1) * 2 > this.slots.length) {
      this.rehash(this.slots.length * 2);
      this.place(address, value);
    } else this.slots[slot] = value;
    this.count++;
    return true;
  }

  private place(address: string, value: number): void {
    const mask = this.slots.length - 1;
    let slot = hashOf(address) & mask;
    while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.slots[slot] = value;
  }

  private rehash(capacity: number): void {
    const old = this.slots;
    this.slots = new Int32Array(capacity).fill(EMPTY);
    for (const value of old) if (value !== EMPTY) this.place(this.keyOf(value), value);
  }
}
