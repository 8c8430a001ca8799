/**
 * The simulator's order handling for its accounts: an order takes from the market's current book (the
 * dynamics' book less what takers took), level by level at each level's price; its fills move the
 * account's balance and position, take their depth from the book and print on the tape, all in the
 * request. A good-till-canceled remainder rests, holding its cost from the balance, and stays resting
 * until filled, canceled, decreased, expired, or its market closes. A resting order trades with the
 * exchange's takers (the dynamics' seeded trades): a taker selling YES at or below a resting bid fills
 * it at the bid's price, one buying YES at or above a resting ask fills the ask, best price first, each
 * taker's contracts once across every account. Settled markets pay out their positions.
 */
import { randomUUID } from "node:crypto";
import { type BookImpact, restingBook } from "./book-impact.js";
import { ONE_DOLLAR, type SimulatedTrade } from "./dynamics.js";
import { SETTLED_STATUSES, type SimulatedExchange, type SimulatedMarket } from "./exchange.js";
import { makerFee, takerFee } from "./fees.js";
import {
  type AccountLedger,
  type BookSide,
  type FillRecord,
  LedgerError,
  type OrderRecord,
  type PositionRecord,
  type SettlementRecord,
  type TimeInForce,
} from "./ledger.js";
import { ExchangeRequestError } from "./market-data.js";
import { walkBook } from "./matching.js";
import { applyFill, emptyPosition, outlayPerContract, settlePosition } from "./positions.js";
import type { TradePrints } from "./trade-prints.js";

/** An order as the desk takes it, whichever of Kalshi's request shapes it came in. */
export interface OrderTicket {
  ticker: string;
  /** "" when the client gave none. */
  clientOrderId: string;
  action: "buy" | "sell";
  side: "yes" | "no";
  count: number;
  /** The limit as a YES price, basis points. */
  yesPrice: number;
  type: "limit" | "market";
  timeInForce: TimeInForce;
  /** The most the contracts may cost, centicents; the order then fills whole or not at all. */
  buyMaxCost: number | null;
  postOnly: boolean;
  reduceOnly: boolean;
  expirationTs: number | null;
  selfTradePrevention: "taker_at_cross" | "maker" | null;
  cancelOnPause: boolean;
}

/** What the desk reads and moves besides the ledger. */
export interface DeskMarkets {
  readonly exchange: SimulatedExchange;
  impact: BookImpact;
  prints: TradePrints;
}

/** Kalshi's side of the YES book for an order: buying YES or selling NO bids, the others ask. */
export const bookSideOf = (action: "buy" | "sell", side: "yes" | "no"): BookSide =>
  (action === "buy") === (side === "yes") ? "bid" : "ask";

/** Statuses a resting order survives: trading, or paused. */
const RESTING_STATUSES = new Set(["active", "inactive"]);

/** How far back a resting order is matched against the takers when its account was not seen for long. */
const MATCH_WINDOW_SECONDS = 7 * 86_400;
/** Taker trades whose contracts are remembered as taken: far more than a week of one busy market. */
const TAKEN_TRADES_KEPT = 100_000;

const refused = (status: number, code: string, message: string, details?: string) =>
  new ExchangeRequestError(status, code, message, details);

export class OrderDesk {
  /** Contracts of each taker trade that resting orders took, by trade id. */
  private readonly taken = new Map<string, number>();
  /** The time up to which each resting order has been matched against the takers. */
  private readonly matchedThrough = new Map<string, number>();

  constructor(
    private readonly markets: DeskMarkets,
    private readonly ledger: AccountLedger,
  ) {}

  /** Places `ticket` for `userId` at `now`: the order as it stands after matching, and its fills. */
  place(userId: string, ticket: OrderTicket, now: number): { order: OrderRecord; fills: FillRecord[] } {
    const market = this.markets.exchange.marketsByTicker.get(ticket.ticker);
    if (!market) throw refused(404, "market_not_found", "market not found", ticket.ticker);
    // Client order ids are the account's for good: a canceled order's id is not free again (as on Kalshi).
    if (ticket.clientOrderId !== "" && this.ledger.orderByClientId(userId, ticket.clientOrderId)) {
      throw refused(409, "order_already_exists", "order already exists");
    }
    const book = market.lifecycle.status === "active" ? restingBook(market, this.markets.impact, now) : null;
    if (!book)
      throw refused(409, "market_closed", "market closed", `${ticket.ticker} is ${market.lifecycle.status}`);
    const bookSide = bookSideOf(ticket.action, ticket.side);
    const held = this.ledger.position(userId, ticket.ticker)?.position ?? 0;
    const count = ticket.reduceOnly ? Math.min(ticket.count, reducible(bookSide, held)) : ticket.count;
    if (count === 0)
      throw refused(400, "invalid_order", "invalid order", "reduce only: no position to reduce");
    const takes = walkBook(book, bookSide, ticket.yesPrice, count);
    if (ticket.postOnly && takes.length > 0)
      throw refused(400, "invalid_order", "invalid order", "post only cross");
    const filled = takes.reduce((sum, take) => sum + take.count, 0);
    const cost = takes.reduce(
      (sum, take) => sum + outlayPerContract(bookSide, take.yesPrice) * take.count,
      0,
    );
    const killed =
      (ticket.timeInForce === "fill_or_kill" || ticket.buyMaxCost !== null) &&
      (filled < count || (ticket.buyMaxCost !== null && cost > ticket.buyMaxCost));
    if (killed) {
      throw refused(
        409,
        "fill_or_kill_insufficient_resting_volume",
        "fill or kill insufficient resting volume",
      );
    }

    const series = this.seriesOf(market);
    const orderId = randomUUID();
    let position =
      this.ledger.position(userId, ticket.ticker) ??
      emptyPosition(ticket.ticker, market.record.eventTicker, now);
    let balanceDelta = 0;
    const fills: FillRecord[] = takes.map((take) => {
      const fee = takerFee(series, take.yesPrice, take.count);
      const moved = applyFill(position, { bookSide, yesPrice: take.yesPrice, count: take.count, fee }, now);
      position = moved.position;
      balanceDelta += moved.balanceDelta;
      const { action, side } = ticket;
      const fillId = randomUUID();
      return {
        fillId,
        orderId,
        ticker: ticket.ticker,
        action,
        side,
        bookSide,
        count: take.count,
        yesPrice: take.yesPrice,
        fee,
        isTaker: true,
        ts: now,
      };
    });
    const remaining = count - filled;
    const rests = remaining > 0 && ticket.timeInForce === "good_till_canceled" && ticket.type === "limit";
    const hold = rests ? remaining * outlayPerContract(bookSide, ticket.yesPrice) : 0;
    const order: OrderRecord = {
      orderId,
      clientOrderId: ticket.clientOrderId,
      ticker: ticket.ticker,
      action: ticket.action,
      side: ticket.side,
      bookSide,
      type: ticket.type,
      yesPrice: ticket.yesPrice,
      timeInForce: ticket.timeInForce,
      initialCount: count,
      fillCount: filled,
      remainingCount: rests ? remaining : 0,
      takerFillCost: cost,
      takerFees: fills.reduce((sum, fill) => sum + fill.fee, 0),
      makerFillCost: 0,
      makerFees: 0,
      held: hold,
      status: remaining === 0 ? "executed" : rests ? "resting" : "canceled",
      selfTradePrevention: ticket.selfTradePrevention,
      postOnly: ticket.postOnly,
      cancelOnPause: ticket.cancelOnPause,
      expirationTs: ticket.expirationTs,
      createdTs: now,
      lastUpdateTs: now,
    };
    try {
      this.ledger.commit(
        userId,
        {
          balanceDelta: balanceDelta - hold,
          orders: [order],
          fills,
          positions: filled > 0 ? [position] : [],
        },
        now,
      );
    } catch (error) {
      if (error instanceof LedgerError) throw refused(400, "insufficient_balance", "insufficient balance");
      throw error;
    }
    for (const take of takes) {
      this.markets.impact.take(ticket.ticker, take.level, take.levelPrice, take.count, now);
    }
    for (const fill of fills) {
      this.markets.prints.print({
        tradeId: fill.fillId,
        ticker: fill.ticker,
        time: now,
        count: fill.count,
        takerSide: fill.bookSide === "bid" ? "yes" : "no",
        yesPrice: fill.yesPrice,
      });
    }
    return { order, fills };
  }

  /** Cancels a resting order, returning what it held: the order, and how many contracts it no longer asks for. */
  cancel(userId: string, orderId: string, now: number): { order: OrderRecord; reducedBy: number } {
    const order = this.restingOrder(userId, orderId);
    const canceled = this.withRemaining(order, 0, now);
    this.ledger.commit(userId, { balanceDelta: order.held, orders: [canceled] }, now);
    return { order: canceled, reducedBy: order.remainingCount };
  }

  /** Lowers a resting order's remainder to `remaining` (0 cancels it), releasing what the rest held. */
  decrease(userId: string, orderId: string, remaining: number, now: number): OrderRecord {
    const order = this.restingOrder(userId, orderId);
    if (remaining >= order.remainingCount) {
      throw refused(
        400,
        "invalid_order",
        "invalid order",
        `the order rests ${order.remainingCount} contracts`,
      );
    }
    const decreased = this.withRemaining(order, remaining, now);
    this.ledger.commit(userId, { balanceDelta: order.held - decreased.held, orders: [decreased] }, now);
    return decreased;
  }

  /**
   * Brings `userId`'s account up to `now`: resting orders whose market stopped trading (or paused, for
   * those that asked) or that expired are canceled, and positions in determined markets are paid out.
   */
  catchUp(userId: string, now: number): void {
    this.fillFromTakers(userId, now);
    const { marketsByTicker } = this.markets.exchange;
    const orders: OrderRecord[] = [];
    let balanceDelta = 0;
    for (const order of this.ledger.orders(userId)) {
      if (order.status !== "resting") continue;
      const status = marketsByTicker.get(order.ticker)?.lifecycle.status;
      const over =
        status === undefined ||
        !RESTING_STATUSES.has(status) ||
        (status === "inactive" && order.cancelOnPause) ||
        (order.expirationTs !== null && order.expirationTs <= now);
      if (!over) continue;
      orders.push(this.withRemaining(order, 0, now));
      balanceDelta += order.held;
    }
    const positions: PositionRecord[] = [];
    const settlements: SettlementRecord[] = [];
    for (const position of this.ledger.positions(userId)) {
      const market = marketsByTicker.get(position.ticker);
      const value = market ? settlementValue(market) : null;
      if (position.settled || value === null || !market) continue;
      const settled = settlePosition(position, value, now);
      positions.push(settled.position);
      balanceDelta += settled.revenue;
      settlements.push({
        ticker: position.ticker,
        eventTicker: position.eventTicker,
        marketResult: market.lifecycle.result === "" ? "scalar" : market.lifecycle.result,
        value,
        yesCount: Math.max(0, position.position),
        yesCost: position.position > 0 ? position.exposure : 0,
        noCount: Math.max(0, -position.position),
        noCost: position.position < 0 ? position.exposure : 0,
        revenue: settled.revenue,
        settledTs: market.lifecycle.settledTs ?? now,
      });
    }
    if (orders.length > 0 || positions.length > 0) {
      this.ledger.commit(userId, { balanceDelta, orders, positions, settlements }, now);
    }
  }

  /** Fills `userId`'s resting orders from the takers that traded since each was last matched, in time order. */
  private fillFromTakers(userId: string, now: number): void {
    const byTicker = new Map<string, OrderRecord[]>();
    for (const order of this.ledger.orders(userId)) {
      if (order.status !== "resting") continue;
      const list = byTicker.get(order.ticker);
      if (list) list.push(order);
      else byTicker.set(order.ticker, [order]);
    }
    for (const [ticker, resting] of byTicker) {
      const market = this.markets.exchange.marketsByTicker.get(ticker);
      // A paused or closed market's takers fill nothing, then or later.
      if (market?.lifecycle.status === "active") this.matchMarket(userId, market, resting, now);
      for (const order of resting) this.matchedThrough.set(order.orderId, now);
    }
  }

  private matchMarket(userId: string, market: SimulatedMarket, resting: OrderRecord[], now: number): void {
    const since = (order: OrderRecord) =>
      Math.max(this.matchedThrough.get(order.orderId) ?? order.createdTs, now - MATCH_WINDOW_SECONDS);
    const orders = new Map(resting.map((order) => [order.orderId, order]));
    const series = this.seriesOf(market);
    let position =
      this.ledger.position(userId, market.record.ticker) ??
      emptyPosition(market.record.ticker, market.record.eventTicker, now);
    let balanceDelta = 0;
    const fills: FillRecord[] = [];
    const first = Math.min(...resting.map(since));
    for (let minute = Math.floor(first / 60); minute <= Math.floor(now / 60); minute++) {
      const trade = market.dynamics.tradeInMinute(minute);
      if (!trade || trade.time > now) continue;
      let left = trade.count - (this.taken.get(trade.tradeId) ?? 0);
      const crossing = [...orders.values()]
        .filter((order) => order.remainingCount > 0 && since(order) < trade.time && crosses(order, trade))
        .sort(priority);
      for (const order of crossing) {
        if (left === 0) break;
        const count = Math.min(left, order.remainingCount);
        left -= count;
        const outlay = outlayPerContract(order.bookSide, order.yesPrice) * count;
        const fee = makerFee(series, order.yesPrice, count);
        const { bookSide, yesPrice } = order;
        const moved = applyFill(position, { bookSide, yesPrice, count, fee }, trade.time);
        position = moved.position;
        // The fill is paid from what the order held.
        balanceDelta += moved.balanceDelta + outlay;
        const remainingCount = order.remainingCount - count;
        orders.set(order.orderId, {
          ...order,
          fillCount: order.fillCount + count,
          remainingCount,
          held: order.held - outlay,
          makerFillCost: order.makerFillCost + outlay,
          makerFees: order.makerFees + fee,
          status: remainingCount === 0 ? "executed" : "resting",
          lastUpdateTs: trade.time,
        });
        fills.push({
          fillId: randomUUID(),
          orderId: order.orderId,
          ticker: order.ticker,
          action: order.action,
          side: order.side,
          bookSide,
          count,
          yesPrice,
          fee,
          isTaker: false,
          ts: trade.time,
        });
      }
      if (left < trade.count) this.remember(trade.tradeId, trade.count - left);
    }
    if (fills.length === 0) return;
    const changed = [...orders.values()].filter((order) =>
      fills.some((fill) => fill.orderId === order.orderId),
    );
    this.ledger.commit(userId, { balanceDelta, orders: changed, fills, positions: [position] }, now);
  }

  private remember(tradeId: string, taken: number): void {
    if (this.taken.size >= TAKEN_TRADES_KEPT && !this.taken.has(tradeId)) this.taken.clear();
    this.taken.set(tradeId, taken);
  }

  private restingOrder(userId: string, orderId: string): OrderRecord {
    const order = this.ledger.order(userId, orderId);
    // Kalshi answers 404 for an order that is not resting as for one it never had.
    if (order?.status !== "resting") throw refused(404, "not_found", "order not found", orderId);
    return order;
  }

  private withRemaining(order: OrderRecord, remaining: number, now: number): OrderRecord {
    return {
      ...order,
      remainingCount: remaining,
      held: remaining * outlayPerContract(order.bookSide, order.yesPrice),
      status: remaining === 0 ? "canceled" : order.status,
      lastUpdateTs: now,
    };
  }

  private seriesOf(market: SimulatedMarket) {
    const { exchange } = this.markets;
    const event = exchange.eventsByTicker.get(market.record.eventTicker);
    return event ? exchange.seriesByTicker.get(event.record.seriesTicker) : undefined;
  }
}

/** Whether `trade`'s taker reached `order`'s price: a YES seller its bid, a YES buyer its ask. */
function crosses(order: OrderRecord, trade: SimulatedTrade): boolean {
  return order.bookSide === "bid"
    ? trade.takerSide === "no" && trade.yesPrice <= order.yesPrice
    : trade.takerSide === "yes" && trade.yesPrice >= order.yesPrice;
}

/** Best price first (the highest bid, the lowest ask), then the oldest. */
function priority(a: OrderRecord, b: OrderRecord): number {
  const better = a.bookSide === "bid" ? b.yesPrice - a.yesPrice : a.yesPrice - b.yesPrice;
  return better !== 0 ? better : a.createdTs - b.createdTs;
}

/** Contracts an order on `bookSide` may close of a position of `held` (YES positive). */
function reducible(bookSide: BookSide, held: number): number {
  return Math.max(0, bookSide === "bid" ? -held : held);
}

/** What a YES contract of `market` pays, basis points, once it is determined; null before. */
function settlementValue(market: SimulatedMarket): number | null {
  const { lifecycle } = market;
  if (!SETTLED_STATUSES.has(lifecycle.status)) return null;
  if (lifecycle.result === "yes") return ONE_DOLLAR;
  if (lifecycle.result === "no") return 0;
  return lifecycle.scalarOutcomePct;
}
