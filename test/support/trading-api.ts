/**
 * The trade API's parts over fresh storage, none started, for apps built in-process: what a venue
 * serves before its pools, registry, clock or priority fees have loaded.
 */
import type { Kysely } from "kysely";
import type { Chain } from "../../src/chain/chain.js";
import type { Tables } from "../../src/storage/database.js";
import { IntentDesk } from "../../src/trading/prediction/intents.js";
import { OrderKeeper } from "../../src/trading/prediction/keeper.js";
import { WalletVerification } from "../../src/trading/prediction/wallet-verification.js";
import { OrderStatusDesk } from "../../src/trading/routes/get-order-status.js";
import type { TradingApi } from "../../src/trading/routes/index.js";
import { OrderDesk } from "../../src/trading/spot/desk.js";
import { PoolAuthorities } from "../../src/trading/spot/pools/authority.js";
import { TradingBook } from "../../src/trading/spot/trading-book.js";
import { BookStreamHub } from "../../src/trading/streams/book-stream.js";
import { PriorityFeeEstimator } from "../../src/trading/streams/priority-fees.js";
import { QuoteStreamHub } from "../../src/trading/streams/quote-stream.js";

/** A chain every call to which fails, naming the method: nothing may reach it. */
export function refusingChain(allow: Partial<Chain> = {}): Chain {
  return new Proxy({} as Chain, {
    get: (_target, method) =>
      Reflect.get(allow, method) ?? (() => Promise.reject(new Error(`chain.${String(method)} called`))),
  });
}

/** Every part of the trade API over `db` and `chain`, none started; `replace` swaps desks for the test's own. */
export function unstartedTradingApi(
  db: Kysely<Tables>,
  chain: Chain,
  replace: {
    desk?: (book: TradingBook) => OrderDesk;
    intents?: (deps: ConstructorParameters<typeof IntentDesk>[0]) => IntentDesk;
    status?: (deps: ConstructorParameters<typeof OrderStatusDesk>[0]) => OrderStatusDesk;
  } = {},
): TradingApi {
  const authorities = new PoolAuthorities(new Uint8Array(32));
  const book = new TradingBook({ db, chain, authorities });
  const desk = replace.desk?.(book) ?? new OrderDesk(book, chain);
  const keeper = new OrderKeeper({ db, chain, book, authorities });
  const intentDeps = { db, chain, book, desk, authorities, keeper };
  return {
    book,
    desk,
    intents: replace.intents?.(intentDeps) ?? new IntentDesk(intentDeps),
    status: replace.status?.({ db, chain }) ?? new OrderStatusDesk({ db, chain }),
    quotes: new QuoteStreamHub(book),
    books: new BookStreamHub(book),
    // Never started: it has not read the chain.
    priorityFees: new PriorityFeeEstimator({ chain }),
    wallets: new WalletVerification({ db, required: false }),
  };
}
