/**
 * Kalshi trade-api v2's portfolio for the simulator's accounts, signed as Kalshi's: CreateOrder,
 * GetOrders, GetOrder, CancelOrder and DecreaseOrder (the `/portfolio/orders` shapes), their V2 twins
 * the published SDK sends (`/portfolio/events/orders`, single and batched, and cancel-all), GetFills,
 * GetPositions, GetBalance, GetSettlements and GetPortfolioRestingOrderTotalValue; and the `/_sim/accounts`
 * control that opens an account for a public key.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { impactedQuote } from "./book-impact.js";
import { ONE_DOLLAR } from "./dynamics.js";
import { KalshiKeyring, rsaPublicKey } from "./kalshi-auth.js";
import { type AccountLedger, InMemoryLedger, LedgerError, type OrderRecord } from "./ledger.js";
import { ExchangeRequestError } from "./market-data.js";
import { stableId } from "./milestones.js";
import { bookSideOf, type OrderDesk, type OrderTicket } from "./order-desk.js";
import {
  EXCHANGE_INDEX,
  fixedDollars,
  kalshiEventPositions,
  kalshiFill,
  kalshiMarketPosition,
  kalshiOrder,
  kalshiOrderV2Result,
  kalshiSettlement,
  wholeCents,
} from "./portfolio-json.js";
import {
  cursorParam,
  integer,
  list,
  MAX_TICKER,
  offsetOf,
  page,
  parse,
  type SimulatorContext,
  seconds,
  tickerList,
} from "./routes.js";

/** The accounts' side of the simulator: who may sign, what they hold, and the desk that trades for them. */
export interface Portfolio {
  keyring: KalshiKeyring;
  ledger: AccountLedger;
  desk: OrderDesk;
}

/** Most contracts one order may ask for, and most orders one batch may carry (Kalshi's basic tier: 20). */
const MAX_COUNT = 1_000_000;
const MAX_BATCH = 20;
/** Bodies of one order, and of a batch, in bytes. */
const ORDER_BODY_BYTES = 8 * 1024;
const BATCH_BODY_BYTES = 64 * 1024;
const MAX_CLIENT_ORDER_ID = 128;
const MAX_ORDER_ID = 64;
/** Most a simulated account may start with: $10 billion, in cents. */
const MAX_BALANCE_CENTS = 1_000_000_000_000;
/** The tick the simulated books trade in, basis points ($0.001), and the prices a YES contract may take. */
const TICK = 10;
const MIN_PRICE = TICK;
const MAX_PRICE = ONE_DOLLAR - TICK;

/** The user an account key belongs to: one account per key, named for it. */
export const userIdOf = (keyId: string) => stableId(`account/${keyId}`);

/** Opens an account for `keyId` with `balanceCents`, refusing a key it already has. */
export function openAccount(
  portfolio: Portfolio,
  account: { keyId: string; publicKeyPem: string; balanceCents: number },
  now: number,
): string {
  const publicKey = rsaPublicKey(account.publicKeyPem);
  if (portfolio.keyring.has(account.keyId)) {
    throw new ExchangeRequestError(409, "conflict", `key ${account.keyId} already has an account`);
  }
  const userId = userIdOf(account.keyId);
  portfolio.ledger.open(userId, account.balanceCents * 100, now);
  portfolio.keyring.add({ keyId: account.keyId, publicKey });
  return userId;
}

/** A new portfolio with its in-memory ledger; `clockMs` is what signature timestamps are held to. */
export function inMemoryPortfolio(desk: (ledger: AccountLedger) => OrderDesk, clockMs?: () => number) {
  const ledger = new InMemoryLedger();
  return { keyring: new KalshiKeyring(clockMs), ledger, desk: desk(ledger) } satisfies Portfolio;
}

// --- inputs ---------------------------------------------------------------------------------------

/** A fixed-point count ("10", "10.0", "10.00") in whole contracts; fractions are refused. */
const countFp = z
  .string()
  .regex(/^\d{1,7}(\.\d{1,2})?$/, "a count is a fixed-point string with up to 2 decimals")
  .refine((value) => !/\.\d*[1-9]/.test(value), "the simulator trades whole contracts only")
  .transform((value) => Number(value.split(".")[0]))
  .pipe(z.number().int().min(0).max(MAX_COUNT));
/** A dollar price ("0.56", "0.5600") in basis points. */
const priceDollars = z
  .string()
  .regex(/^0?\.\d{1,4}$/, "a price is a dollar string with up to 4 decimals, below 1")
  .transform((value) => Number(`${value.split(".")[1]}`.padEnd(4, "0")));
const cents = z.number().int().min(1).max(99);
const timeInForce = z.enum(["fill_or_kill", "immediate_or_cancel", "good_till_canceled"]);
const selfTradePrevention = z.enum(["taker_at_cross", "maker"]);
const unixSeconds = z.number().int().min(0).max(99_999_999_999);
/** Only the primary account and the one shard are simulated. */
const primaryAccount = z.literal(0).optional();
const oneShard = z.union([z.literal(0), z.literal(-1)]).optional();

const CreateOrderBody = z.object({
  ticker: z.string().min(1).max(MAX_TICKER),
  client_order_id: z.string().max(MAX_CLIENT_ORDER_ID).optional(),
  side: z.enum(["yes", "no"]),
  action: z.enum(["buy", "sell"]),
  count: z.number().int().min(1).max(MAX_COUNT).optional(),
  count_fp: countFp.optional(),
  type: z.enum(["limit", "market"]).optional(),
  yes_price: cents.optional(),
  no_price: cents.optional(),
  yes_price_dollars: priceDollars.optional(),
  no_price_dollars: priceDollars.optional(),
  expiration_ts: unixSeconds.nullable().optional(),
  time_in_force: timeInForce.optional(),
  buy_max_cost: z
    .number()
    .int()
    .min(1)
    .max(MAX_COUNT * 100)
    .optional(),
  post_only: z.boolean().optional(),
  reduce_only: z.boolean().optional(),
  sell_position_floor: z.literal(0).optional(),
  self_trade_prevention_type: selfTradePrevention.optional(),
  order_group_id: z.string().max(MAX_ORDER_ID).optional(),
  cancel_order_on_pause: z.boolean().optional(),
  subaccount: primaryAccount,
  exchange_index: oneShard,
});
const CreateOrderV2Body = z.object({
  ticker: z.string().min(1).max(MAX_TICKER),
  client_order_id: z.string().max(MAX_CLIENT_ORDER_ID).optional(),
  side: z.enum(["bid", "ask"]),
  count: countFp,
  price: priceDollars,
  expiration_time: unixSeconds.optional(),
  time_in_force: timeInForce,
  post_only: z.boolean().optional(),
  self_trade_prevention_type: selfTradePrevention,
  cancel_order_on_pause: z.boolean().optional(),
  reduce_only: z.boolean().optional(),
  subaccount: primaryAccount,
  order_group_id: z.string().max(MAX_ORDER_ID).optional(),
  exchange_index: oneShard,
});
const orderId = z.string().min(1).max(MAX_ORDER_ID);
const OrderParams = z.object({ order_id: orderId });
const DecreaseBody = z.object({
  reduce_by: z.number().int().min(1).max(MAX_COUNT).optional(),
  reduce_to: z.number().int().min(0).max(MAX_COUNT).optional(),
  reduce_by_fp: countFp.optional(),
  reduce_to_fp: countFp.optional(),
  subaccount: primaryAccount,
  exchange_index: oneShard,
});
const DecreaseV2Body = z.object({
  reduce_by: countFp.optional(),
  reduce_to: countFp.optional(),
  exchange_index: oneShard,
  market_ticker: z.string().max(MAX_TICKER).optional(),
});
const BatchCreateV2Body = z.object({ orders: z.array(z.unknown()).min(1).max(MAX_BATCH) });
const BatchCancelV2Body = z.object({
  orders: z
    .array(
      z.object({
        order_id: orderId,
        subaccount: primaryAccount,
        exchange_index: oneShard,
        market_ticker: z.string().max(MAX_TICKER).optional(),
      }),
    )
    .min(1)
    .max(MAX_BATCH),
});

const ownAccount = {
  subaccount: integer("subaccount", 0, 0).optional(),
  exchange_index: integer("exchange_index", 0, 0).optional(),
};
const pageOf = (max: number) => ({ limit: integer("limit", 1, max).default(100), cursor: cursorParam });
const OrdersQuery = z.object({
  ticker: z.string().max(MAX_TICKER).optional(),
  event_ticker: tickerList("event_ticker", 10).optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
  status: z.enum(["resting", "canceled", "executed"]).optional(),
  ...pageOf(1000),
  ...ownAccount,
});
const FillsQuery = z.object({
  ticker: z.string().max(MAX_TICKER).optional(),
  order_id: orderId.optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
  ...pageOf(1000),
  ...ownAccount,
});
const PositionsQuery = z.object({
  count_filter: list.pipe(z.array(z.enum(["position", "total_traded"])).max(2)).optional(),
  ticker: z.string().max(MAX_TICKER).optional(),
  event_ticker: tickerList("event_ticker", 10).optional(),
  ...pageOf(1000),
  ...ownAccount,
});
const SettlementsQuery = z.object({
  ticker: z.string().max(MAX_TICKER).optional(),
  event_ticker: tickerList("event_ticker", 10).optional(),
  min_ts: seconds("min_ts").optional(),
  max_ts: seconds("max_ts").optional(),
  ...pageOf(1000),
  subaccount: ownAccount.subaccount,
});
const AccountBody = z.object({
  keyId: z.string().min(1).max(128).optional(),
  publicKeyPem: z
    .string()
    .min(1)
    .max(16 * 1024),
  balanceCents: z.number().int().min(0).max(MAX_BALANCE_CENTS),
});

const invalidOrder = (details: string) =>
  new ExchangeRequestError(400, "invalid_order", "invalid order", details);
const invalidPrice = (details: string) =>
  new ExchangeRequestError(400, "invalid_price", "invalid price", details);

/** A limit in basis points the simulated books can trade at, or Kalshi's 400 invalid_price. */
function tradablePrice(yesPrice: number): number {
  if (yesPrice < MIN_PRICE || yesPrice > MAX_PRICE || yesPrice % TICK !== 0) {
    throw invalidPrice(
      `${fixedDollars(yesPrice, 4)} is not a price of this market ($0.001 ticks within 0 and 1)`,
    );
  }
  return yesPrice;
}

/** The count of `count` and `count_fp`, which must agree when both are sent. */
function countOf(count: number | undefined, countFpValue: number | undefined): number {
  if (count !== undefined && countFpValue !== undefined && count !== countFpValue) {
    throw invalidOrder("count and count_fp differ");
  }
  const resolved = count ?? countFpValue;
  if (resolved === undefined || resolved < 1) throw invalidOrder("count is required");
  return resolved;
}

/** CreateOrder's limit as a YES price: any of its four price fields, which must agree. */
function v1Limit(body: z.output<typeof CreateOrderBody>, bookSide: "bid" | "ask"): number {
  const asYes = [
    body.yes_price === undefined ? undefined : body.yes_price * 100,
    body.no_price === undefined ? undefined : ONE_DOLLAR - body.no_price * 100,
    body.yes_price_dollars,
    body.no_price_dollars === undefined ? undefined : ONE_DOLLAR - body.no_price_dollars,
  ].filter((price): price is number => price !== undefined);
  if (new Set(asYes).size > 1) throw invalidOrder("the order's prices disagree");
  const [price] = asYes;
  if (price !== undefined) return tradablePrice(price);
  // A market order without a price takes whatever the book offers.
  if (body.type === "market") return bookSide === "bid" ? MAX_PRICE : MIN_PRICE;
  throw invalidOrder("price is required");
}

/** Refuses what the simulator does not simulate, as a 400 naming it. */
function simulated(body: { order_group_id?: string | undefined }): void {
  if (body.order_group_id !== undefined) {
    throw new ExchangeRequestError(400, "bad_request", "order groups are not simulated");
  }
}

function expiration(expirationTs: number | null | undefined, tif: OrderTicket["timeInForce"], now: number) {
  if (expirationTs == null) return null;
  if (tif === "immediate_or_cancel") throw invalidOrder("immediate_or_cancel cannot have an expiration");
  if (expirationTs <= now) throw invalidOrder("the expiration has passed");
  return expirationTs;
}

/** CreateOrder's body as the desk's ticket. */
function v1Ticket(raw: unknown, now: number): OrderTicket {
  const body = parse(CreateOrderBody, raw);
  simulated(body);
  const bookSide = bookSideOf(body.action, body.side);
  const type = body.type ?? "limit";
  const timeInForce = body.time_in_force ?? "good_till_canceled";
  return {
    ticker: body.ticker,
    clientOrderId: body.client_order_id ?? "",
    action: body.action,
    side: body.side,
    count: countOf(body.count, body.count_fp),
    yesPrice: v1Limit(body, bookSide),
    type,
    timeInForce,
    buyMaxCost: body.buy_max_cost === undefined ? null : body.buy_max_cost * 100,
    postOnly: body.post_only ?? false,
    reduceOnly: body.reduce_only ?? false,
    expirationTs: expiration(body.expiration_ts, timeInForce, now),
    selfTradePrevention: body.self_trade_prevention_type ?? null,
    cancelOnPause: body.cancel_order_on_pause ?? false,
  };
}

/** CreateOrderV2's body as the desk's ticket: a bid buys YES at `price`, an ask sells YES at it. */
function v2Ticket(raw: unknown, now: number): OrderTicket {
  const body = parse(CreateOrderV2Body, raw);
  simulated(body);
  return {
    ticker: body.ticker,
    clientOrderId: body.client_order_id ?? "",
    action: body.side === "bid" ? "buy" : "sell",
    side: "yes",
    count: countOf(undefined, body.count),
    yesPrice: tradablePrice(body.price),
    type: "limit",
    timeInForce: body.time_in_force,
    buyMaxCost: null,
    postOnly: body.post_only ?? false,
    reduceOnly: body.reduce_only ?? false,
    expirationTs: expiration(body.expiration_time, body.time_in_force, now),
    selfTradePrevention: body.self_trade_prevention_type,
    cancelOnPause: body.cancel_order_on_pause ?? false,
  };
}

/** The remainder a decrease leaves: exactly one of reduce-by and reduce-to. */
function remainderAfter(
  order: OrderRecord,
  reduceBy: number | undefined,
  reduceTo: number | undefined,
): number {
  if ((reduceBy === undefined) === (reduceTo === undefined)) {
    throw invalidOrder("exactly one of reduce_by and reduce_to is required");
  }
  return reduceTo ?? Math.max(0, order.remainingCount - (reduceBy as number));
}

/**
 * One page of `items` (oldest first), newest first, of those `keep` accepts. The cursor is the position
 * of the page's last item: lists only grow, so it stays good while orders and fills are added.
 */
function newestFirst<T>(items: readonly T[], keep: (item: T) => boolean, limit: number, cursor?: string) {
  const start = cursor ? offsetOf(cursor) : items.length;
  if (start > items.length) throw new ExchangeRequestError(400, "bad_request", "invalid cursor");
  const found: T[] = [];
  let index = start - 1;
  for (; index >= 0 && found.length < limit; index--) {
    if (keep(items[index] as T)) found.push(items[index] as T);
  }
  let more = false;
  for (let rest = index; rest >= 0 && !more; rest--) more = keep(items[rest] as T);
  return { items: found, cursor: more ? String(index + 1) : "" };
}

const within = (ts: number, q: { min_ts?: number | undefined; max_ts?: number | undefined }) =>
  (q.min_ts === undefined || ts >= q.min_ts) && (q.max_ts === undefined || ts <= q.max_ts);

// --- routes ---------------------------------------------------------------------------------------

/** Registers the portfolio routes on `app` (mounted under the base path), each signed by an account key. */
export function registerPortfolioRoutes(
  app: FastifyInstance,
  ctx: SimulatorContext,
  portfolio: Portfolio,
): void {
  const { keyring, ledger, desk } = portfolio;
  const users = new WeakMap<FastifyRequest, string>();

  app.register(async (api) => {
    // Verified before the body is read: an unsigned request costs no parsing.
    api.addHook("onRequest", async (request) => {
      const path = request.url.split("?")[0] as string;
      const key = keyring.verify(request.headers, request.method, path);
      const userId = userIdOf(key.keyId);
      desk.catchUp(userId, ctx.now());
      users.set(request, userId);
    });
    const userOf = (request: FastifyRequest) => users.get(request) as string;
    const eventOf = (ticker: string) => ctx.exchange.marketsByTicker.get(ticker)?.record.eventTicker;
    const nowMs = () => ctx.now() * 1000;
    const orderJson = (order: OrderRecord, request: FastifyRequest) => kalshiOrder(order, userOf(request));
    const cancel = (request: FastifyRequest, id: string) => desk.cancel(userOf(request), id, ctx.now());
    const single = { bodyLimit: ORDER_BODY_BYTES };
    const batch = { bodyLimit: BATCH_BODY_BYTES };

    api.get("/portfolio/balance", async (request) => {
      parse(z.object(ownAccount), request.query);
      const userId = userOf(request);
      const account = ledger.account(userId);
      if (!account) throw new ExchangeRequestError(404, "not_found", "account not found");
      const now = ctx.now();
      let value = 0;
      for (const position of ledger.positions(userId)) {
        const market = ctx.exchange.marketsByTicker.get(position.ticker);
        if (position.settled || position.position === 0 || !market) continue;
        const quote =
          impactedQuote(market, ctx.impact, now) ?? market.dynamics.quoteAt(now, market.lifecycle.status);
        if (!quote) continue;
        // What the position would fetch now: YES at the YES bid, NO at the NO bid ($1 − YES ask).
        value +=
          position.position > 0
            ? position.position * quote.yesBid
            : -position.position * (ONE_DOLLAR - quote.yesAsk);
      }
      return {
        balance: wholeCents(account.balance),
        balance_dollars: fixedDollars(account.balance, 4),
        portfolio_value: wholeCents(value),
        updated_ts: account.updatedTs,
        balance_breakdown: [{ exchange_index: EXCHANGE_INDEX, balance: fixedDollars(account.balance, 4) }],
      };
    });

    api.get("/portfolio/summary/total_resting_order_value", async (request) => {
      const held = ledger.orders(userOf(request)).reduce((sum, order) => sum + order.held, 0);
      return {
        total_resting_order_value: wholeCents(held),
        resting_order_value_breakdown: [{ exchange_index: EXCHANGE_INDEX, balance: fixedDollars(held, 4) }],
      };
    });

    api.get("/portfolio/positions", async (request) => {
      const q = parse(PositionsQuery, request.query);
      const events = q.event_ticker ? new Set(q.event_ticker) : undefined;
      const userId = userOf(request);
      const matching = ledger
        .positions(userId)
        .filter(
          (position) =>
            !position.settled &&
            (!q.ticker || position.ticker === q.ticker) &&
            (!events || events.has(position.eventTicker)) &&
            (q.count_filter ?? []).every((field) =>
              field === "position" ? position.position !== 0 : position.totalTraded !== 0,
            ),
        );
      const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
      const resting = new Map<string, number>();
      for (const order of ledger.orders(userId)) {
        if (order.status === "resting") resting.set(order.ticker, (resting.get(order.ticker) ?? 0) + 1);
      }
      return {
        market_positions: items.map((position) =>
          kalshiMarketPosition(position, resting.get(position.ticker) ?? 0),
        ),
        event_positions: kalshiEventPositions(items),
        cursor,
      };
    });

    api.get("/portfolio/fills", async (request) => {
      const q = parse(FillsQuery, request.query);
      const { items, cursor } = newestFirst(
        ledger.fills(userOf(request)),
        (fill) =>
          (!q.ticker || fill.ticker === q.ticker) &&
          (!q.order_id || fill.orderId === q.order_id) &&
          within(fill.ts, q),
        q.limit,
        q.cursor,
      );
      return { fills: items.map(kalshiFill), cursor };
    });

    api.get("/portfolio/settlements", async (request) => {
      const q = parse(SettlementsQuery, request.query);
      const events = q.event_ticker ? new Set(q.event_ticker) : undefined;
      const { items, cursor } = newestFirst(
        ledger.settlements(userOf(request)),
        (settlement) =>
          (!q.ticker || settlement.ticker === q.ticker) &&
          (!events || events.has(settlement.eventTicker)) &&
          within(settlement.settledTs, q),
        q.limit,
        q.cursor,
      );
      return { settlements: items.map(kalshiSettlement), cursor };
    });

    api.get("/portfolio/orders", async (request) => {
      const q = parse(OrdersQuery, request.query);
      const events = q.event_ticker ? new Set(q.event_ticker) : undefined;
      const { items, cursor } = newestFirst(
        ledger.orders(userOf(request)),
        (order) =>
          (!q.ticker || order.ticker === q.ticker) &&
          (!events || events.has(eventOf(order.ticker) ?? "")) &&
          (!q.status || order.status === q.status) &&
          within(order.createdTs, q),
        q.limit,
        q.cursor,
      );
      return { orders: items.map((order) => orderJson(order, request)), cursor };
    });

    api.get("/portfolio/orders/:order_id", async (request) => {
      const { order_id } = parse(OrderParams, request.params);
      const order = ledger.order(userOf(request), order_id);
      if (!order) throw new ExchangeRequestError(404, "not_found", "order not found", order_id);
      return { order: orderJson(order, request) };
    });

    api.post("/portfolio/orders", single, async (request, reply) => {
      const { order } = desk.place(userOf(request), v1Ticket(request.body, ctx.now()), ctx.now());
      return reply.code(201).send({ order: orderJson(order, request) });
    });

    api.delete("/portfolio/orders/:order_id", async (request) => {
      const { order_id } = parse(OrderParams, request.params);
      const { order, reducedBy } = cancel(request, order_id);
      return { order: orderJson(order, request), reduced_by_fp: `${reducedBy}.00` };
    });

    api.post("/portfolio/orders/:order_id/decrease", single, async (request) => {
      const { order_id } = parse(OrderParams, request.params);
      const body = parse(DecreaseBody, request.body);
      const userId = userOf(request);
      const resting = ledger.order(userId, order_id);
      const reduceBy = body.reduce_by ?? body.reduce_by_fp;
      const reduceTo = body.reduce_to ?? body.reduce_to_fp;
      const remaining = resting ? remainderAfter(resting, reduceBy, reduceTo) : 0;
      const order = desk.decrease(userId, order_id, remaining, ctx.now());
      return { order: orderJson(order, request) };
    });

    api.post("/portfolio/events/orders", single, async (request, reply) => {
      const { order, fills } = desk.place(userOf(request), v2Ticket(request.body, ctx.now()), ctx.now());
      return reply.code(201).send(kalshiOrderV2Result(order, fills, nowMs()));
    });

    api.delete("/portfolio/events/orders/:order_id", async (request) => {
      const { order_id } = parse(OrderParams, request.params);
      const { order, reducedBy } = cancel(request, order_id);
      return {
        order_id,
        client_order_id: order.clientOrderId,
        reduced_by: `${reducedBy}.00`,
        ts_ms: nowMs(),
      };
    });

    api.delete("/portfolio/events/orders", async (request) => {
      parse(z.object({ subaccount: ownAccount.subaccount }), request.query);
      for (const order of ledger.orders(userOf(request))) {
        if (order.status === "resting") cancel(request, order.orderId);
      }
      return {};
    });

    api.post("/portfolio/events/orders/:order_id/decrease", single, async (request) => {
      const { order_id } = parse(OrderParams, request.params);
      const body = parse(DecreaseV2Body, request.body);
      const userId = userOf(request);
      const resting = ledger.order(userId, order_id);
      const remaining = resting ? remainderAfter(resting, body.reduce_by, body.reduce_to) : 0;
      const order = desk.decrease(userId, order_id, remaining, ctx.now());
      return {
        order_id,
        client_order_id: order.clientOrderId,
        remaining_count: `${order.remainingCount}.00`,
        ts_ms: nowMs(),
      };
    });

    api.post("/portfolio/events/orders/batched", batch, async (request, reply) => {
      const { orders } = parse(BatchCreateV2Body, request.body);
      // Each order stands alone, as on Kalshi: one refused does not hold up the others.
      const results = orders.map((raw) => {
        try {
          const { order, fills } = desk.place(userOf(request), v2Ticket(raw, ctx.now()), ctx.now());
          return { ...kalshiOrderV2Result(order, fills, nowMs()), error: null };
        } catch (error) {
          const clientOrderId = (raw as { client_order_id?: unknown })?.client_order_id;
          return {
            client_order_id: typeof clientOrderId === "string" ? clientOrderId : null,
            ...batchError(error),
          };
        }
      });
      return reply.code(201).send({ orders: results });
    });

    api.delete("/portfolio/events/orders/batched", batch, async (request) => {
      const { orders } = parse(BatchCancelV2Body, request.body);
      const results = orders.map(({ order_id }) => {
        try {
          const { order, reducedBy } = cancel(request, order_id);
          const reduced = `${reducedBy}.00`;
          return {
            order_id,
            client_order_id: order.clientOrderId,
            reduced_by: reduced,
            ts_ms: nowMs(),
            error: null,
          };
        } catch (error) {
          return { order_id, reduced_by: "0.00", ...batchError(error) };
        }
      });
      return { orders: results };
    });
  });
}

/** An order refused inside a batch, as Kalshi reports it there: `details` always present. */
function batchError(error: unknown) {
  if (!(error instanceof ExchangeRequestError)) throw error;
  return { ts_ms: null, error: { code: error.code, message: error.message, details: error.details ?? "" } };
}

/** Registers `/_sim/accounts`: opens an account for an RSA public key, with a starting balance. */
export function registerAccountControlRoutes(
  app: FastifyInstance,
  ctx: SimulatorContext,
  portfolio: Portfolio,
) {
  app.post("/_sim/accounts", { bodyLimit: 32 * 1024 }, async (request, reply) => {
    const body = parse(AccountBody, request.body);
    const keyId = body.keyId ?? stableId(`key/${body.publicKeyPem}`);
    try {
      const userId = openAccount(portfolio, { keyId, ...body }, ctx.now());
      return reply.code(201).send({ keyId, userId, balanceCents: body.balanceCents });
    } catch (error) {
      if (error instanceof LedgerError) throw new ExchangeRequestError(409, "conflict", error.message);
      throw error;
    }
  });
}
