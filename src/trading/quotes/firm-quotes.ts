/**
 * The firm quotes an instance has outstanding. A firm quote holds pool output until its transaction
 * lands or its blockhash expires, so holding must cost the holder something: a quote is admitted only
 * while its wallet holds the input on the chain beyond what every live quote for that wallet already
 * spends, whichever client asked for it (a wallet's funds back its quotes once), while the client
 * asking (API key, or address without one) stays under its bounds of live quotes, per wallet and in
 * all, and under a share of each pool's reserve, and while all quotes together hold no more than a
 * pool-wide share of it: that share bounds how far quotes never paid move anyone else's price. Anyone
 * may name any wallet, so a client refused a wallet's funds because other clients' quotes hold them
 * waits in line for them (funds-line.ts) and gets them within a blockhash lifetime. A quote stops
 * counting once every pool it holds output of has delivered it, or its blockhash has expired.
 *
 * `ReservationStore` is where that bookkeeping lives: `FirmQuotes` here for one instance, or
 * `RedisReservations` when several instances must not promise the same tokens twice.
 */
import type { Address } from "@solana/kit";
import type { PoolHold, SyncMarket } from "../spot/market.js";
import { FundsLine } from "./funds-line.js";
import {
  type EndedTicket,
  FamiliesByPair,
  type FamilyMember,
  type FamilyRequest,
  joinWithQuote,
  withoutHolds,
} from "./quote-family.js";
import { newTicketSeed, type QuoteTicket, quoteTicket } from "./quote-ticket.js";

export { TURN_GRACE_BLOCKS } from "./funds-line.js";

export interface FirmQuoteLimits {
  /** Live firm quotes one client may have for one wallet (0: unbounded). */
  perWallet: number;
  /** Live firm quotes asked for by one client (0: unbounded). */
  perClient: number;
  /** The most of a pool side's reserve one client's live quotes may hold, in basis points (0: unbounded). */
  poolShareBps?: number;
  /** The most of a pool side's reserve all live quotes together may hold, in basis points (0: unbounded). */
  poolHoldBps?: number;
}

/** Output a quote would hold: `amount` of the side `side` (a pool and its output mint) whose reserve is `reserve`. */
export interface QuoteHold {
  side: string;
  amount: bigint;
  reserve: bigint;
}

/** What a firm quote spends, and who asks for it. */
export interface FirmQuoteTerms {
  wallet: Address;
  client: string;
  inputMint: Address;
  inAmount: bigint;
  /** The pool output it holds (none for an async order, which holds nothing but still counts). */
  holds?: readonly QuoteHold[];
}

interface FirmQuote extends FirmQuoteTerms {
  holds: readonly QuoteHold[];
  /** The family whose footprint this quote carries, while it does. */
  family: Family | undefined;
  /** Its client and wallet, the key of the quotes counted together. */
  walletKey: string;
  lastValidBlockHeight: bigint;
  /** Holds not yet closed; the quote ends when none is left (undefined until they are attached). */
  openHolds: number | undefined;
  live: boolean;
}

/** A quote admitted and already counted: attach the pool output it holds, or cancel it if it is not issued. */
export interface AdmittedQuote {
  /** The quote now ends when every hold has closed, or at its expiry. */
  attach(holds: readonly PoolHold[]): void;
  /** Not issued after all: it stops counting at once. */
  cancel(): void;
}

/** One leg of a firm quote: `maxOut` of `outputMint` its pool holds for it, paid `inAmount` of the other mint. */
export interface PoolLeg {
  pool: SyncMarket;
  outputMint: Address;
  maxOut: bigint;
  inAmount: bigint;
}

/**
 * A firm quote admitted and its pools' output held (`holds`, one per leg); `cancel` gives back what it
 * alone holds.
 */
export interface ReservedQuote extends AdmittedQuote {
  readonly holds: readonly PoolHold[];
  /** Its family's ticket, which its transaction must open (a quote reserved with a family only). */
  readonly ticket?: QuoteTicket;
}

/** One quote family in this process: its ticket, live members, the quote carrying its footprint, and its holds. */
interface Family {
  key: string;
  ticket: QuoteTicket | undefined;
  members: FamilyMember[];
  record: FirmQuote;
  holds: readonly PoolHold[];
  /** Whether any of its transactions was issued (a family none was issued for has no rent to take back). */
  issued: boolean;
}

/**
 * Where firm quotes are counted and their output held: `FirmQuotes` in this process (one instance),
 * or `RedisReservations` (reservations-redis.ts) shared by every instance on one Redis.
 */
export interface ReservationStore {
  /**
   * Marks where pricing starts; `reserve` given it refuses with `ReservationConflict` when another
   * instance's hold on one of the quote's pools became known after it (the quote was priced without it).
   */
  view(): number;
  /**
   * Throws `FirmQuoteRefused` unless `quote` fits its wallet's funds, its client's bounds and the pools'
   * share, as a new quote of `family` (which it would replace); holds nothing (a client refused the
   * funds for others' quotes only takes its place in line).
   */
  check(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    family?: string,
  ): void | Promise<void>;
  /**
   * Admits a firm quote (as `check`) and holds each leg's output, at once: a concurrent quote on any
   * instance sees both. Throws `FirmQuoteRefused`, or `ReservationConflict` (price it again).
   */
  reserve(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs?: readonly PoolLeg[],
    view?: number,
    family?: FamilyRequest,
  ): Promise<ReservedQuote>;
  /** The ticket of the live family `key`, if there is one. */
  ticketOf(key: string): QuoteTicket | undefined | Promise<QuoteTicket | undefined>;
  /**
   * Runs `price` with this instance's holds of the families of `pair` (`pairKeyOf`) taken off the
   * pools: a re-quote is priced as if its family's earlier quotes were not there (one of them lands at most).
   */
  lend<T>(pair: string, price: () => T): T;
  /** Takes the tickets of ended families that no transaction can open any more at `blockHeight` (each once). */
  takeEndedTickets(blockHeight: bigint): Promise<EndedTicket[]>;
}

/** A firm quote was priced without a hold made meanwhile (here or on another instance): price it again. */
export class ReservationConflict extends Error {
  override name = "ReservationConflict";
}

/**
 * Whether each leg's pool still pays its priced output in full. A quote is priced before the awaits
 * of its checks, and concurrent quotes may hold the same pools meanwhile: holding it at its old price
 * would promise the curve's output twice. Asked with no await before the holds it guards.
 */
function legsStillPay(legs: readonly PoolLeg[]): boolean {
  return legs.every((leg) => {
    const inputMint = leg.pool.mints[leg.pool.sideOf(leg.outputMint) === 0 ? 1 : 0] as Address;
    return (leg.pool.quote(inputMint, leg.inAmount)?.outAmount ?? 0n) >= leg.maxOut;
  });
}

/** Throws `ReservationConflict` unless every leg's pool still pays its priced output (`legsStillPay`). */
export function checkLegsStillPay(legs: readonly PoolLeg[]): void {
  if (!legsStillPay(legs))
    throw new ReservationConflict("other firm quotes held output of its pools while it was priced");
}

/** One client's live firm quotes for one wallet, and the input they spend per mint (kept, not summed per request). */
interface WalletQuotes {
  quotes: Set<FirmQuote>;
  committed: Map<Address, bigint>;
}

/** One client's live firm quotes in all, and the output they hold per pool side. */
interface ClientQuotes {
  count: number;
  held: Map<string, bigint>;
}

/** Every client's live quotes for one wallet of one input mint: what they spend, and who waits for it. */
interface WalletFunds {
  committed: bigint;
  /** The last valid block height of the latest of them: by then the funds are free again. */
  latest: bigint;
  line: FundsLine;
}

/** Why a firm quote was not admitted. */
export class FirmQuoteRefused extends Error {
  override name = "FirmQuoteRefused";
  constructor(
    readonly reason: "wallet_limit" | "client_limit" | "pool_share" | "pool_hold" | "insufficient_funds",
    message: string,
  ) {
    super(message);
  }
}

const BPS = 10_000n;
/** Wallets' funds tracked before the first sweep of lines nobody waits in. */
const SWEEP_FLOOR = 1_024;

/** The live firm quotes of this process, by client and wallet, by client, by wallet and mint, and by pool side. */
export class FirmQuotes implements ReservationStore {
  private readonly byWallet = new Map<string, WalletQuotes>();
  private readonly byClient = new Map<string, ClientQuotes>();
  private readonly funds = new Map<string, WalletFunds>();
  /** The output all live quotes hold, per pool side. */
  private readonly held = new Map<string, bigint>();
  /** The highest block height a quote was checked at. */
  private height = 0n;
  /** `funds` is swept of lines nobody waits in once it grows to this size. */
  private sweepAt = SWEEP_FLOOR;
  /** Every quote in the order it was added, which is the order its blockhash expires in. */
  private expiring: FirmQuote[] = [];
  private expiringHead = 0;
  /** The live quote families, by `familyKeyOf`. */
  private readonly families = new FamiliesByPair<Family>();
  /** Tickets of ended families, until the sweeper takes them. */
  private endedTickets: EndedTicket[] = [];

  constructor(private readonly limits: FirmQuoteLimits) {}

  /**
   * Admits a firm quote for a wallet that holds `balance` of its input, or throws `FirmQuoteRefused`.
   * It counts from this moment (against its wallet's funds and both bounds), so a concurrent quote of
   * the same wallet sees it however long issuing this one takes.
   */
  admit(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
  ): AdmittedQuote {
    this.check(quote, blockHeight);
    const recorded = this.add(quote, lastValidBlockHeight);
    return {
      attach: (holds) => this.attachHolds(recorded, holds),
      cancel: () => this.retire(recorded),
    };
  }

  /** The quote now ends when every one of `holds` has closed, or at its expiry. */
  private attachHolds(recorded: FirmQuote, holds: readonly PoolHold[]): void {
    recorded.openHolds = holds.length;
    const closed = () => {
      recorded.openHolds = (recorded.openHolds ?? 1) - 1;
      if (recorded.openHolds === 0) this.retire(recorded);
    };
    for (const hold of holds) hold.onClose(closed);
  }

  /**
   * Throws `FirmQuoteRefused` unless a quote for `balance` of its input fits its wallet's funds, its
   * client's bounds and the pools' share; as if the quote carrying `family` (or that quote itself: a
   * live one of the same client, wallet and input) were gone.
   */
  check(quote: FirmQuoteTerms & { balance: bigint }, blockHeight: bigint, family?: string | FirmQuote): void {
    this.expire(blockHeight);
    const replacing = typeof family === "string" ? this.families.get(family)?.record : family;
    if (blockHeight > this.height) this.height = blockHeight;
    this.sweep();
    // Only a quote of the same client, wallet and input is counted as gone (a family's always is).
    const gone =
      replacing?.live && replacing.walletKey === walletKeyOf(quote) && replacing.inputMint === quote.inputMint
        ? replacing
        : undefined;
    const wallet = this.byWallet.get(walletKeyOf(quote));
    const live = (wallet?.quotes.size ?? 0) - (gone ? 1 : 0);
    if (this.limits.perWallet > 0 && live >= this.limits.perWallet) throw walletLimit(quote, live);
    const client = this.byClient.get(quote.client);
    const asked = (client?.count ?? 0) - (gone ? 1 : 0);
    if (this.limits.perClient > 0 && asked >= this.limits.perClient) throw clientLimit(asked);
    const spent = gone?.inAmount ?? 0n;
    this.checkFunds(quote, (wallet?.committed.get(quote.inputMint) ?? 0n) - spent, blockHeight, spent);
    const heldBy = (side: string) =>
      gone?.holds.reduce((sum, hold) => (hold.side === side ? sum + hold.amount : sum), 0n) ?? 0n;
    const shareBps = BigInt(this.limits.poolShareBps ?? 0);
    for (const hold of shareBps > 0n ? (quote.holds ?? []) : []) {
      const held = (client?.held.get(hold.side) ?? 0n) - heldBy(hold.side) + hold.amount;
      if (held * BPS > hold.reserve * shareBps) throw poolShare(held, hold.reserve, shareBps);
    }
    const holdBps = BigInt(this.limits.poolHoldBps ?? 0);
    for (const hold of holdBps > 0n ? (quote.holds ?? []) : []) {
      const held = (this.held.get(hold.side) ?? 0n) - heldBy(hold.side) + hold.amount;
      if (held * BPS > hold.reserve * holdBps) throw poolHold(held, hold.reserve, holdBps);
    }
  }

  /**
   * Throws unless the wallet's funds, less every live quote's, cover `quote` and no other client is
   * first in line for them. `own` is what this client's quotes spend: a client refused only because of
   * others' quotes takes its place in line (one asking more than the wallet holds could never be served).
   */
  private checkFunds(
    quote: FirmQuoteTerms & { balance: bigint },
    own: bigint,
    blockHeight: bigint,
    replaced = 0n,
  ): void {
    const key = fundsKeyOf(quote);
    const funds = this.funds.get(key);
    if (!funds) {
      if (quote.balance < quote.inAmount) throw insufficientFunds(quote, 0n);
      return;
    }
    const committed = funds.committed - replaced;
    const fits = quote.balance >= committed + quote.inAmount;
    const ahead = funds.line.ahead(quote.client, blockHeight);
    if (fits && !ahead) return;
    if (quote.balance >= own + quote.inAmount) funds.line.wait(quote.client, blockHeight, funds.latest);
    throw fits ? fundsAwaited(quote) : insufficientFunds(quote, committed);
  }

  /**
   * Drops the wallets whose quotes all ended while someone waited, once nobody does; only when their
   * number has doubled since the last sweep, so it costs O(1) a check amortized.
   */
  private sweep(): void {
    if (this.funds.size < this.sweepAt) return;
    for (const [key, funds] of this.funds)
      if (funds.committed <= 0n && !funds.line.waiting(this.height)) this.funds.delete(key);
    this.sweepAt = Math.max(SWEEP_FLOOR, this.funds.size * 2);
  }

  /** Always 0: in one process no other instance's holds arrive; holds made here are checked in `reserve`. */
  view(): number {
    return 0;
  }

  /**
   * Admits a firm quote and holds its legs' output in their pools, with no await between (nor since
   * they were checked). With a family, the quote joins it (or starts it): the family's one quote then
   * carries what its largest live member takes, and its holds replace the family's previous ones.
   */
  async reserve(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[] = [],
    _view?: number,
    family?: FamilyRequest,
  ): Promise<ReservedQuote> {
    if (family) return this.reserveInFamily(quote, blockHeight, lastValidBlockHeight, legs, family);
    checkLegsStillPay(legs);
    const admitted = this.admit(quote, blockHeight, lastValidBlockHeight);
    const holds = legs.map((leg) =>
      leg.pool.reserve(leg.outputMint, leg.maxOut, lastValidBlockHeight, leg.inAmount),
    );
    return {
      holds,
      attach: admitted.attach,
      cancel: () => {
        for (const hold of holds) hold.release();
        admitted.cancel();
      },
    };
  }

  ticketOf(key: string): QuoteTicket | undefined {
    return this.families.get(key)?.ticket;
  }

  lend<T>(pair: string, price: () => T): T {
    const holds: PoolHold[] = [];
    for (const family of this.families.ofPair(pair)) holds.push(...family.holds);
    return holds.length === 0 ? price() : withoutHolds(holds, price);
  }

  async takeEndedTickets(blockHeight: bigint): Promise<EndedTicket[]> {
    const ready = this.endedTickets.filter((ended) => ended.after < blockHeight);
    if (ready.length > 0) this.endedTickets = this.endedTickets.filter((ended) => ended.after >= blockHeight);
    return ready;
  }

  private reserveInFamily(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[],
    request: FamilyRequest,
  ): ReservedQuote {
    this.expire(blockHeight);
    let family = this.families.get(request.key);
    if (family && request.landed !== undefined && request.landed === family.ticket?.seed) {
      this.endFamily(family);
      family = undefined;
    }
    const {
      members,
      terms,
      legs: held,
    } = joinWithQuote(quote, legs, lastValidBlockHeight, family?.members, blockHeight);
    // Priced without the family's own holds: checked so, then they give way to the new ones.
    if (family) withoutHolds(family.holds, () => checkLegsStillPay(legs));
    else checkLegsStillPay(legs);
    const previous = family?.record;
    this.check(terms, blockHeight, previous);
    const ticket = family ? family.ticket : request.base && quoteTicket(request.base, newTicketSeed());
    const record = this.add(terms, lastValidBlockHeight);
    const holds = held.map((leg) =>
      leg.pool.reserve(leg.outputMint, leg.maxOut, lastValidBlockHeight, leg.inAmount, ticket?.address),
    );
    let current: Family;
    if (family && previous) {
      current = family;
      current.record = record;
      // Replaced, not ended: its transaction may still land, and the new holds cover it.
      this.retire(previous);
      for (const hold of current.holds) hold.release();
      current.holds = holds;
      current.members = members;
    } else {
      current = { key: request.key, ticket, members, record, holds, issued: false };
      this.families.set(request.key, current);
    }
    record.family = current;
    const attach = (attached: readonly PoolHold[]) => {
      current.issued = true;
      this.attachHolds(record, attached);
    };
    const joined = previous !== undefined;
    return {
      holds,
      ...(ticket ? { ticket } : {}),
      attach,
      // A re-quote not issued after all still holds for the family's earlier quotes, which may land.
      cancel: () => {
        if (joined) return attach(holds);
        for (const hold of holds) hold.release();
        this.retire(record);
      },
    };
  }

  /** Ends a family whose ticket exists: its quote and holds, and its rent is taken back once its quotes expire. */
  private endFamily(family: Family): void {
    this.retire(family.record);
    for (const hold of family.holds) hold.release();
  }

  /** Records an admitted quote; it ends when its holds all close, or at expiry. */
  private add(terms: FirmQuoteTerms, lastValidBlockHeight: bigint): FirmQuote {
    const quote: FirmQuote = {
      wallet: terms.wallet,
      client: terms.client,
      walletKey: walletKeyOf(terms),
      inputMint: terms.inputMint,
      inAmount: terms.inAmount,
      holds: terms.holds ?? [],
      family: undefined,
      lastValidBlockHeight,
      openHolds: undefined,
      live: true,
    };
    let wallet = this.byWallet.get(quote.walletKey);
    if (!wallet) {
      wallet = { quotes: new Set(), committed: new Map() };
      this.byWallet.set(quote.walletKey, wallet);
    }
    wallet.quotes.add(quote);
    wallet.committed.set(quote.inputMint, (wallet.committed.get(quote.inputMint) ?? 0n) + quote.inAmount);
    let client = this.byClient.get(quote.client);
    if (!client) {
      client = { count: 0, held: new Map() };
      this.byClient.set(quote.client, client);
    }
    client.count += 1;
    for (const hold of quote.holds) {
      addTo(client.held, hold.side, hold.amount);
      addTo(this.held, hold.side, hold.amount);
    }
    const key = fundsKeyOf(quote);
    let funds = this.funds.get(key);
    if (!funds) {
      funds = { committed: 0n, latest: 0n, line: new FundsLine() };
      this.funds.set(key, funds);
    }
    funds.committed += quote.inAmount;
    if (lastValidBlockHeight > funds.latest) funds.latest = lastValidBlockHeight;
    funds.line.served(quote.client);
    this.expiring.push(quote);
    return quote;
  }

  /** Live firm quotes a client has for a wallet. */
  liveCount(wallet: Address, client: string): number {
    return this.byWallet.get(walletKeyOf({ wallet, client }))?.quotes.size ?? 0;
  }

  /** Ends the quotes whose blockhash the chain has passed. */
  private expire(blockHeight: bigint): void {
    const { expiring } = this;
    while (this.expiringHead < expiring.length) {
      const quote = expiring[this.expiringHead] as FirmQuote;
      if (quote.lastValidBlockHeight >= blockHeight) break;
      this.expiringHead += 1;
      this.retire(quote);
    }
    // Drop the expired prefix now and then, not on every expiry.
    if (this.expiringHead > 1_024 && this.expiringHead * 2 > expiring.length) {
      this.expiring = expiring.slice(this.expiringHead);
      this.expiringHead = 0;
    }
  }

  private retire(quote: FirmQuote): void {
    if (!quote.live) return;
    quote.live = false;
    const family = quote.family;
    // The quote carrying a family's footprint ends with the family (a replaced one no longer carries it).
    if (family?.record === quote) {
      this.families.delete(family.key);
      if (family.issued && family.ticket)
        this.endedTickets.push({ ticket: family.ticket, after: quote.lastValidBlockHeight });
    }
    const wallet = this.byWallet.get(quote.walletKey);
    if (wallet) {
      wallet.quotes.delete(quote);
      addTo(wallet.committed, quote.inputMint, -quote.inAmount);
      if (wallet.quotes.size === 0) this.byWallet.delete(quote.walletKey);
    }
    const key = fundsKeyOf(quote);
    const funds = this.funds.get(key);
    if (funds) {
      funds.committed -= quote.inAmount;
      // Kept while someone waits: its place must outlast the quotes it waits for.
      if (funds.committed <= 0n && !funds.line.waiting(this.height)) this.funds.delete(key);
    }
    for (const hold of quote.holds) addTo(this.held, hold.side, -hold.amount);
    const client = this.byClient.get(quote.client);
    if (!client) return;
    client.count -= 1;
    for (const hold of quote.holds) addTo(client.held, hold.side, -hold.amount);
    if (client.count <= 0) this.byClient.delete(quote.client);
  }
}

/** Adds `amount` (negative to take off) to `key`'s total, dropping totals that reach nothing. */
function addTo<K>(totals: Map<K, bigint>, key: K, amount: bigint): void {
  const total = (totals.get(key) ?? 0n) + amount;
  if (total > 0n) totals.set(key, total);
  else totals.delete(key);
}

/** The key of every client's quotes for one wallet of one input mint. */
export function fundsKeyOf(quote: { wallet: Address; inputMint: Address }): string {
  return `${quote.wallet}|${quote.inputMint}`;
}

/** The key of one client's quotes for one wallet. */
export function walletKeyOf(quote: { client: string; wallet: Address }): string {
  return `${quote.client}\0${quote.wallet}`;
}

/** The client already has `live` firm quotes for the wallet. */
export function walletLimit(quote: { wallet: Address }, live: number): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "wallet_limit",
    `this client already holds ${live} firm quotes for wallet ${quote.wallet}; let one land or expire (about a minute)`,
  );
}

/** The client already has `asked` firm quotes in all. */
export function clientLimit(asked: number): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "client_limit",
    `this client already holds ${asked} firm quotes; let some land or expire (about a minute)`,
  );
}

/** The wallet's input, less what its other live quotes spend (`committed`), does not cover this one. */
export function insufficientFunds(
  quote: { wallet: Address; inputMint: Address; inAmount: bigint; balance: bigint },
  committed: bigint,
): FirmQuoteRefused {
  const spare = quote.balance > committed ? quote.balance - committed : 0n;
  return new FirmQuoteRefused(
    "insufficient_funds",
    `wallet ${quote.wallet} holds ${spare} of ${quote.inputMint} not already promised to firm quotes; this order needs ${quote.inAmount}`,
  );
}

/** The wallet's funds would cover the quote, but another client was refused them first and has the next turn. */
export function fundsAwaited(quote: { wallet: Address; inputMint: Address }): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "insufficient_funds",
    `another client was refused wallet ${quote.wallet}'s ${quote.inputMint} while other firm quotes held it, and waits for them first; retry after its turn (about a minute)`,
  );
}

/** The client's quotes would hold `held` of a pool side's `reserve`, more than `shareBps`. */
export function poolShare(held: bigint, reserve: bigint, shareBps: bigint): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "pool_share",
    `this client's firm quotes would hold ${held} of a pool reserve of ${reserve}, more than ${Number(shareBps) / 100}%; let some land or expire, or trade less at once`,
  );
}

/** All quotes together would hold `held` of a pool side's `reserve`, more than `holdBps`. */
export function poolHold(held: bigint, reserve: bigint, holdBps: bigint): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "pool_hold",
    `firm quotes would hold ${held} of a pool reserve of ${reserve}, more than ${Number(holdBps) / 100}% all together; retry as some land or expire, or trade less at once`,
  );
}
