/**
 * Starts the trading side of a venue: pool authorities, the demo pools on a fresh sandbox chain, the
 * trading book (kept fresh every slot) and the order desk.
 */
import type { ChainConnection } from "../chain/connect.js";
import type { Config } from "../config.js";
import type { Storage } from "../storage/database.js";
import type { ReferenceBook } from "../upstream/relay.js";
import { type BookLogger, TradingBook } from "./book.js";
import { OrderDesk } from "./order.js";
import { PoolAuthorities } from "./pools/authority.js";
import { createDemoPools } from "./pools/demo.js";
import { PredictionVenue } from "./venues/prediction.js";

export interface Trading {
  book: TradingBook;
  desk: OrderDesk;
  /** Demo pools this start created (0 unless the database had none yet). */
  demoPoolsCreated: number;
  close(): void;
}

/** Loads the trading state; with the sandbox chain and the demo enabled, creates the demo pools once. */
export async function startTrading(
  config: Pick<Config, "DATA_DIR" | "DEMO_CATALOGUE">,
  deps: {
    storage: Pick<Storage, "db">;
    chain: ChainConnection;
    venueSeed: string;
    /** The upstream's order books, for the prediction venue; without it only pools trade. */
    fetchBook?: (ticker: string) => Promise<ReferenceBook>;
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
  const book = new TradingBook({
    db: deps.storage.db,
    chain: deps.chain.chain,
    authorities,
    ...(deps.fetchBook ? { prediction: new PredictionVenue(deps.fetchBook) } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  await book.start();
  return { book, desk: new OrderDesk(book, deps.chain.chain), demoPoolsCreated, close: () => book.stop() };
}
