/**
 * Positions of a pair stream (`/quote-stream`, `/book-stream`), so that a client can resume: every set
 * of pair values the stream serves is a *publication* with a position (`seq`), and each pair's value
 * carries the position from which it has held (`changedAt`). A client that saw position `p` has every
 * value as of `p`, so on resuming it needs only the pairs whose `changedAt` is after `p`: for these
 * streams what was missed is each pair's latest value, not every value in between.
 *
 * Positions are issued by whoever prices: the hub itself on a single instance, the leader with Redis
 * (`shared-quotes.ts`), which publishes them to every instance, so a position means the same on each.
 * A position is the issuing time in Unix ms, kept strictly increasing (a new leader continues after
 * the last position it heard), and a new one is issued only when some value is new or changed. A pair
 * that was not priced in the previous publication counts as changed whatever its value, so a value
 * said to hold from `p` was seen continuously since `p`. Positions issued within `retentionMs` (and
 * the latest, however old) are remembered: a resume from any other (too old, from the future, from
 * another deployment or process) is answered with a gap and a fresh snapshot.
 */

/** How long issued positions are remembered for resuming, at least (the streams issue's floor is 60 s). */
export const DEFAULT_PAIR_RETENTION_MS = 120_000;

/** A pair's serialized update and the position from which it has held. */
export interface PairValue {
  readonly json: string;
  readonly changedAt: number;
}

/** One position's values: pair key (`base|quote`) → its value. */
export interface Publication {
  readonly seq: number;
  readonly values: ReadonlyMap<string, PairValue>;
}

/** The positions a pair stream issued or heard of, and its latest publication. */
export class PairPositions {
  private head: Publication | undefined;
  /** Positions remembered for resuming, in increasing order (a position is its issuing time, ms). */
  private remembered: number[] = [];

  constructor(
    private readonly retentionMs = DEFAULT_PAIR_RETENTION_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The latest publication (undefined before the first). */
  get latest(): Publication | undefined {
    return this.head;
  }

  /**
   * Publishes the values of every pair priced now (pair key → serialized update): a new position when
   * a value is new or changed since the previous publication, else the previous one.
   */
  issue(values: ReadonlyMap<string, string>): Publication {
    const previous = this.head;
    // After every position known here, the latest heard or read from Redis: another instance's clock may be ahead.
    const last = Math.max(previous?.seq ?? 0, this.remembered.at(-1) ?? 0);
    const next = Math.max(this.now(), last + 1);
    let changed = previous === undefined;
    const out = new Map<string, PairValue>();
    for (const [key, json] of values) {
      const before = previous?.values.get(key);
      if (before !== undefined && before.json === json) out.set(key, before);
      else {
        changed = true;
        out.set(key, { json, changedAt: next });
      }
    }
    const publication = { seq: changed || !previous ? next : previous.seq, values: out };
    this.adopt(publication);
    return publication;
  }

  /** Takes a publication heard from the leader; one older than the latest (a late message) is ignored. */
  adopt(publication: Publication): void {
    if (this.head && publication.seq < this.head.seq) return;
    this.head = publication;
    this.remember([publication.seq]);
  }

  /** Remembers positions issued elsewhere (read from Redis by an instance that just started). */
  remember(positions: Iterable<number>): void {
    for (const seq of positions) {
      const last = this.remembered.at(-1);
      if (last === undefined || seq > last) this.remembered.push(seq);
      else if (seq < last && !this.remembered.includes(seq)) {
        this.remembered.push(seq);
        this.remembered.sort((a, b) => a - b);
      }
    }
    this.trim();
  }

  /** Whether a client at `since` can resume here: a position issued within the retention (or the latest). */
  knows(since: number): boolean {
    if (since === this.head?.seq) return true;
    this.trim();
    return binarySearch(this.remembered, since);
  }

  /** Forgets positions older than the retention (positions are issuing times, so their age is known). */
  private trim(): void {
    const floor = this.now() - this.retentionMs;
    let drop = 0;
    while (drop < this.remembered.length && (this.remembered[drop] as number) < floor) drop += 1;
    if (drop > 0) this.remembered = this.remembered.slice(drop);
  }
}

function binarySearch(sorted: readonly number[], value: number): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = sorted[middle] as number;
    if (at === value) return true;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}
