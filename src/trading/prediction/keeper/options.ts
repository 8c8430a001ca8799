import type { Kysely } from "kysely";
import type { Chain } from "../../../chain/chain.js";
import type { GenesisMarket } from "../../../chain/market-ledger.js";
import type { Tables } from "../../../storage/database.js";
import type { UpstreamPortfolio } from "../../../upstream/portfolio.js";
import type { PoolAuthorities } from "../../spot/pools/authority.js";
import type { BookLogger, TradingBook } from "../../spot/trading-book.js";
import type { VenueSigningKeys } from "../orders.js";

export interface OrderKeeperOptions {
  db: Kysely<Tables>;
  chain: Chain;
  book: TradingBook;
  authorities: PoolAuthorities;
  /** The venue's mint authority and treasury (sandbox only): without them prediction orders only refund. */
  venue?: VenueSigningKeys;
  /**
   * Creates a market's ledgers and outcome mints (every rail's) on the chain unless they exist (sandbox
   * only, with `venue`); without it markets are never initialized here and their initialization is refunded.
   */
  initMarket?: (market: GenesisMarket) => Promise<unknown>;
  logger?: BookLogger;
  /**
   * The venue's account on the upstream exchange: with it, a prediction-market order fills on chain
   * what its order there filled (UPSTREAM_TRADING).
   */
  upstream?: UpstreamPortfolio;
  /** How long a settled intent's escrow stays open for its client to read (ms; default a minute). */
  escrowSweepDelayMs?: number;
}
