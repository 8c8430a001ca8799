/**
 * The firm quotes an instance has outstanding. A firm quote holds pool output until its transaction
 * lands or its blockhash expires, so holding must cost the holder something: a quote is admitted only
 * while its wallet holds the input on the chain beyond what the wallet's other live quotes already
 * spend, and while the wallet and the client asking (API key, or address without one) stay under their
 * bounds of live quotes. A quote stops counting once every pool it holds output of has delivered it,
 * or its blockhash has expired.
 */
import type { Address } from "@solana/kit";
import type { PoolHold } from "./venues/cpmm-pool.js";

export interface FirmQuoteLimits {
  /** Live firm quotes of one wallet (0: unbounded). */
  perWallet: number;
  /** Live firm quotes asked for by one client (0: unbounded). */
  perClient: number;
}

interface FirmQuote {
  wallet: Address;
  client: string;
  inputMint: Address;
  inAmount: bigint;
  lastValidBlockHeight: bigint;
  holds: readonly PoolHold[];
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
  private readonly byWallet = new Map<Address, FirmQuote[]>();
  private readonly byClient = new Map<string, number>();
  private prunedAt = -1n;

  constructor(private readonly limits: FirmQuoteLimits) {}

  /**
   * Admits a firm quote of `inAmount` of `inputMint` for `wallet`, which holds `balance` of it, or
   * throws `FirmQuoteRefused`. Call it with no await between it and taking the holds, so that
   * concurrent quotes of one wallet see each other.
   */
  admit(
    quote: { wallet: Address; client: string; inputMint: Address; inAmount: bigint; balance: bigint },
    blockHeight: bigint,
  ): void {
    this.prune(blockHeight);
    const live = this.byWallet.get(quote.wallet) ?? [];
    if (this.limits.perWallet > 0 && live.length >= this.limits.perWallet) {
      throw new FirmQuoteRefused(
        "wallet_limit",
        `wallet ${quote.wallet} already holds ${live.length} firm quotes; let one land or expire (about a minute)`,
      );
    }
    const asked = this.byClient.get(quote.client) ?? 0;
    if (this.limits.perClient > 0 && asked >= this.limits.perClient) {
      throw new FirmQuoteRefused(
        "client_limit",
        `this client already holds ${asked} firm quotes; let some land or expire (about a minute)`,
      );
    }
    let committed = 0n;
    for (const other of live) if (other.inputMint === quote.inputMint) committed += other.inAmount;
    if (quote.balance < committed + quote.inAmount) {
      const spare = quote.balance > committed ? quote.balance - committed : 0n;
      throw new FirmQuoteRefused(
        "insufficient_funds",
        `wallet ${quote.wallet} holds ${spare} of ${quote.inputMint} not already promised to its other firm quotes; this order needs ${quote.inAmount}`,
      );
    }
  }

  /** Records an admitted quote with the pool output it holds. */
  add(
    quote: { wallet: Address; client: string; inputMint: Address; inAmount: bigint },
    lastValidBlockHeight: bigint,
    holds: readonly PoolHold[],
  ): void {
    const live = this.byWallet.get(quote.wallet);
    const entry: FirmQuote = { ...quote, lastValidBlockHeight, holds };
    if (live) live.push(entry);
    else this.byWallet.set(quote.wallet, [entry]);
    this.byClient.set(quote.client, (this.byClient.get(quote.client) ?? 0) + 1);
  }

  /** Live firm quotes of a wallet (for tests and metrics). */
  liveCount(wallet: Address): number {
    return this.byWallet.get(wallet)?.length ?? 0;
  }

  /** Forgets quotes that expired or were delivered; at most once per block height. */
  private prune(blockHeight: bigint): void {
    if (blockHeight === this.prunedAt) return;
    this.prunedAt = blockHeight;
    for (const [wallet, quotes] of this.byWallet) {
      const kept = quotes.filter((quote) => {
        const live =
          quote.lastValidBlockHeight >= blockHeight &&
          (quote.holds.length === 0 || quote.holds.some((hold) => hold.isOpen()));
        if (!live) this.forgetClient(quote.client);
        return live;
      });
      if (kept.length === 0) this.byWallet.delete(wallet);
      else if (kept.length !== quotes.length) this.byWallet.set(wallet, kept);
    }
  }

  private forgetClient(client: string): void {
    const count = (this.byClient.get(client) ?? 0) - 1;
    if (count > 0) this.byClient.set(client, count);
    else this.byClient.delete(client);
  }
}
