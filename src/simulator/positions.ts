/**
 * How a fill or a settlement moves one market position and the balance, as Kalshi nets them: YES and
 * NO contracts of one market cancel out, each YES+NO pair paying $1 back at once, so selling YES and
 * buying NO are the same trade. Integers only: centicents and whole contracts.
 */
import { ONE_DOLLAR } from "./dynamics.js";
import type { BookSide, PositionRecord } from "./ledger.js";

/** What one contract of a `bookSide` order at YES price `yesPrice` costs: YES for a bid, NO for an ask. */
export const outlayPerContract = (bookSide: BookSide, yesPrice: number) =>
  bookSide === "bid" ? yesPrice : ONE_DOLLAR - yesPrice;

/** A position no fill has touched yet. */
export const emptyPosition = (ticker: string, eventTicker: string, now: number): PositionRecord => ({
  ticker,
  eventTicker,
  position: 0,
  exposure: 0,
  totalTraded: 0,
  realizedPnl: 0,
  feesPaid: 0,
  lastUpdatedTs: now,
  settled: false,
});

/**
 * `position` after a taker fill of `count` contracts on `bookSide` at `yesPrice` paying `fee`, and the
 * balance's change: the contracts bought and the fee go out; pairs closed against the opposite side come
 * back at $1 each, realizing what they made against what they cost.
 */
export function applyFill(
  position: PositionRecord,
  fill: { bookSide: BookSide; yesPrice: number; count: number; fee: number },
  now: number,
): { position: PositionRecord; balanceDelta: number } {
  const direction = fill.bookSide === "bid" ? 1 : -1;
  const outlay = outlayPerContract(fill.bookSide, fill.yesPrice) * fill.count;
  const held = Math.abs(position.position);
  const opposite = position.position * direction < 0;
  const closed = opposite ? Math.min(fill.count, held) : 0;
  // The closed contracts' share of what the held ones cost; all of it when they all close.
  const closedCost = closed === held ? position.exposure : Math.floor((position.exposure * closed) / held);
  const openedCost = outlayPerContract(fill.bookSide, fill.yesPrice) * (fill.count - closed);
  const closedOutlay = outlay - openedCost;
  const redeemed = closed * ONE_DOLLAR;
  return {
    position: {
      ...position,
      position: position.position + direction * fill.count,
      exposure: position.exposure - closedCost + openedCost,
      totalTraded: position.totalTraded + outlay,
      realizedPnl: position.realizedPnl + redeemed - closedOutlay - closedCost,
      feesPaid: position.feesPaid + fill.fee,
      lastUpdatedTs: now,
    },
    balanceDelta: redeemed - outlay - fill.fee,
  };
}

/** `position` paid out at `value` (basis points a YES contract pays): the payout and the closed position. */
export function settlePosition(
  position: PositionRecord,
  value: number,
  now: number,
): { position: PositionRecord; revenue: number } {
  const revenue =
    position.position > 0 ? position.position * value : -position.position * (ONE_DOLLAR - value);
  return {
    position: {
      ...position,
      position: 0,
      exposure: 0,
      realizedPnl: position.realizedPnl + revenue - position.exposure,
      lastUpdatedTs: now,
      settled: true,
    },
    revenue,
  };
}
