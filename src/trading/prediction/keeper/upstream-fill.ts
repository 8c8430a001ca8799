/**
 * A prediction-market fill executed on the upstream exchange first, as DFlow fills on Kalshi: the
 * venue's account places an immediate-or-cancel order for the contracts the order buys or sells, at
 * the worst price the order accepts, and the order then fills on chain exactly what the upstream
 * filled, at the upstream's prices (the builder fee on top); the rest of the escrow is reverted.
 *
 * Exactly once across crashes: the ticket is stored with the order before it is placed (so a restart
 * places it again under the same client order id, which the upstream refuses as a duplicate and the
 * portfolio then finds), and what it filled is stored before the settlement is built from it.
 */
import { UpstreamError } from "../../../upstream/errors.js";
import { UpstreamOrderRefused, type UpstreamTicket } from "../../../upstream/portfolio.js";
import { CONTRACT_UNITS, type OutcomeMintMarket } from "../../spot/venues/prediction.js";
import { advanceOrder, type OrderRecord, type UpstreamFill } from "../order-store.js";
import { builderFee } from "../orders.js";
import type { OrderKeeperOptions } from "./options.js";
import type { Escrowed } from "./settlement.js";

/** Millionths of a dollar per cent: the upstream's tick. */
const MICROS_PER_CENT = 10_000n;
/** The dearest and cheapest limits a contract can have, in cents. */
const MAX_CENTS = 99n;
const MIN_CENTS = 1n;

/** What an order fills, in its escrow's and its output's units, and the builder fee in it. */
export interface UpstreamFilled {
  inAmount: bigint;
  outAmount: bigint;
  fee: bigint;
}

/**
 * Takes the order's upstream fill one step on: the fill once the upstream has filled (null when it
 * filled nothing or refused), undefined while that is not known yet (the next pass goes on from
 * what is stored).
 */
export async function fillOnUpstream(
  options: OrderKeeperOptions,
  escrowed: Escrowed,
  market: OutcomeMintMarket,
  feeScale: number,
): Promise<UpstreamFilled | null | undefined> {
  const { db, upstream, logger } = options;
  if (!upstream) return undefined;
  let order: OrderRecord | undefined = escrowed.order;
  if (!order.upstream) {
    const ticket = ticketFor(escrowed, market, feeScale);
    if (!ticket) return null;
    order = await advanceOrder(db, order, { upstream: { ticket, execution: null } });
    if (!order) return undefined;
  }
  const stored = order.upstream as UpstreamFill;
  let execution = stored.execution;
  if (!execution) {
    try {
      const done = await upstream.execute(stored.ticket);
      execution = {
        orderId: done.orderId,
        filled: done.filled,
        amountMicros: done.amountMicros.toString(),
        feesMicros: done.feesMicros.toString(),
      };
    } catch (error) {
      if (error instanceof UpstreamError) {
        logger?.info(
          { err: error, orderId: order.id },
          "the upstream could not be asked to fill an order yet",
        );
        return undefined;
      }
      if (!(error instanceof UpstreamOrderRefused)) throw error;
      logger?.info({ err: error, orderId: order.id }, "the upstream refused an order's fill");
      execution = { orderId: "", filled: 0, amountMicros: "0", feesMicros: "0", refused: error.code };
    }
    if (!(await advanceOrder(db, order, { upstream: { ticket: stored.ticket, execution } })))
      return undefined;
  }
  return filledAmounts(escrowed, stored.ticket, execution, feeScale);
}

/**
 * The upstream order for the escrow's order: a buy of as many contracts as its escrow pays for at the
 * dearest price it accepts (its escrow over its least output), a sale of every contract escrowed at
 * the cheapest (its least output over its contracts); none when no whole contract fits.
 */
function ticketFor(escrowed: Escrowed, market: OutcomeMintMarket, feeScale: number): UpstreamTicket | null {
  const { order, held } = escrowed;
  const buying = order.inputMint === market.settlementMint;
  const base = { clientOrderId: `og-${order.id}`, ticker: market.ticker, side: market.side } as const;
  if (buying) {
    const leastContracts = order.threshold / CONTRACT_UNITS;
    const perContract = leastContracts > 0n ? held / leastContracts : MAX_CENTS * MICROS_PER_CENT;
    const limitCents = min(perContract / MICROS_PER_CENT, MAX_CENTS);
    if (limitCents < MIN_CENTS) return null;
    let count = held / (limitCents * MICROS_PER_CENT);
    // Room for the builder fee on the most the fills can cost.
    while (count > 0n) {
      const most = count * limitCents * MICROS_PER_CENT;
      if (most + builderFee(feeScale, most, count * CONTRACT_UNITS) <= held) break;
      count--;
    }
    return count > 0n
      ? { ...base, action: "buy", count: Number(count), limitCents: Number(limitCents) }
      : null;
  }
  const count = held / CONTRACT_UNITS;
  if (count === 0n) return null;
  const leastPerContract = (order.threshold + count - 1n) / count;
  const limitCents = max((leastPerContract + MICROS_PER_CENT - 1n) / MICROS_PER_CENT, MIN_CENTS);
  if (limitCents > MAX_CENTS) return null;
  return { ...base, action: "sell", count: Number(count), limitCents: Number(limitCents) };
}

/** What the order fills on chain for what the upstream filled: its contracts, at its prices. */
function filledAmounts(
  escrowed: Escrowed,
  ticket: UpstreamTicket,
  execution: NonNullable<UpstreamFill["execution"]>,
  feeScale: number,
): UpstreamFilled | null {
  if (execution.filled === 0) return null;
  const contracts = BigInt(execution.filled) * CONTRACT_UNITS;
  const value = BigInt(execution.amountMicros);
  const fee = builderFee(feeScale, value, contracts);
  if (ticket.action === "buy") {
    // The limit bounds what the fills cost, and the ticket left room for the fee: this fits the escrow.
    const inAmount = value + fee;
    if (inAmount > escrowed.held)
      throw new Error(`order ${escrowed.order.id}: its upstream fill costs more than its escrow`);
    return { inAmount, outAmount: contracts, fee };
  }
  return { inAmount: contracts, outAmount: value - fee, fee };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
