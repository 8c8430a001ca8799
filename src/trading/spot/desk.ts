/**
 * `GET /order`, `GET /quote` and `POST /swap*`: each request goes down one way, a step per module —
 * pricing (`order-pricing.ts`), then a prediction-market route's own path (`prediction/orders.ts`) or,
 * for a spot order with a user, the checks (`order-checks.ts`) and the build, guard and signing of its
 * transaction (`spot-issue.ts`). The desk only chooses the path and retries when another instance's
 * holds or the caller's size limits stand in the way.
 */
import { randomUUID } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../../chain/chain.js";
import type { OrderResponse, QuoteResponse, RoutePlanLeg } from "../../contract/trade.js";
import { RESERVATION_LIMITS } from "../../limits.js";
import type { Tables } from "../../storage/database.js";
import { OrderRefused, TradingNotReady } from "../errors.js";
import { orderPredictionMarket } from "../prediction/orders.js";
import { FirmQuotes, ReservationConflict, type ReservationStore } from "../quotes/firm-quotes.js";
import { pairKeyOf } from "../quotes/quote-family.js";
import type { PriorityFeeLevels } from "../streams/priority-fees.js";
import { OrderChecks } from "./order-checks.js";
import { type Lend, OrderPricing } from "./order-pricing.js";
import type { OrderRequest, PricedRoute } from "./order-terms.js";
import type { PoolAuthorities } from "./pools/authority.js";
import type { Route } from "./router.js";
import {
  type IssuedOrder,
  type IssueOptions,
  type SpotOrder,
  SpotOrderBuilder,
  TransactionTooLarge,
} from "./spot-issue.js";
import type { TradingBook } from "./trading-book.js";

export { formatFraction } from "./order-pricing.js";
export type { IssuedOrder, IssueOptions } from "./spot-issue.js";
export type { OrderResponse, RoutePlanLeg };

/** Who asks for a firm quote: the key or the address its bound is counted against. */
export type ClientId = string;

/** Quotes (and, with a user, issues) orders from the trading book. */
export class OrderDesk {
  private readonly pricing: OrderPricing;
  private readonly checks: OrderChecks;
  private readonly spot: SpotOrderBuilder;

  constructor(
    private readonly book: TradingBook,
    chain: Chain,
    /** Where async (prediction-market) orders are recorded; without it they are quotes only. */
    private readonly orders?: { db: Kysely<Tables>; authorities: PoolAuthorities },
    /** The live firm quotes and their bounds (shared with the market-initialization desk). */
    private readonly firmQuotes: ReservationStore = new FirmQuotes({
      perWallet: RESERVATION_LIMITS.perWallet,
      perClient: RESERVATION_LIMITS.perClientAddress,
      poolShareBps: RESERVATION_LIMITS.poolShareBpsPerClient,
      poolHoldBps: RESERVATION_LIMITS.poolHoldBps,
    }),
    /** What recent transactions paid, for fees asked as a level; without it a level costs nothing. */
    priorityFees?: { levels(): PriorityFeeLevels },
  ) {
    this.pricing = new OrderPricing(book, chain, priorityFees);
    this.checks = new OrderChecks(book, chain, firmQuotes);
    this.spot = new SpotOrderBuilder(book, chain, firmQuotes);
  }

  /** Routes and prices a request: the part `/order` and `/intent` share. */
  price(request: OrderRequest): Promise<PricedRoute> {
    return this.pricing.priceRoute(request);
  }

  /** `GET /quote`: prices a spot swap; prediction markets trade through `/order` only. */
  async quote(request: OrderRequest): Promise<QuoteResponse> {
    // An outcome mint is refused as one before it is priced: whatever its price says, /quote does not trade it.
    for (const mint of [request.inputMint, request.outputMint])
      if (this.book.prediction?.marketOf(mint)) refuseAsync({ executionMode: "async" });
    const { priced, response } = await this.pricing.priceOrder(request);
    refuseAsync(priced.route);
    const { executionMode: _, ...quote } = response;
    // Keys set on the rest, not on a spread copy given new keys (see `parseParams` on what those cost).
    return Object.assign(quote, { requestId: randomUUID(), routingSlot: quote.contextSlot });
  }

  /** `POST /swap` and `/swap-instructions`: issues a spot swap for its user, in the shape asked. */
  async swap(
    request: OrderRequest & { userPublicKey: Address },
    client: ClientId,
    shape: IssueOptions["shape"],
  ): Promise<IssuedSwap> {
    // The request allows no async (prediction-market) route: swaps are spot only.
    const order = await this.order({ ...request, allowAsyncExec: false }, client, { shape });
    const { transaction, lastValidBlockHeight, computeUnitLimit, prioritizationFeeLamports } = order;
    if (
      transaction === undefined ||
      lastValidBlockHeight === undefined ||
      computeUnitLimit === undefined ||
      prioritizationFeeLamports === undefined
    )
      throw new Error("a spot order for a user is issued with its transaction");
    return { ...order, transaction, lastValidBlockHeight, computeUnitLimit, prioritizationFeeLamports };
  }

  /** Quotes `request` and, with a user, issues its transaction; `client` is who asks, for the bounds of firm quotes. */
  async order(
    asked: OrderRequest,
    client: ClientId = "local",
    options: IssueOptions = ORDER,
  ): Promise<IssuedOrder> {
    // Before pricing: a hold another instance makes from here on is noticed when this one reserves.
    const view = this.firmQuotes.view();
    // A re-quote is priced without its family's earlier quotes (only one of them can land); priced
    // again after a conflict, with them, in case its route left the family.
    const pair =
      asked.userPublicKey && pairKeyOf(client, asked.userPublicKey, asked.inputMint, asked.outputMint);
    const lend: Lend | undefined =
      pair && !options.attempt ? (price) => this.firmQuotes.lend(pair, price) : undefined;
    const order = await this.pricing.priceOrder(asked, lend);
    const { request, priced, response } = order;
    const { route } = priced;
    try {
      if (route.executionMode === "async")
        return await orderPredictionMarket(this.orders, request, priced, response, (wallet, sponsored) =>
          this.checks.admitAsyncOrder(wallet, client, request, priced, sponsored),
        );
      const user = request.userPublicKey;
      if (!user) return response;
      // Literals of one shape each, not copies given new keys (see `parseParams` on what those cost).
      const spot = { request: { ...request, userPublicKey: user }, priced, response, route };
      return await this.issueSpot(spot, client, { shape: options.shape, view, attempt: options.attempt });
    } catch (error) {
      if (error instanceof ReservationConflict) return this.orderAgain(asked, client, options, error);
      if (!(error instanceof TransactionTooLarge)) throw error;
      return this.orderDirect(request, route, client, options, error);
    }
  }

  /** Checks a priced spot order for its user, then builds, guards and signs its transaction. */
  private async issueSpot(
    order: Omit<SpotOrder, "checked" | "client">,
    client: ClientId,
    options: IssueOptions,
  ): Promise<IssuedOrder> {
    const checked = await this.checks.spotOrder(order.request, order.priced, order.route);
    const { request, priced, response, route } = order;
    return this.spot.issue({ request, priced, response, route, checked, client }, options);
  }

  /**
   * A two-leg route too large for the caller's limits may still fit as a direct one; with no direct
   * route at all, what stands in the way is still the limit.
   */
  private async orderDirect(
    request: OrderRequest,
    route: Route,
    client: ClientId,
    options: IssueOptions,
    error: TransactionTooLarge,
  ): Promise<IssuedOrder> {
    const tooLarge = new OrderRefused(error.refusal, error.message);
    if (route.legs.length === 1 || request.onlyDirectRoutes) throw tooLarge;
    try {
      return await this.order({ ...request, onlyDirectRoutes: true }, client, options);
    } catch (direct) {
      throw direct instanceof OrderRefused && direct.reason === "route_not_found" ? tooLarge : direct;
    }
  }

  /**
   * Prices and issues an order again after another instance held output of its pools while it was
   * priced (the holds are now in the pools here), a few times at most.
   */
  private orderAgain(
    asked: OrderRequest,
    client: ClientId,
    options: IssueOptions,
    conflict: ReservationConflict,
  ): Promise<IssuedOrder> {
    const attempt = (options.attempt ?? 0) + 1;
    if (attempt >= MAX_RESERVATION_ATTEMPTS)
      throw new TradingNotReady("holds", `${conflict.message}, ${attempt} times; retry shortly`);
    return this.order(asked, client, { ...options, attempt });
  }
}

/** Prices of one order after other instances' holds conflicted, at most, before it is refused as not ready. */
const MAX_RESERVATION_ATTEMPTS = 4;

const ORDER: IssueOptions = { shape: "transaction" };

/** A spot swap issued for its user: the transaction and its compute budget are always there. */
export type IssuedSwap = IssuedOrder &
  Required<
    Pick<
      OrderResponse,
      "transaction" | "lastValidBlockHeight" | "computeUnitLimit" | "prioritizationFeeLamports"
    >
  >;

function refuseAsync(route: Pick<Route, "executionMode">): void {
  if (route.executionMode === "async")
    throw new OrderRefused(
      "use_order_endpoint_for_prediction_markets",
      "prediction-market outcome tokens trade through GET /order",
    );
}
