/**
 * Starts the trading side of a venue: pool authorities, the demo pools on a fresh sandbox chain, the
 * trading book (kept fresh every slot) and the order desk.
 */

import type { Address } from "@solana/kit";
import type { Chain } from "../chain/chain.js";
import { faucet } from "../chain/faucet.js";
import type { GenesisMarket } from "../chain/market-ledger.js";
import { loadVenueKeys } from "../chain/venue-keys.js";
import type { Config } from "../config.js";
import { SETTLEMENT_MINTS } from "../markets/accounts.js";
import type { Storage } from "../storage/database.js";
import { IntentDesk } from "../trading/prediction/intents.js";
import { OrderKeeper } from "../trading/prediction/keeper.js";
import { MarketInitDesk } from "../trading/prediction/market-init.js";
import type { PredictionOrderDeps, VenueSigningKeys } from "../trading/prediction/orders.js";
import { WalletVerification } from "../trading/prediction/wallet-verification.js";
import { FirmQuotes, type ReservationStore } from "../trading/quotes/firm-quotes.js";
import { RedisReservations } from "../trading/quotes/reservations-redis.js";
import { TicketSweeper } from "../trading/quotes/ticket-sweeper.js";
import { OrderStatusDesk } from "../trading/routes/get-order-status.js";
import { OrderDesk } from "../trading/spot/desk.js";
import { PoolAuthorities } from "../trading/spot/pools/authority.js";
import { TICKET_FLOAT } from "../trading/spot/pools/create.js";
import { createDemoPools } from "../trading/spot/pools/demo.js";
import { type BookLogger, SLOT_MS, TradingBook } from "../trading/spot/trading-book.js";
import { PredictionVenue } from "../trading/spot/venues/prediction.js";
import { BookStreamHub } from "../trading/streams/book-stream.js";
import { PriorityFeeEstimator } from "../trading/streams/priority-fees.js";
import { QuoteStreamHub } from "../trading/streams/quote-stream.js";
import { SharedQuotes } from "../trading/streams/shared-quotes.js";
import type { UpstreamPortfolio } from "../upstream/portfolio.js";
import type { ReferenceBook } from "../upstream/relay.js";
import type { ChainConnection } from "./connect-chain.js";

export interface Trading {
  book: TradingBook;
  desk: OrderDesk;
  intents: IntentDesk;
  status: OrderStatusDesk;
  keeper: OrderKeeper;
  /** Issues prediction-market initializations (`GET /prediction-market-init`). */
  marketInit: MarketInitDesk;
  quotes: QuoteStreamHub;
  /** The `/book-stream` connections. */
  books: BookStreamHub;
  /** Priority fee levels read from the chain. */
  priorityFees: PriorityFeeEstimator;
  /** The verified wallets, and whether prediction-market buys need one. */
  wallets: WalletVerification;
  /** Takes back the rent of quote tickets no transaction can open any more. */
  tickets: TicketSweeper;
  /** Demo pools this start created (0 unless the database had none yet). */
  demoPoolsCreated: number;
  close(): Promise<void>;
}

/** Loads the trading state; with the sandbox chain and the demo enabled, creates the demo pools once. */
export async function startTrading(
  config: Pick<
    Config,
    | "DATA_DIR"
    | "DEMO_CATALOGUE"
    | "REDIS_URL"
    | "REDIS_PREFIX"
    | "FIRM_QUOTES_PER_WALLET"
    | "FIRM_QUOTES_PER_CLIENT"
    | "MODE"
    | "WALLET_VERIFICATION"
    | "FIRM_QUOTE_POOL_SHARE_BPS"
    | "FIRM_QUOTE_POOL_HOLD_BPS"
    | "ESCROW_SWEEP_DELAY_MS"
  >,
  deps: {
    storage: Pick<Storage, "db">;
    chain: ChainConnection;
    venueSeed: string;
    /** The upstream's order books, for the prediction venue; without it only pools trade. */
    fetchBook?: (ticker: string) => Promise<ReferenceBook>;
    /** The venue's upstream account: prediction-market fills are executed there first. */
    upstreamPortfolio?: UpstreamPortfolio;
    logger?: BookLogger;
  },
): Promise<Trading> {
  const authorities = PoolAuthorities.load(config.DATA_DIR);
  const { sandbox } = deps.chain;
  const demoPoolsCreated =
    sandbox && config.DEMO_CATALOGUE
      ? await createDemoPools(
          { db: deps.storage.db, chain: deps.chain.chain, signers: sandbox.signers, authorities },
          deps.venueSeed,
        )
      : 0;
  // The sandbox's treasury and mint authority are the venue's too: no order may name them.
  const venueKeys = sandbox ? Object.values(sandbox.venueKeys).map((keypair) => keypair.address) : [];
  const book = new TradingBook({
    db: deps.storage.db,
    chain: deps.chain.chain,
    authorities,
    venueKeys,
    ...(deps.fetchBook
      ? {
          prediction: new PredictionVenue(
            deps.fetchBook,
            async (address) => (await deps.chain.chain.getAccountInfo(address)) !== null,
          ),
        }
      : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  await book.start();
  if (sandbox) await fundTicketFloats(book, deps.chain.chain);
  const { db } = deps.storage;
  const chain = deps.chain.chain;
  // One set of firm-quote bounds for everything a client makes the venue hold or store for it; with
  // Redis, held for every instance on it, so no two promise the same tokens.
  const limits = {
    perWallet: config.FIRM_QUOTES_PER_WALLET,
    perClient: config.FIRM_QUOTES_PER_CLIENT,
    poolShareBps: config.FIRM_QUOTE_POOL_SHARE_BPS,
    poolHoldBps: config.FIRM_QUOTE_POOL_HOLD_BPS,
  };
  const shared = config.REDIS_URL
    ? await RedisReservations.connect({
        url: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        limits,
        pool: (address) => book.pool(address as Address),
        ...(deps.logger ? { logger: deps.logger } : {}),
      })
    : undefined;
  const firmQuotes: ReservationStore = shared ?? new FirmQuotes(limits);
  const marketInit = new MarketInitDesk({ db, chain, book, authorities, firmQuotes });
  const wallets = new WalletVerification({
    db,
    required: config.WALLET_VERIFICATION ?? config.MODE === "production",
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  await wallets.start();
  // Async orders need the book, the chain, market initialization and the verified wallets besides where they are recorded.
  const predictionOrders: PredictionOrderDeps = { db, authorities, book, chain, marketInit, wallets };
  const priorityFees = new PriorityFeeEstimator(
    { chain },
    { onError: (error) => deps.logger?.error({ err: error }, "priority fees: reading the chain failed") },
  );
  priorityFees.start();
  const desk = new OrderDesk(book, chain, predictionOrders, firmQuotes, priorityFees);
  const tickets = new TicketSweeper({
    store: firmQuotes,
    chain,
    book,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  tickets.start();
  // Only the sandbox's venue holds the outcome mints' authority and a USDC and CASH treasury to settle with.
  const venue = sandbox ? await fundedTreasury(deps.chain, config.DATA_DIR) : undefined;
  const keeper = new OrderKeeper({
    db,
    chain,
    book,
    authorities,
    // Only the sandbox can create a market's accounts (and holds the mint authority that needs them).
    ...(venue ? { venue, initMarket: (market: GenesisMarket) => deps.chain.addMarkets([market]) } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    escrowSweepDelayMs: config.ESCROW_SWEEP_DELAY_MS,
    ...(deps.upstreamPortfolio ? { upstream: deps.upstreamPortfolio } : {}),
  });
  keeper.start();
  const quotes = new QuoteStreamHub(book);
  // A fenced sandbox chain's instance leaves the shared streams to one that can quote.
  const chainIsWriter = () => !chain.unhealthy?.();
  if (config.REDIS_URL) {
    quotes.share(
      await SharedQuotes.connect({
        url: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        slotMs: SLOT_MS,
        compute: (pairs) => quotes.computeQuotes(pairs),
        canLead: chainIsWriter,
        ...(deps.logger ? { logger: deps.logger } : {}),
      }),
    );
  }
  quotes.start();
  const books = new BookStreamHub(book);
  if (config.REDIS_URL) {
    books.share(
      await SharedQuotes.connect({
        url: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        name: "book-stream",
        slotMs: SLOT_MS,
        compute: (pairs) => books.computeQuotes(pairs),
        canLead: chainIsWriter,
        ...(deps.logger ? { logger: deps.logger } : {}),
      }),
    );
  }
  books.start();
  return {
    book,
    desk,
    intents: new IntentDesk({ db, chain, book, desk, authorities, keeper }),
    status: new OrderStatusDesk({ db, chain }),
    keeper,
    marketInit,
    quotes,
    books,
    priorityFees,
    wallets,
    tickets,
    demoPoolsCreated,
    async close() {
      await Promise.all([quotes.stop(), books.stop()]);
      priorityFees.stop();
      await wallets.stop();
      book.stop();
      tickets.stop();
      await keeper.stop();
      await shared?.close();
    },
  };
}

/**
 * Tops up, on the sandbox, every pool authority holding less than half its ticket float (pools
 * created before tickets existed hold none).
 */
async function fundTicketFloats(book: TradingBook, chain: Chain): Promise<void> {
  for (const pool of book.allPools()) {
    const lamports = await chain.getBalance(pool.authority.address);
    if (lamports < TICKET_FLOAT / 2n)
      await chain.requestAirdrop(pool.authority.address, TICKET_FLOAT - lamports);
  }
}

/**
 * What the sandbox treasury keeps of each settlement mint (USDC, CASH) to pay sellers of outcome tokens
 * (it is topped up at each start).
 */
const TREASURY_FLOAT = 1_000_000_000_000n;

/** The sandbox venue's signing keys, its treasury holding at least TREASURY_FLOAT of each settlement mint. */
async function fundedTreasury(connection: ChainConnection, dataDir: string): Promise<VenueSigningKeys> {
  const keys = loadVenueKeys(dataDir);
  const sandbox = connection.sandbox;
  if (sandbox) {
    for (const mint of SETTLEMENT_MINTS) {
      const holdings = await connection.chain.getTokenAccountsByOwner(keys.treasury.address, { mint });
      const held = holdings.reduce((sum, account) => sum + account.amount, 0n);
      if (held < TREASURY_FLOAT)
        await faucet(connection.chain, sandbox.signers, keys.treasury.address, mint, TREASURY_FLOAT - held);
    }
  }
  return keys;
}
