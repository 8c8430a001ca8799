/**
 * The firm quotes an instance has outstanding. A firm quote holds pool output until its transaction
 * lands or its blockhash expires, so holding must cost the holder something: a quote is admitted only
 * while its wallet holds the input on the chain beyond what the wallet's other live quotes already
 * spend, and while the wallet and the client asking (API key, or address without one) stay under their
 * bounds of live quotes. A quote stops counting once every pool it holds output of has delivered it,
 * or its blockhash has expired.
 */
import type { Address } from "@solana/kit";
import type { PoolHold } from "./market.js";

export interface FirmQuoteLimits {
  /** Live firm quotes of one wallet (0: unbounded). */
  perWallet: number;
  /** Live firm quotes asked for by one client (0: unbounded). */
  perClient: number;
}

/** What a firm quote spends, and who asks for it. */
export interface FirmQuoteTerms {
  wallet: Address;
  client: string;
  inputMint: Address;
  inAmount: bigint;
}

interface FirmQuote extends FirmQuoteTerms {
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

/** A wallet's live firm quotes, and the input they spend per mint (kept, not summed per request). */
interface WalletQuotes {
  quotes: Set<FirmQuote>;
  committed: Map<Address, bigint>;
}

/** Why a firm quote was not admitted. */
export class FirmQuoteRefused extends Error {
  override name = "FirmQuoteRefused";
  constructor(
    readonly reason: "wallet_limit" | "client_limit" | "insufficient_funds",
    message: string,
  ) {
    super(message);
  }
}

/** The live firm quotes, by wallet and by client. */
export class FirmQuotes {
  private readonly byWallet = new Map<Address, WalletQuotes>();
  private readonly byClient = new Map<string, number>();
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
    const wallet = this.byWallet.get(quote.wallet);
    const live = wallet?.quotes.size ?? 0;
    if (this.limits.perWallet > 0 && live >= this.limits.perWallet) {
      throw new FirmQuoteRefused(
        "wallet_limit",
        `wallet ${quote.wallet} already holds ${live} firm quotes; let one land or expire (about a minute)`,
      );
    }
    const asked = this.byClient.get(quote.client) ?? 0;
    if (this.limits.perClient > 0 && asked >= this.limits.perClient) {
      throw new FirmQuoteRefused(
        "client_limit",
        `this client already holds ${asked} firm quotes; let some land or expire (about a minute)`,
      );
    }
    const committed = wallet?.committed.get(quote.inputMint) ?? 0n;
    if (quote.balance < committed + quote.inAmount) {
      const spare = quote.balance > committed ? quote.balance - committed : 0n;
      throw new FirmQuoteRefused(
        "insufficient_funds",
        `wallet ${quote.wallet} holds ${spare} of ${quote.inputMint} not already promised to its other firm quotes; this order needs ${quote.inAmount}`,
      );
    }
  }

  /** Records an admitted quote; it ends when its holds all close, or at expiry. */
  private add(terms: FirmQuoteTerms, lastValidBlockHeight: bigint): FirmQuote {
    const quote: FirmQuote = {
      wallet: terms.wallet,
      client: terms.client,
      inputMint: terms.inputMint,
      inAmount: terms.inAmount,
      lastValidBlockHeight,
      openHolds: undefined,
      live: true,
    };
    let wallet = this.byWallet.get(quote.wallet);
    if (!wallet) {
      wallet = { quotes: new Set(), committed: new Map() };
      this.byWallet.set(quote.wallet, wallet);
    }
    wallet.quotes.add(quote);
    wallet.committed.set(quote.inputMint, (wallet.committed.get(quote.inputMint) ?? 0n) + quote.inAmount);
    this.byClient.set(quote.client, (this.byClient.get(quote.client) ?? 0) + 1);
    this.expiring.push(quote);
    return quote;
  }

  /** Live firm quotes of a wallet. */
  liveCount(wallet: Address): number {
    return this.byWallet.get(wallet)?.quotes.size ?? 0;
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
    const wallet = this.byWallet.get(quote.wallet);
    if (wallet) {
      wallet.quotes.delete(quote);
      const left = (wallet.committed.get(quote.inputMint) ?? 0n) - quote.inAmount;
      if (left > 0n) wallet.committed.set(quote.inputMint, left);
      else wallet.committed.delete(quote.inputMint);
      if (wallet.quotes.size === 0) this.byWallet.delete(quote.wallet);
    }
    const count = (this.byClient.get(quote.client) ?? 0) - 1;
    if (count > 0) this.byClient.set(quote.client, count);
    else this.byClient.delete(quote.client);
  }
}
