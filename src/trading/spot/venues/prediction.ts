/**
 * The prediction venue: each active market's yes and no mints against their rail's settlement mint
 * (every market has a USDC rail and a CASH rail, each with its own mints), priced from the market's
 * order book on the upstream exchange, in whole contracts (1 contract = 10^6 units of a 6-decimal
 * outcome token, paying 1 USDC or 1 CASH if it wins). Buying walks the asks (the other side's bids
 * mirrored: a no bid at p is a yes ask at 1 − p); selling walks the side's bids. Orders settle
 * asynchronously, so these markets are only ever direct routes.
 */
import type { Address } from "@solana/kit";
import { parseAddress, parseAddressUncached } from "../../../chain/base58.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM, USDC_DECIMALS } from "../../../chain/programs.js";
import { type MarketAddresses, type MarketRail, SETTLEMENT_MINTS } from "../../../markets/accounts.js";
import type { Catalog, MarketEntry } from "../../../markets/catalog.js";
import { UpstreamError } from "../../../upstream/errors.js";
import type { ReferenceBook } from "../../../upstream/relay.js";
import type { AsyncMarket, LegQuote } from "../market.js";
import type { TokenRecord } from "../pools/store.js";

export const PREDICTION_VENUE = "prediction";
/** Units of an outcome token per contract. */
export const CONTRACT_UNITS = 1_000_000n;
export const OUTCOME_DECIMALS = 6;
/** How long a fetched order book prices quotes before it is fetched again. */
export const BOOK_TTL_MS = 1_000;

type Side = "yes" | "no";

/** One price level: millionths of the settlement mint per contract, and whole contracts available at it. */
type Level = readonly [price: bigint, contracts: bigint];

interface PricedBook {
  /** Best first: highest bid. */
  bids: Record<Side, Level[]>;
  /** Best first: lowest ask. */
  asks: Record<Side, Level[]>;
  fetchedAt: number;
}

/** One rail's chain accounts as the catalogue names them, and the mint its outcome tokens trade against. */
export interface OutcomeMarketAccounts {
  marketLedger: Address;
  yesMint: Address;
  noMint: Address;
  settlementMint: Address;
}

/** An outcome mint of one market's rail against its settlement mint: what both ways of trading one share. */
export abstract class OutcomeMintMarket implements AsyncMarket {
  readonly venue = PREDICTION_VENUE;
  readonly executionMode = "async";
  /** Whether it trades on the market's order book (a determined market's mints are redeemed instead). */
  readonly tradesOnBook: boolean = true;
  /** The settlement mint first, then the outcome mint. */
  readonly mints: readonly [Address, Address];
  readonly key: Address;

  constructor(
    readonly accounts: OutcomeMarketAccounts,
    /** The market's USDC rail: what its initialization records (every rail is derived from it). */
    readonly usdcRail: MarketAddresses,
    readonly ticker: string,
    readonly side: Side,
    readonly outcomeMint: Address,
    /** Whether the market's ledgers and mints exist on chain (the catalogue's `isInitialized`). */
    readonly initialized: boolean,
  ) {
    this.key = accounts.marketLedger;
    this.mints = [accounts.settlementMint, outcomeMint];
  }

  /** The mint a buy pays and a sale or redemption is paid in. */
  get settlementMint(): Address {
    return this.accounts.settlementMint;
  }

  abstract quote(inputMint: Address, amountIn: bigint): LegQuote | null;

  estimate(inputMint: Address, amountIn: bigint): number {
    return Number(this.quote(inputMint, amountIn)?.outAmount ?? 0n);
  }
}

/**
 * One outcome mint of one active market, bought and sold against its order book. A market not yet
 * initialized can only be bought (its first buy initializes it); nobody holds its tokens to sell.
 */
class OutcomeMarket extends OutcomeMintMarket {
  constructor(
    accounts: OutcomeMarketAccounts,
    usdcRail: MarketAddresses,
    ticker: string,
    side: Side,
    outcomeMint: Address,
    initialized: boolean,
    private readonly books: ReadonlyMap<string, PricedBook>,
  ) {
    super(accounts, usdcRail, ticker, side, outcomeMint, initialized);
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    const book = this.books.get(this.ticker);
    if (!book) return null;
    if (inputMint === this.settlementMint) return buy(book.asks[this.side], amountIn);
    if (inputMint !== this.outcomeMint) return null;
    return this.initialized ? sell(book.bids[this.side], amountIn) : null;
  }
}

/**
 * A determined market's outcome mint, redeemable for its rail's settlement mint: 1 per winning
 * contract, nothing for a losing one, and for a scalar result yes pays pct/10000 and no (10000 − pct)/10000.
 */
class RedemptionMarket extends OutcomeMintMarket {
  override readonly tradesOnBook = false;
  constructor(
    accounts: OutcomeMarketAccounts,
    usdcRail: MarketAddresses,
    ticker: string,
    side: Side,
    outcomeMint: Address,
    /** Millionths of the settlement mint paid per contract. */
    readonly payout: bigint,
  ) {
    super(accounts, usdcRail, ticker, side, outcomeMint, true);
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    if (inputMint !== this.outcomeMint || this.payout === 0n) return null;
    const contracts = amountIn / CONTRACT_UNITS;
    if (contracts === 0n) return null;
    const outAmount = contracts * this.payout;
    return { inAmount: contracts * CONTRACT_UNITS, outAmount, spotOutAmount: Number(outAmount) };
  }
}

/** Millionths of the settlement mint a contract of `side` pays once its market is determined, else null. */
export function payoutPerContract(
  side: Side,
  record: { status: string; result: string | null; scalarOutcomePct: number | null },
): bigint | null {
  if (record.status !== "determined" && record.status !== "finalized") return null;
  if (record.result === "yes" || record.result === "no") return record.result === side ? CONTRACT_UNITS : 0n;
  if (record.scalarOutcomePct === null) return null;
  const yes = (BigInt(record.scalarOutcomePct) * CONTRACT_UNITS) / 10_000n;
  return side === "yes" ? yes : CONTRACT_UNITS - yes;
}

/** Whole contracts `budget` (of the settlement mint) buys up the asks; the rest is returned to the buyer. */
function buy(asks: readonly Level[], budget: bigint): LegQuote | null {
  let contracts = 0n;
  let cost = 0n;
  for (const [price, available] of asks) {
    const affordable = (budget - cost) / price;
    const taken = affordable < available ? affordable : available;
    contracts += taken;
    cost += taken * price;
    if (taken < available) break;
  }
  const best = asks[0];
  if (contracts === 0n || !best) return null;
  return {
    inAmount: budget,
    spent: cost,
    outAmount: contracts * CONTRACT_UNITS,
    // Against what was spent: the unspendable remainder returned is no price impact.
    spotOutAmount: (Number(cost) / Number(best[0])) * Number(CONTRACT_UNITS),
  };
}

/** What selling the whole contracts in `units` fetches down the bids. */
function sell(bids: readonly Level[], units: bigint): LegQuote | null {
  const wanted = units / CONTRACT_UNITS;
  let left = wanted;
  let proceeds = 0n;
  for (const [price, available] of bids) {
    const taken = left < available ? left : available;
    proceeds += taken * price;
    left -= taken;
    if (left === 0n) break;
  }
  const best = bids[0];
  if (left > 0n || proceeds === 0n || !best) return null;
  return { inAmount: wanted * CONTRACT_UNITS, outAmount: proceeds, spotOutAmount: Number(wanted * best[0]) };
}

/**
 * The markets of the prediction venue and the order books they price from. A market is built from the
 * catalog when a request names one of its mints, not held for every market: a catalogue of 250,000
 * open markets would otherwise hold a million of them, with their route-graph entries.
 */
export class PredictionVenue {
  private readonly books = new Map<string, PricedBook>();
  private catalog: Catalog | undefined;
  /**
   * Markets initialized since the catalog was loaded (their first buy landed): their contracts sell
   * before the next catalog says so, for a trader who sells right after buying.
   */
  private readonly initializedLately = new Set<string>();
  private redeemOnly: readonly string[] = [];
  /** Markets whose book the upstream could not be asked for at the last try (not: it has none). */
  private readonly unreadable = new Set<string>();
  private usdcOutcomes: { catalog: Catalog; mints: readonly Address[] } | undefined;

  constructor(
    private readonly fetchBook: (ticker: string) => Promise<ReferenceBook>,
    /** Whether an account exists on chain: a market's outcome mint does once it is initialized. */
    private readonly accountExists: (address: Address) => Promise<boolean> = async () => false,
  ) {}

  /**
   * Every outcome mint of an active market's USDC rail: the pairs a subscribe-all quote stream follows.
   * Built once per catalog, when first asked: the same array until the catalog changes.
   */
  usdcOutcomeMints(): readonly Address[] {
    const { catalog } = this;
    if (!catalog) return [];
    if (this.usdcOutcomes?.catalog !== catalog) {
      const mints: Address[] = [];
      for (const entry of catalog.markets) {
        if (entry.record.status !== "active") continue;
        // Its top-level accounts are the USDC rail's.
        // Checked without the address cache: half a million mints would flush it.
        mints.push(
          parseAddressUncached(entry.addresses.yesMint),
          parseAddressUncached(entry.addresses.noMint),
        );
      }
      this.usdcOutcomes = { catalog, mints };
    }
    return this.usdcOutcomes.mints;
  }

  /** The catalog's market, rail and side of an outcome mint, from the by-mint index. */
  private outcomeOf(mint: Address): Outcome | undefined {
    const entry = this.catalog?.marketByMint(mint);
    if (!entry) return undefined;
    for (const rail of entry.addresses.rails) {
      if (rail.yesMint === mint) return { entry, rail, side: "yes" };
      if (rail.noMint === mint) return { entry, rail, side: "no" };
    }
    return undefined;
  }

  /**
   * The market of an outcome: an active market trades (one not yet initialized is initialized by its
   * first buy); a tokenized determined one redeems (a large catalogue holds tens of thousands of them
   * and a redemption is a rare request, so it is built when asked, like the rest).
   */
  private marketOfOutcome({ entry, rail, side }: Outcome): OutcomeMintMarket | undefined {
    const { record } = entry;
    if (record.status === "active") {
      const accounts = railAccounts(rail);
      const mint = accounts[`${side}Mint`];
      return new OutcomeMarket(
        accounts,
        entry.addresses,
        record.ticker,
        side,
        mint,
        record.tokenized || this.initializedLately.has(record.ticker),
        this.books,
      );
    }
    const payout = record.tokenized ? payoutPerContract(side, record) : null;
    if (payout === null) return undefined;
    const accounts = railAccounts(rail);
    return new RedemptionMarket(
      accounts,
      entry.addresses,
      record.ticker,
      side,
      accounts[`${side}Mint`],
      payout,
    );
  }

  /**
   * Takes the catalog its markets are built from: active markets trade (those not yet initialized are
   * initialized by their first buy), tokenized determined ones redeem, each on every rail. Returns
   * the settlement mints and the outcome mints of the tokenized active markets that `isListed` does
   * not list yet, to be listed as tokens: a mint joins the registry once it trades. The outcome mints
   * of determined markets that only redeem (`redeemOnlyMints`) are not stored: the catalog keeps
   * them, and a large one holds hundreds of thousands.
   */
  update(catalog: Catalog, isListed: (mint: string) => boolean): TokenRecord[] {
    this.catalog = catalog;
    this.initializedLately.clear();
    // The settlement mints trade here whether or not a pool lists them (CASH has none); both are
    // 6-decimal SPL tokens.
    const unlisted: TokenRecord[] = SETTLEMENT_MINTS.filter((mint) => !isListed(mint)).map((mint) => ({
      mint,
      decimals: USDC_DECIMALS,
      program: TOKEN_PROGRAM,
    }));
    const redeemOnly: string[] = [];
    for (const entry of catalog.markets) {
      const { tokenized, status } = entry.record;
      if (!tokenized) continue;
      const active = status === "active";
      if (!active && payoutPerContract("yes", entry.record) === null) continue;
      for (const rail of entry.addresses.rails) {
        for (const mint of [rail.yesMint, rail.noMint]) {
          if (!active) redeemOnly.push(mint);
          // Checked outside the address cache, which a large catalogue's mints would flush.
          else if (!isListed(mint)) unlisted.push(outcomeToken(parseAddressUncached(mint)));
        }
      }
    }
    this.redeemOnly = redeemOnly;
    return unlisted;
  }

  /**
   * The outcome mints of the catalog's tokenized determined markets, which redeem (every rail): the
   * token registry lists them beside the stored ones (a market born determined included).
   */
  get redeemOnlyMints(): readonly string[] {
    return this.redeemOnly;
  }

  /** The market of an outcome mint the venue trades or redeems, if any, built when asked. */
  marketOf(mint: Address): OutcomeMintMarket | undefined {
    const outcome = this.outcomeOf(mint);
    return outcome && this.marketOfOutcome(outcome);
  }

  /**
   * Why an order between these mints finds no route when one is the outcome mint of a market that is
   * not active, in words that say what to do instead (redeem a settled market's contracts); undefined
   * when neither is such a mint.
   */
  /** Why the book an order between these mints prices from could not be read just now, if it could not. */
  unreadableBook(inputMint: Address, outputMint: Address): string | undefined {
    for (const mint of [inputMint, outputMint]) {
      const ticker = this.outcomeOf(mint)?.entry.record.ticker;
      if (ticker && this.unreadable.has(ticker))
        return `the upstream could not be asked for market ${ticker}'s order book; retry shortly`;
    }
    return undefined;
  }

  notTradingReason(inputMint: Address, outputMint: Address): string | undefined {
    for (const mint of [inputMint, outputMint]) {
      const outcome = this.outcomeOf(mint);
      if (!outcome || outcome.entry.record.status === "active") continue;
      const { record } = outcome.entry;
      const { ticker, status } = record;
      const payout = payoutPerContract(outcome.side, record);
      if (payout === null) return `market ${ticker} is ${status}: it trades only while active`;
      const result = record.result ? ` with result ${record.result}` : "";
      if (!record.tokenized)
        return `market ${ticker} is ${status}${result}: it no longer trades, and has no outcome tokens on this venue to redeem`;
      if (mint === inputMint && payout === 0n)
        return `market ${ticker} is ${status}${result}: its ${outcome.side} contracts pay nothing to redeem`;
      const accounts = railAccounts(outcome.rail);
      // A binary result redeems its winning side; a scalar one redeems either at its share.
      const side = record.result === "yes" || record.result === "no" ? record.result : outcome.side;
      return (
        `market ${ticker} is ${status}${result}: it no longer trades; redeem with ` +
        `/order?inputMint=${accounts[`${side}Mint`]}&outputMint=${accounts.settlementMint}&amount=UNITS ` +
        `(1000000 per contract), or \`oddsgate sell ${ticker} ${side} CONTRACTS\``
      );
    }
    return undefined;
  }

  /** The markets trading `mint` (one at most): what the route graph finds on demand. */
  marketsOf(mint: Address): OutcomeMintMarket[] {
    const market = this.marketOf(mint);
    return market ? [market] : [];
  }

  /**
   * The token record of an outcome mint the venue trades or redeems, listed or not: a determined
   * market's mints and a market's not yet initialized are found by orders without being listed.
   */
  tokenOf(mint: Address): TokenRecord | undefined {
    return this.marketOf(mint) ? outcomeToken(mint) : undefined;
  }

  /** Fetches the order books of the markets of these mints unless fresh ones are at hand. */
  async prepare(mints: readonly Address[], now = Date.now()): Promise<void> {
    const tickers = new Set<string>();
    for (const mint of mints) {
      const record = this.outcomeOf(mint)?.entry.record;
      // Redemptions pay a fixed amount: only active markets price from a book.
      if (record?.status !== "active") continue;
      if ((this.books.get(record.ticker)?.fetchedAt ?? 0) + BOOK_TTL_MS <= now) tickers.add(record.ticker);
      // Selling needs the market initialized; the catalog learns of a first buy only when it reloads.
      if (!record.tokenized && !this.initializedLately.has(record.ticker) && (await this.accountExists(mint)))
        this.initializedLately.add(record.ticker);
    }
    if (tickers.size === 0) return;
    await Promise.all(
      [...tickers].map(async (ticker) => {
        try {
          this.books.set(ticker, priceBook(await this.fetchBook(ticker), now));
          this.unreadable.delete(ticker);
        } catch (error) {
          // No book: the market quotes nothing for now. An upstream that could not be asked is worth
          // asking again, which `unreadableBook` tells a caller.
          this.books.delete(ticker);
          if (error instanceof UpstreamError) this.unreadable.add(ticker);
          else this.unreadable.delete(ticker);
        }
      }),
    );
  }
}

/** An outcome mint's place in the catalog: its market, the rail it belongs to, and its side. */
interface Outcome {
  entry: MarketEntry;
  rail: MarketRail;
  side: Side;
}

/** A rail's accounts as the catalogue names them, checked as they enter the venue. */
function railAccounts(rail: {
  marketLedger: string;
  yesMint: string;
  noMint: string;
  settlementMint: string;
}): OutcomeMarketAccounts {
  return {
    marketLedger: parseAddress(rail.marketLedger),
    yesMint: parseAddress(rail.yesMint),
    noMint: parseAddress(rail.noMint),
    settlementMint: parseAddress(rail.settlementMint),
  };
}

/** Every outcome mint is a 6-decimal Token-2022 mint (contract §7). */
function outcomeToken(mint: Address): TokenRecord {
  return { mint, decimals: OUTCOME_DECIMALS, program: TOKEN_2022_PROGRAM };
}

/** Turns the reference book (bids per side, dollar strings) into bid and ask ladders in millionths. */
export function priceBook(book: ReferenceBook, fetchedAt: number): PricedBook {
  const ladder = (levels: Record<string, number>): Level[] =>
    Object.entries(levels)
      .map(
        ([price, contracts]): Level => [BigInt(Math.round(Number(price) * 10_000)) * 100n, BigInt(contracts)],
      )
      .filter(([price, contracts]) => price > 0n && price < 1_000_000n && contracts > 0n)
      .sort((a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
  const yesBids = ladder(book.yes_bids);
  const noBids = ladder(book.no_bids);
  const mirrored = (bids: Level[]): Level[] =>
    bids.map(([price, contracts]): Level => [1_000_000n - price, contracts]);
  return {
    bids: { yes: yesBids, no: noBids },
    asks: { yes: mirrored(noBids), no: mirrored(yesBids) },
    fetchedAt,
  };
}
