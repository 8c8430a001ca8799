/**
 * The simulator's accounts: balances, orders, fills, positions and settlements, behind one small
 * interface whose only write is `commit`, all of one change or none of it (so a stored ledger can make
 * it one transaction). Money is integer centicents ($0.0001, the basis points prices are kept in), the
 * precision Kalshi keeps a direct member's balance in; counts are whole contracts.
 */

/** Kalshi's side of the YES book: `bid` buys YES, `ask` sells YES (buys NO). */
export type BookSide = "bid" | "ask";
export type OrderStatus = "resting" | "canceled" | "executed";
export type TimeInForce = "fill_or_kill" | "immediate_or_cancel" | "good_till_canceled";

export interface AccountRecord {
  userId: string;
  /** Available balance, centicents: what resting orders hold is not in it. */
  balance: number;
  /** Unix seconds of the last change. */
  updatedTs: number;
}

export interface OrderRecord {
  orderId: string;
  clientOrderId: string;
  ticker: string;
  /** As asked: Kalshi's legacy direction, kept for its `action` and `side` fields. */
  action: "buy" | "sell";
  side: "yes" | "no";
  bookSide: BookSide;
  type: "limit" | "market";
  /** The limit as a YES price, basis points. */
  yesPrice: number;
  timeInForce: TimeInForce;
  initialCount: number;
  fillCount: number;
  remainingCount: number;
  /** What the fills cost (the contracts bought, YES for a bid, NO for an ask), centicents. */
  takerFillCost: number;
  takerFees: number;
  /** What its fills as a resting order cost, centicents. */
  makerFillCost: number;
  makerFees: number;
  /** Centicents held from the balance for the resting remainder. */
  held: number;
  status: OrderStatus;
  selfTradePrevention: "taker_at_cross" | "maker" | null;
  postOnly: boolean;
  cancelOnPause: boolean;
  /** Unix seconds, or null for an order that rests until canceled. */
  expirationTs: number | null;
  createdTs: number;
  lastUpdateTs: number;
}

export interface FillRecord {
  fillId: string;
  orderId: string;
  ticker: string;
  action: "buy" | "sell";
  side: "yes" | "no";
  bookSide: BookSide;
  count: number;
  /** Basis points. */
  yesPrice: number;
  /** Centicents. */
  fee: number;
  isTaker: boolean;
  ts: number;
}

export interface PositionRecord {
  ticker: string;
  eventTicker: string;
  /** Contracts: YES positive, NO negative (Kalshi nets the two). */
  position: number;
  /** What the open contracts cost, centicents. */
  exposure: number;
  totalTraded: number;
  realizedPnl: number;
  feesPaid: number;
  lastUpdatedTs: number;
  /** Paid out when its market was determined: the settlement tells it from then on. */
  settled: boolean;
}

export interface SettlementRecord {
  ticker: string;
  eventTicker: string;
  marketResult: "yes" | "no" | "scalar";
  /** What one YES contract paid, basis points. */
  value: number;
  yesCount: number;
  yesCost: number;
  noCount: number;
  noCost: number;
  /** Centicents paid out. */
  revenue: number;
  settledTs: number;
}

/** One change to one account: applied whole, or refused whole. */
export interface LedgerEntry {
  balanceDelta: number;
  /** New orders, or new states of known ones (by order id). */
  orders?: readonly OrderRecord[];
  fills?: readonly FillRecord[];
  /** New states of positions (by ticker). */
  positions?: readonly PositionRecord[];
  settlements?: readonly SettlementRecord[];
}

export class LedgerError extends Error {}

export interface AccountLedger {
  /** Opens an account with `balance` centicents; LedgerError when it exists. */
  open(userId: string, balance: number, now: number): void;
  account(userId: string): AccountRecord | undefined;
  order(userId: string, orderId: string): OrderRecord | undefined;
  orderByClientId(userId: string, clientOrderId: string): OrderRecord | undefined;
  /** Lists are oldest first and only grow, so a position in one is a stable cursor. */
  orders(userId: string): readonly OrderRecord[];
  fills(userId: string): readonly FillRecord[];
  positions(userId: string): readonly PositionRecord[];
  position(userId: string, ticker: string): PositionRecord | undefined;
  settlements(userId: string): readonly SettlementRecord[];
  /** Applies `entry` at `now`; LedgerError, and nothing applied, when the balance would go below zero. */
  commit(userId: string, entry: LedgerEntry, now: number): void;
}

interface Book {
  account: AccountRecord;
  orders: OrderRecord[];
  orderAt: Map<string, number>;
  byClientId: Map<string, string>;
  fills: FillRecord[];
  positions: Map<string, PositionRecord>;
  settlements: SettlementRecord[];
}

export class InMemoryLedger implements AccountLedger {
  private readonly books = new Map<string, Book>();

  open(userId: string, balance: number, now: number): void {
    if (this.books.has(userId)) throw new LedgerError(`account ${userId} exists`);
    this.books.set(userId, {
      account: { userId, balance, updatedTs: now },
      orders: [],
      orderAt: new Map(),
      byClientId: new Map(),
      fills: [],
      positions: new Map(),
      settlements: [],
    });
  }

  account(userId: string): AccountRecord | undefined {
    return this.books.get(userId)?.account;
  }

  order(userId: string, orderId: string): OrderRecord | undefined {
    const book = this.books.get(userId);
    const at = book?.orderAt.get(orderId);
    return at === undefined ? undefined : book?.orders[at];
  }

  orderByClientId(userId: string, clientOrderId: string): OrderRecord | undefined {
    const orderId = this.books.get(userId)?.byClientId.get(clientOrderId);
    return orderId === undefined ? undefined : this.order(userId, orderId);
  }

  orders(userId: string): readonly OrderRecord[] {
    return this.books.get(userId)?.orders ?? [];
  }

  fills(userId: string): readonly FillRecord[] {
    return this.books.get(userId)?.fills ?? [];
  }

  positions(userId: string): readonly PositionRecord[] {
    return [...(this.books.get(userId)?.positions.values() ?? [])];
  }

  position(userId: string, ticker: string): PositionRecord | undefined {
    return this.books.get(userId)?.positions.get(ticker);
  }

  settlements(userId: string): readonly SettlementRecord[] {
    return this.books.get(userId)?.settlements ?? [];
  }

  commit(userId: string, entry: LedgerEntry, now: number): void {
    const book = this.books.get(userId);
    if (!book) throw new LedgerError(`no account ${userId}`);
    const balance = book.account.balance + entry.balanceDelta;
    if (!Number.isSafeInteger(balance) || balance < 0) {
      throw new LedgerError(`account ${userId} cannot go to a balance of ${balance}`);
    }
    book.account = { userId, balance, updatedTs: now };
    for (const order of entry.orders ?? []) {
      const at = book.orderAt.get(order.orderId);
      if (at === undefined) {
        book.orderAt.set(order.orderId, book.orders.length);
        book.orders.push(order);
        if (order.clientOrderId !== "") book.byClientId.set(order.clientOrderId, order.orderId);
      } else {
        book.orders[at] = order;
      }
    }
    book.fills.push(...(entry.fills ?? []));
    for (const position of entry.positions ?? []) book.positions.set(position.ticker, position);
    book.settlements.push(...(entry.settlements ?? []));
  }
}
