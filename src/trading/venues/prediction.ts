/**
 * The prediction venue: each active market's yes and no mints against USDC, priced from
 * the market's order book on the upstream exchange, in whole contracts (1 contract = 10^6 units of a
 * 6-decimal outcome token, paying 1 USDC if it wins). Buying walks the asks (the other side's bids
 * mirrored: a no bid at p is a yes ask at 1 − p); selling walks the side's bids. Orders settle
 * asynchronously, so these markets are only ever direct routes.
 */
import type { Address } from "@solana/kit";
import { parseAddress } from "../../chain/base58.js";
import { TOKEN_2022_PROGRAM } from "../../chain/programs.js";
import { USDC_MINT } from "../../contract/markets.js";
import type { Catalog } from "../../markets/catalog.js";
import type { ReferenceBook } from "../../upstream/relay.js";
import type { AsyncMarket, LegQuote } from "../market.js";
import type { TokenRecord } from "../pools/store.js";

export const PREDICTION_VENUE = "prediction";
/** Units of an outcome token per contract. */
export const CONTRACT_UNITS = 1_000_000n;
export const OUTCOME_DECIMALS = 6;
/** How long a fetched order book prices quotes before it is fetched again. */
export const BOOK_TTL_MS = 1_000;

type Side = "yes" | "no";

/** One price level: micro-USDC per contract, and whole contracts available at it. */
type Level = readonly [price: bigint, contracts: bigint];

interface PricedBook {
  /** Best first: highest bid. */
  bids: Record<Side, Level[]>;
  /** Best first: lowest ask. */
  asks: Record<Side, Level[]>;
  fetchedAt: number;
}

/** A market's chain accounts as the catalogue names them, and whether they exist yet. */
export interface OutcomeMarketAccounts {
  marketLedger: Address;
  yesMint: Address;
  noMint: Address;
}

/** An outcome mint of one market against USDC: what both ways of trading one have in common. */
export abstract class OutcomeMintMarket implements AsyncMarket {
  readonly venue = PREDICTION_VENUE;
  readonly executionMode = "async";
  readonly mints: readonly [Address, Address];
  readonly key: Address;

  constructor(
    readonly accounts: OutcomeMarketAccounts,
    readonly ticker: string,
    readonly side: Side,
    readonly outcomeMint: Address,
    /** Whether the market's ledger and mints exist on chain (the catalogue's `isInitialized`). */
    readonly initialized: boolean,
  ) {
    this.key = accounts.marketLedger;
    this.mints = [USDC_MINT, outcomeMint];
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
    ticker: string,
    side: Side,
    outcomeMint: Address,
    initialized: boolean,
    private readonly books: ReadonlyMap<string, PricedBook>,
  ) {
    super(accounts, ticker, side, outcomeMint, initialized);
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    const book = this.books.get(this.ticker);
    if (!book) return null;
    if (inputMint === USDC_MINT) return buy(book.asks[this.side], amountIn);
    return this.initialized ? sell(book.bids[this.side], amountIn) : null;
  }
}

/**
 * A determined market's outcome mint, redeemable for USDC: 1 USDC per winning contract, nothing for a
 * losing one, and for a scalar result yes pays pct/10000 and no (10000 − pct)/10000.
 */
class RedemptionMarket extends OutcomeMintMarket {
  constructor(
    accounts: OutcomeMarketAccounts,
    ticker: string,
    side: Side,
    outcomeMint: Address,
    /** Micro-USDC paid per contract. */
    readonly payout: bigint,
  ) {
    super(accounts, ticker, side, outcomeMint, true);
  }

  quote(inputMint: Address, amountIn: bigint): LegQuote | null {
    if (inputMint !== this.outcomeMint || this.payout === 0n) return null;
    const contracts = amountIn / CONTRACT_UNITS;
    if (contracts === 0n) return null;
    const outAmount = contracts * this.payout;
    return { inAmount: contracts * CONTRACT_UNITS, outAmount, spotOutAmount: Number(outAmount) };
  }
}

/** Micro-USDC a contract of `side` pays once its market is determined, or null while it is not. */
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

/** Whole contracts `budget` micro-USDC buys up the asks; what is left over is returned to the buyer. */
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

/** The markets of the prediction venue and the order books they price from. */
export class PredictionVenue {
  private readonly books = new Map<string, PricedBook>();
  private readonly byMint = new Map<Address, OutcomeMarket | RedemptionMarket>();
  private current: (OutcomeMarket | RedemptionMarket)[] = [];

  constructor(private readonly fetchBook: (ticker: string) => Promise<ReferenceBook>) {}

  /** The venue's markets: both outcomes of every active market, and of every tokenized determined one. */
  markets(): readonly AsyncMarket[] {
    return this.current;
  }

  /**
   * Rebuilds the markets from the catalog: active markets trade (those not yet initialized are
   * initialized by their first buy), tokenized determined ones redeem. Returns the outcome mints of
   * the active tokenized ones, to be listed as tokens: a mint joins the registry once it exists.
   */
  update(catalog: Catalog): TokenRecord[] {
    const markets: (OutcomeMarket | RedemptionMarket)[] = [];
    const listed: TokenRecord[] = [];
    this.byMint.clear();
    for (const entry of catalog.markets) {
      const { tokenized, status, ticker } = entry.record;
      // Only a tokenized market's mints exist to redeem; an active one can be initialized by a buy.
      if (!tokenized && status !== "active") continue;
      const accounts: OutcomeMarketAccounts = {
        marketLedger: parseAddress(entry.addresses.marketLedger),
        yesMint: parseAddress(entry.addresses.yesMint),
        noMint: parseAddress(entry.addresses.noMint),
      };
      for (const [side, mint] of [
        ["yes", accounts.yesMint],
        ["no", accounts.noMint],
      ] as const) {
        const payout = payoutPerContract(side, entry.record);
        let market: OutcomeMarket | RedemptionMarket;
        if (status === "active") {
          market = new OutcomeMarket(accounts, ticker, side, mint, tokenized, this.books);
          if (tokenized) listed.push(outcomeToken(mint));
        } else if (payout !== null) {
          market = new RedemptionMarket(accounts, ticker, side, mint, payout);
        } else {
          continue;
        }
        markets.push(market);
        this.byMint.set(market.outcomeMint, market);
      }
    }
    this.current = markets;
    return listed;
  }

  /** The market of an outcome mint the venue trades or redeems, if any. */
  marketOf(mint: Address): OutcomeMintMarket | undefined {
    return this.byMint.get(mint);
  }

  /**
   * The token record of an outcome mint the venue trades or redeems, listed or not: a determined
   * market's mints and a market's not yet initialized are found by orders without being listed.
   */
  tokenOf(mint: Address): TokenRecord | undefined {
    return this.byMint.has(mint) ? outcomeToken(mint) : undefined;
  }

  /** Fetches the order books of the markets of these mints unless fresh ones are at hand. */
  async prepare(mints: readonly Address[], now = Date.now()): Promise<void> {
    const tickers = new Set<string>();
    for (const mint of mints) {
      const market = this.byMint.get(mint);
      // Redemptions pay a fixed amount: only trading markets price from a book.
      if (!(market instanceof OutcomeMarket)) continue;
      if ((this.books.get(market.ticker)?.fetchedAt ?? 0) + BOOK_TTL_MS <= now) tickers.add(market.ticker);
    }
    if (tickers.size === 0) return;
    await Promise.all(
      [...tickers].map(async (ticker) => {
        try {
          this.books.set(ticker, priceBook(await this.fetchBook(ticker), now));
        } catch {
          // No book (the upstream has none, or cannot be reached): the market quotes nothing for now.
          this.books.delete(ticker);
        }
      }),
    );
  }
}

/** Every outcome mint is a 6-decimal Token-2022 mint (contract §7). */
function outcomeToken(mint: Address): TokenRecord {
  return { mint, decimals: OUTCOME_DECIMALS, program: TOKEN_2022_PROGRAM };
}

/** Turns the reference book (bids per side, dollar strings) into bid and ask ladders in micro-USDC. */
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
