/** The trade API (contract §6), at the root path, with its own OpenAPI document at /openapi.json. */
import type { FastifyPluginAsync } from "fastify";
import type { Config } from "../../config.js";
import { registerOpenApi } from "../../http/openapi.js";
import type { ZodApp } from "../../http/types.js";
import type { IntentDesk } from "../prediction/intents.js";
import type { MarketInitDesk } from "../prediction/market-init.js";
import type { WalletVerification } from "../prediction/wallet-verification.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import type { BookStreamHub } from "../streams/book-stream.js";
import type { PriorityFeeEstimator } from "../streams/priority-fees.js";
import type { QuoteStreamHub } from "../streams/quote-stream.js";
import { bookStream } from "./book-stream.js";
import { getIntent } from "./get-intent.js";
import { getOrder } from "./get-order.js";
import { getOrderStatus, type OrderStatusDesk } from "./get-order-status.js";
import { getPredictionMarketInit } from "./get-prediction-market-init.js";
import { getPriorityFees } from "./get-priority-fees.js";
import { getQuote } from "./get-quote.js";
import { listTokens } from "./list-tokens.js";
import { listTokensWithDecimals } from "./list-tokens-with-decimals.js";
import { listVenues } from "./list-venues.js";
import { postSwap } from "./post-swap.js";
import { postSwapInstructions } from "./post-swap-instructions.js";
import { priorityFeesStream } from "./priority-fees-stream.js";
import { quoteStream } from "./quote-stream.js";
import { submitIntent } from "./submit-intent.js";
import { verifyWallet } from "./verify-wallet.js";

export interface TradingApi {
  book: TradingBook;
  desk: OrderDesk;
  intents: IntentDesk;
  status: OrderStatusDesk;
  quotes: QuoteStreamHub;
  books: BookStreamHub;
  priorityFees: PriorityFeeEstimator;
  wallets: WalletVerification;
  /** Market initializations; absent where the venue cannot initialize markets (no sandbox keys). */
  marketInit?: MarketInitDesk;
}

/** Registers every trade route and `/openapi.json` in one encapsulated context. */
export function registerTradeApi(trading: TradingApi, mode: Config["MODE"]): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as ZodApp;
    await registerOpenApi(
      app,
      {
        title: "trade-api",
        description: "Oddsgate trading: token registry, venues and firm quotes with signed transactions.",
      },
      mode,
    );
    listTokensWithDecimals(app, trading.book);
    listTokens(app, trading.book);
    listVenues(app, trading.book);
    getOrder(app, trading.book, trading.desk);
    getQuote(app, trading.book, trading.desk);
    postSwap(app, trading.book, trading.desk);
    postSwapInstructions(app, trading.book, trading.desk);
    getIntent(app, trading.book, trading.intents);
    submitIntent(app, trading.intents);
    getOrderStatus(app, trading.status);
    getPredictionMarketInit(app, trading.marketInit);
    quoteStream(app, trading.quotes);
    bookStream(app, trading.books);
    getPriorityFees(app, trading.priorityFees);
    priorityFeesStream(app, trading.priorityFees);
    verifyWallet(app, trading.wallets);
  };
}
