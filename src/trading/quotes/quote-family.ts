/**
 * Quote families: one client's firm quotes for one wallet, pair and route. Trading UIs quote again
 * every few seconds; each new quote of a family names the family's ticket (`quote-ticket.ts`), so at
 * most one of its transactions can land. The family therefore holds what its largest live quote
 * would take, once, rather than the sum of them all: re-quoting never piles up holds, and the bounds
 * count a family as one quote. Prediction-market orders hold no pool output: a family of them (no
 * ticket; each order is its own escrow) only counts once against the bounds.
 */
import type { Address } from "@solana/kit";
import type { QuoteTicket } from "./quote-ticket.js";

/** What one quote of a family would take: its input and, per leg, the output held and the input paid in. */
export interface FamilyMember {
  lastValidBlockHeight: bigint;
  inAmount: bigint;
  legs: readonly { maxOut: bigint; inAmount: bigint }[];
}

/** A firm spot quote's family as `ReservationStore.reserve` is asked for it. */
export interface FamilyRequest {
  /** Client, wallet, pair and route (`familyKeyOf`). */
  key: string;
  /**
   * The route's first pool authority: a new family's ticket is based on it. Without one the family
   * has no ticket: prediction-market orders hold nothing, so only their count is shared.
   */
  base?: Address;
  /** The seed of a ticket the caller found on the chain: that family ended, so start another. */
  landed?: string;
}

/** Live members a family remembers one by one; older ones are merged (largest of each, latest expiry). */
export const FAMILY_MEMBERS = 16;

/** The quotes of one client for `wallet` from `inputMint` to `outputMint`, whatever their route. */
export function pairKeyOf(client: string, wallet: Address, inputMint: Address, outputMint: Address): string {
  return `${client}\0${wallet}\0${inputMint}\0${outputMint}`;
}

/** The family of the quotes of `pair` (`pairKeyOf`) over pools `route`. */
export function familyKeyOf(pair: string, route: readonly Address[]): string {
  return `${pair}\0${route.join(",")}`;
}

/** The pair (`pairKeyOf`) of a family key. */
export function pairOfFamily(key: string): string {
  return key.slice(0, key.lastIndexOf("\0"));
}

/**
 * Families by pair: a re-quote is priced before its route is known, so it lends the holds of every
 * family of its pair (usually one).
 */
export class FamiliesByPair<F> {
  private readonly byPair = new Map<string, Map<string, F>>();

  get(key: string): F | undefined {
    return this.byPair.get(pairOfFamily(key))?.get(key);
  }

  set(key: string, family: F): void {
    const pair = pairOfFamily(key);
    let families = this.byPair.get(pair);
    if (!families) {
      families = new Map();
      this.byPair.set(pair, families);
    }
    families.set(key, family);
  }

  delete(key: string): void {
    const pair = pairOfFamily(key);
    const families = this.byPair.get(pair);
    if (!families?.delete(key)) return;
    if (families.size === 0) this.byPair.delete(pair);
  }

  /** The families of `pair`. */
  ofPair(pair: string): Iterable<F> {
    return this.byPair.get(pair)?.values() ?? [];
  }
}

/** Runs `price` with `holds` taken off their pools (`PoolHold.suspend`), and puts them back. */
export function withoutHolds<T>(holds: Iterable<{ suspend(): () => void }>, price: () => T): T {
  const resumes: (() => void)[] = [];
  for (const hold of holds) resumes.push(hold.suspend());
  try {
    return price();
  } finally {
    for (const resume of resumes) resume();
  }
}

/**
 * The members still live at `blockHeight` with `member` added, at most `FAMILY_MEMBERS` (the two
 * oldest merged), and what the family must hold for them: the largest of each amount.
 */
export function joinFamily(
  members: readonly FamilyMember[],
  member: FamilyMember,
  blockHeight: bigint,
): { members: FamilyMember[]; footprint: FamilyMember } {
  // A member the new one covers in every amount adds nothing: the new one expires no earlier.
  const live = members.filter(
    (m) =>
      m.lastValidBlockHeight >= blockHeight && m.legs.length === member.legs.length && !covers(member, m),
  );
  live.push(member);
  while (live.length > FAMILY_MEMBERS) {
    const [first, second] = live.splice(0, 2) as [FamilyMember, FamilyMember];
    live.unshift(largest([first, second]));
  }
  return { members: live, footprint: live.length === 1 ? member : largest(live) };
}

/** Whether `a` takes at least what `b` does, in every amount. */
function covers(a: FamilyMember, b: FamilyMember): boolean {
  if (a.inAmount < b.inAmount) return false;
  return a.legs.every((leg, i) => {
    const other = b.legs[i];
    return other !== undefined && leg.maxOut >= other.maxOut && leg.inAmount >= other.inAmount;
  });
}

/**
 * A quote joining a family whose live members are `members` (undefined: a new family): the members
 * after it, and the family's one quote from then on, `quote` and its `legs` at the largest of each
 * amount of the members.
 */
export function joinWithQuote<
  Q extends { inAmount: bigint; holds?: readonly { amount: bigint }[] },
  L extends { maxOut: bigint; inAmount: bigint },
>(
  quote: Q,
  legs: readonly L[],
  lastValidBlockHeight: bigint,
  members: readonly FamilyMember[] | undefined,
  blockHeight: bigint,
): { members: FamilyMember[]; terms: Q; legs: L[] } {
  const member: FamilyMember = {
    lastValidBlockHeight,
    inAmount: quote.inAmount,
    legs: legs.map((leg) => ({ maxOut: leg.maxOut, inAmount: leg.inAmount })),
  };
  const joined = members
    ? joinFamily(members, member, blockHeight)
    : { members: [member], footprint: member };
  const { footprint } = joined;
  return {
    members: joined.members,
    terms: {
      ...quote,
      inAmount: footprint.inAmount,
      ...(quote.holds
        ? {
            holds: quote.holds.map((hold, i) => ({
              ...hold,
              amount: footprint.legs[i]?.maxOut ?? hold.amount,
            })),
          }
        : {}),
    },
    legs: legs.map((leg, i) => ({ ...leg, ...footprint.legs[i] })),
  };
}

/** The largest of each amount of `members`, expiring with the latest of them. */
function largest(members: readonly FamilyMember[]): FamilyMember {
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  return members.reduce((a, b) => ({
    lastValidBlockHeight: max(a.lastValidBlockHeight, b.lastValidBlockHeight),
    inAmount: max(a.inAmount, b.inAmount),
    legs: a.legs.map((leg, i) => ({
      maxOut: max(leg.maxOut, b.legs[i]?.maxOut ?? 0n),
      inAmount: max(leg.inAmount, b.legs[i]?.inAmount ?? 0n),
    })),
  }));
}

/** A ticket no transaction can land on any more once the chain passes `after`: its rent can be taken back. */
export interface EndedTicket {
  ticket: QuoteTicket;
  after: bigint;
}
