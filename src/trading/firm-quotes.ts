/**
 * The firm quotes an instance has outstanding. A firm quote holds pool output until its transaction
 * lands or its blockhash expires, so holding must cost the holder something: a quote is admitted only
 * while its wallet holds the input on the chain beyond what the same client's other live quotes for
 * that wallet already spend, while the client asking (API key, or address without one) stays under its
 * bounds of live quotes, per wallet and in all, and while its holds on each pool stay under a share of
 * that pool's reserve. Everything is counted per client: anyone may name any wallet, so a caller who
 * names someone else's must not use up that wallet's own quotes or funds. A quote stops counting once
 * every pool it holds output of has delivered it, or its blockhash has expired.
 *
 * `ReservationStore` is where that bookkeeping lives: `FirmQuotes` here for one instance, or
 * `RedisReservations` when several instances must not promise the same tokens twice.
 */
import type { Address } from "@solana/kit";
import type { PoolHold, SyncMarket } from "./market.js";

export interface FirmQuoteLimits {
  /** Live firm quotes one client may have for one wallet (0: unbounded). */
  perWallet: number;
  /** Live firm quotes asked for by one client (0: unbounded). */
  perClient: number;
  /** The most of a pool side's reserve one client's live quotes may hold, in basis points (0: unbounded). */
  poolShareBps?: number;
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

/** A firm quote admitted and its pools' output held (`holds`, one per leg). */
export interface ReservedQuote extends AdmittedQuote {
  readonly holds: readonly PoolHold[];
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
  /** Throws `FirmQuoteRefused` unless `quote` fits its wallet's funds and its client's bounds; holds nothing. */
  check(quote: FirmQuoteTerms & { balance: bigint }, blockHeight: bigint): void | Promise<void>;
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
  ): Promise<ReservedQuote>;
}

/** A firm quote was priced without a hold another instance made meanwhile: price it again. */
export class ReservationConflict extends Error {
  override name = "ReservationConflict";
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

/** Why a firm quote was not admitted. */
export class FirmQuoteRefused extends Error {
  override name = "FirmQuoteRefused";
  constructor(
    readonly reason: "wallet_limit" | "client_limit" | "pool_share" | "insufficient_funds",
    message: string,
  ) {
    super(message);
  }
}

const BPS = 10_000n;

/** The live firm quotes of this process, by client and wallet, and by client. */
export class FirmQuotes implements ReservationStore {
  private readonly byWallet = new Map<string, WalletQuotes>();
  private readonly byClient = new Map<string, ClientQuotes>();
  /** Every quote in the order it was added, which is the order its blockhash expires in. */
  private expiring: FirmQuote[] = [];
  private expiringHead = 0;

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
      attach: (holds) => {
        recorded.openHolds = holds.length;
        const closed = () => {
          recorded.openHolds = (recorded.openHolds ?? 1) - 1;
          if (recorded.openHolds === 0) this.retire(recorded);
        };
        for (const hold of holds) hold.onClose(closed);
      },
      cancel: () => this.retire(recorded),
    };
  }

  /** Throws `FirmQuoteRefused` unless a quote for `balance` of its input fits its wallet's funds and both bounds; records nothing. */
  check(quote: FirmQuoteTerms & { balance: bigint }, blockHeight: bigint): void {
    this.expire(blockHeight);
    const wallet = this.byWallet.get(walletKeyOf(quote));
    const live = wallet?.quotes.size ?? 0;
    if (this.limits.perWallet > 0 && live >= this.limits.perWallet) throw walletLimit(quote, live);
    const client = this.byClient.get(quote.client);
    const asked = client?.count ?? 0;
    if (this.limits.perClient > 0 && asked >= this.limits.perClient) throw clientLimit(asked);
    const committed = wallet?.committed.get(quote.inputMint) ?? 0n;
    if (quote.balance < committed + quote.inAmount) throw insufficientFunds(quote, committed);
    const shareBps = BigInt(this.limits.poolShareBps ?? 0);
    for (const hold of shareBps > 0n ? (quote.holds ?? []) : []) {
      const held = (client?.held.get(hold.side) ?? 0n) + hold.amount;
      if (held * BPS > hold.reserve * shareBps) throw poolShare(held, hold.reserve, shareBps);
    }
  }

  /** Always 0: in one process a quote is admitted and held with no await between, so nothing conflicts. */
  view(): number {
    return 0;
  }

  /** Admits a firm quote and holds its legs' output in their pools, with no await between. */
  async reserve(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[] = [],
  ): Promise<ReservedQuote> {
    const admitted = this.admit(quote, blockHeight, lastValidBlockHeight);
    const holds = legs.map((leg) =>
      leg.pool.reserve(leg.outputMint, leg.maxOut, lastValidBlockHeight, leg.inAmount),
    );
    return { holds, attach: admitted.attach, cancel: admitted.cancel };
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
    for (const hold of quote.holds)
      client.held.set(hold.side, (client.held.get(hold.side) ?? 0n) + hold.amount);
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
    const wallet = this.byWallet.get(quote.walletKey);
    if (wallet) {
      wallet.quotes.delete(quote);
      const left = (wallet.committed.get(quote.inputMint) ?? 0n) - quote.inAmount;
      if (left > 0n) wallet.committed.set(quote.inputMint, left);
      else wallet.committed.delete(quote.inputMint);
      if (wallet.quotes.size === 0) this.byWallet.delete(quote.walletKey);
    }
    const client = this.byClient.get(quote.client);
    if (!client) return;
    client.count -= 1;
    for (const hold of quote.holds) {
      const left = (client.held.get(hold.side) ?? 0n) - hold.amount;
      if (left > 0n) client.held.set(hold.side, left);
      else client.held.delete(hold.side);
    }
    if (client.count <= 0) this.byClient.delete(quote.client);
  }
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

/** The wallet's input, less what the client's other quotes spend (`committed`), does not cover this one. */
export function insufficientFunds(
  quote: { wallet: Address; inputMint: Address; inAmount: bigint; balance: bigint },
  committed: bigint,
): FirmQuoteRefused {
  const spare = quote.balance > committed ? quote.balance - committed : 0n;
  return new FirmQuoteRefused(
    "insufficient_funds",
    `wallet ${quote.wallet} holds ${spare} of ${quote.inputMint} not already promised to this client's other firm quotes; this order needs ${quote.inAmount}`,
  );
}

/** The client's quotes would hold `held` of a pool side's `reserve`, more than `shareBps`. */
export function poolShare(held: bigint, reserve: bigint, shareBps: bigint): FirmQuoteRefused {
  return new FirmQuoteRefused(
    "pool_share",
    `this client's firm quotes would hold ${held} of a pool reserve of ${reserve}, more than ${Number(shareBps) / 100}%; let some land or expire, or trade less at once`,
  );
}
