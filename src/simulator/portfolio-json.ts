/**
 * The simulator's account records in Kalshi trade-api v2's portfolio JSON, field for field as Kalshi's
 * demo answers (orders, fills, positions, balance, settlements), with its fixed-point strings: prices
 * and averages to 4 decimals, costs, fees and P&L to 6, counts to 2.
 */

import { ONE_DOLLAR } from "./dynamics.js";
import { contracts, iso } from "./kalshi-json.js";
import type { FillRecord, OrderRecord, PositionRecord, SettlementRecord } from "./ledger.js";

/** Kalshi's one exchange shard, which the simulator is. */
export const EXCHANGE_INDEX = 0;

/** Centicents as a dollar string of 4 or 6 decimals, exactly: "0.0175", "-2.500000". */
export function fixedDollars(centicents: number, places: 4 | 6 = 6): string {
  const sign = centicents < 0 ? "-" : "";
  const magnitude = Math.abs(centicents);
  const whole = Math.floor(magnitude / ONE_DOLLAR);
  const fraction = String(magnitude % ONE_DOLLAR).padStart(4, "0");
  return `${sign}${whole}.${fraction}${"0".repeat(places - 4)}`;
}

/** Whole cents of `centicents`, truncated as Kalshi's integer-cent fields are. */
export const wholeCents = (centicents: number) => Math.trunc(centicents / 100);

/** GetOrder's `order`. */
export function kalshiOrder(order: OrderRecord, userId: string): Record<string, unknown> {
  return {
    order_id: order.orderId,
    user_id: userId,
    client_order_id: order.clientOrderId,
    ticker: order.ticker,
    side: order.side,
    action: order.action,
    outcome_side: order.bookSide === "bid" ? "yes" : "no",
    book_side: order.bookSide,
    type: order.type,
    status: order.status,
    yes_price_dollars: fixedDollars(order.yesPrice, 4),
    no_price_dollars: fixedDollars(ONE_DOLLAR - order.yesPrice, 4),
    fill_count_fp: contracts(order.fillCount),
    remaining_count_fp: contracts(order.remainingCount),
    initial_count_fp: contracts(order.initialCount),
    taker_fill_cost_dollars: fixedDollars(order.takerFillCost),
    maker_fill_cost_dollars: fixedDollars(order.makerFillCost),
    taker_fees_dollars: fixedDollars(order.takerFees),
    maker_fees_dollars: fixedDollars(order.makerFees),
    expiration_time: order.expirationTs === null ? null : iso(order.expirationTs),
    created_time: iso(order.createdTs),
    last_update_time: iso(order.lastUpdateTs),
    ...(order.selfTradePrevention ? { self_trade_prevention_type: order.selfTradePrevention } : {}),
    cancel_order_on_pause: order.cancelOnPause,
    subaccount_number: 0,
    exchange_index: EXCHANGE_INDEX,
  };
}

/** GetFills' fill. Kalshi's `trade_id` is the fill's id; the simulator prints it on the tape under it. */
export function kalshiFill(fill: FillRecord): Record<string, unknown> {
  return {
    fill_id: fill.fillId,
    trade_id: fill.fillId,
    order_id: fill.orderId,
    ticker: fill.ticker,
    market_ticker: fill.ticker,
    side: fill.side,
    action: fill.action,
    outcome_side: fill.bookSide === "bid" ? "yes" : "no",
    book_side: fill.bookSide,
    count_fp: contracts(fill.count),
    yes_price_dollars: fixedDollars(fill.yesPrice, 4),
    no_price_dollars: fixedDollars(ONE_DOLLAR - fill.yesPrice, 4),
    is_taker: fill.isTaker,
    fee_cost: fixedDollars(fill.fee),
    created_time: iso(fill.ts),
    ts: fill.ts,
    subaccount_number: 0,
    exchange_index: EXCHANGE_INDEX,
  };
}

/** GetPositions' market position; `restingOrders` counts the account's resting orders in it. */
export function kalshiMarketPosition(
  position: PositionRecord,
  restingOrders: number,
): Record<string, unknown> {
  return {
    ticker: position.ticker,
    total_traded_dollars: fixedDollars(position.totalTraded),
    position_fp: contracts(position.position),
    market_exposure_dollars: fixedDollars(position.exposure),
    realized_pnl_dollars: fixedDollars(position.realizedPnl),
    fees_paid_dollars: fixedDollars(position.feesPaid),
    resting_orders_count: restingOrders,
    last_updated_ts: iso(position.lastUpdatedTs),
    exchange_index: EXCHANGE_INDEX,
  };
}

/** GetPositions' event positions: the market positions summed per event, in the order events appear. */
export function kalshiEventPositions(positions: readonly PositionRecord[]): Record<string, unknown>[] {
  const events = new Map<string, { exposure: number; shares: number; pnl: number; fees: number }>();
  for (const position of positions) {
    const sum = events.get(position.eventTicker) ?? { exposure: 0, shares: 0, pnl: 0, fees: 0 };
    sum.exposure += position.exposure;
    sum.shares += Math.abs(position.position);
    sum.pnl += position.realizedPnl;
    sum.fees += position.feesPaid;
    events.set(position.eventTicker, sum);
  }
  return [...events].map(([eventTicker, sum]) => ({
    event_ticker: eventTicker,
    total_cost_dollars: fixedDollars(sum.exposure),
    total_cost_shares_fp: contracts(sum.shares),
    event_exposure_dollars: fixedDollars(sum.exposure),
    realized_pnl_dollars: fixedDollars(sum.pnl),
    fees_paid_dollars: fixedDollars(sum.fees),
  }));
}

/** GetSettlements' settlement. */
export function kalshiSettlement(settlement: SettlementRecord): Record<string, unknown> {
  return {
    ticker: settlement.ticker,
    event_ticker: settlement.eventTicker,
    market_result: settlement.marketResult,
    yes_count_fp: contracts(settlement.yesCount),
    yes_total_cost_dollars: fixedDollars(settlement.yesCost),
    no_count_fp: contracts(settlement.noCount),
    no_total_cost_dollars: fixedDollars(settlement.noCost),
    revenue: wholeCents(settlement.revenue),
    settled_time: iso(settlement.settledTs),
    fee_cost: fixedDollars(0),
    value: wholeCents(settlement.value),
    exchange_index: EXCHANGE_INDEX,
  };
}

/** CreateOrderV2's answer: counts, and the average YES price and fee per contract of the fills. */
export function kalshiOrderV2Result(order: OrderRecord, fills: readonly FillRecord[], nowMs: number) {
  const filled = fills.reduce((sum, fill) => sum + fill.count, 0);
  const averages =
    filled === 0
      ? {}
      : {
          average_fill_price: fixedDollars(
            Math.round(fills.reduce((sum, fill) => sum + fill.yesPrice * fill.count, 0) / filled),
            4,
          ),
          average_fee_paid: fixedDollars(Math.round(order.takerFees / filled), 4),
        };
  return {
    order_id: order.orderId,
    client_order_id: order.clientOrderId,
    fill_count: contracts(order.fillCount),
    remaining_count: contracts(order.remainingCount),
    ...averages,
    ts_ms: nowMs,
  };
}
