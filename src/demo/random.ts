/**
 * Seeded randomness for the demo catalogue. Every draw comes from a stream keyed by a string, so the
 * same seed always gives the same catalogue, and forking per event keeps one event's numbers
 * independent of how many other events were generated before it (a wider window at a larger scale
 * leaves the events it shares with a narrower one unchanged).
 */

/** cyrb128: four well-mixed 32-bit words from a string, enough state for sfc32. */
export function hash128(text: string): [number, number, number, number] {
  let h1 = 1_779_033_703;
  let h2 = 3_144_134_277;
  let h3 = 1_013_904_242;
  let h4 = 2_773_480_762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597_399_067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2_869_860_233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951_274_213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2_716_044_179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597_399_067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2_869_860_233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951_274_213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2_716_044_179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A deterministic stream of numbers (sfc32) named by a key; `fork` derives independent sub-streams. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(private readonly key: string) {
    [this.a, this.b, this.c, this.d] = hash128(key);
    // The first outputs of sfc32 still echo the seed words; discard them.
    for (let i = 0; i < 12; i++) this.next();
  }

  /** An independent stream for a sub-key, e.g. one event's ticker. */
  fork(label: string): Random {
    return new Random(`${this.key}/${label}`);
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  }

  /** Uniform in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with the given probability. */
  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A uniformly chosen element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("cannot pick from an empty list");
    return item;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  /** Normal draw (Box–Muller). */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.next();
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal draw with the given median, for quantities like traded volume that span decades. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(this.normal(0, sigma));
  }

  /** Index drawn with probability proportional to its weight. */
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((sum, w) => sum + w, 0);
    let target = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      target -= weights[i] as number;
      if (target < 0) return i;
    }
    return weights.length - 1;
  }
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 via erf; error < 1.5e-7, plenty for prices in cents). */
export function normalCdf(x: number, mean = 0, sd = 1): number {
  const z = (x - mean) / (sd * Math.SQRT2);
  const t = 1 / (1 + 0.327_591_1 * Math.abs(z));
  const poly =
    t *
    (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return 0.5 * (1 + (z >= 0 ? erf : -erf));
}

/** `value` limited to [min, max]. */
export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
