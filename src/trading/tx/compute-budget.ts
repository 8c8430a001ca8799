/**
 * The compute budget of a transaction the venue issues, shared by spot orders and the open
 * transactions of prediction-market orders: the limit (fixed, or sized by simulating the transaction
 * when `dynamicComputeUnitLimit` asks), the price per unit a request asks for, and the response fields
 * that report them.
 */
import type { Chain } from "../../chain/chain.js";
import type { OrderResponse } from "../../contract/trade.js";
import type { OrderRequest } from "../spot/order-terms.js";

/** The most compute units a transaction may ask for (Solana's per-transaction maximum). */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

/**
 * The units `wire` uses, simulated as issued (without the user's signature), with a tenth more for
 * state that changes before it lands; `fallback` when it cannot run now (e.g. the user is not funded yet).
 */
export async function simulatedComputeUnitLimit(
  chain: Chain,
  wire: Uint8Array,
  fallback: number,
): Promise<number> {
  const result = await chain.simulateTransaction(wire, { sigVerify: false });
  if (result.err || result.unitsConsumed <= 0n) return fallback;
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.ceil(Number(result.unitsConsumed) * 1.1));
}

/**
 * The price per compute unit at `limit` units: as the request names it; a priority level's price,
 * lowered so the whole fee stays within the level's cap; else the fee in lamports spread over the limit.
 */
export function computeUnitPriceFor(
  request: Pick<OrderRequest, "computeUnitPriceMicroLamports" | "prioritizationFeeLamports"> &
    Partial<Pick<OrderRequest, "priorityLevel">>,
  limit: number,
): bigint {
  if (request.computeUnitPriceMicroLamports !== undefined) return request.computeUnitPriceMicroLamports;
  const spread = (BigInt(request.prioritizationFeeLamports) * 1_000_000n) / BigInt(limit);
  if (!request.priorityLevel) return spread;
  // Not yet read (a quote priced without the levels) is no priority at all, never the whole cap.
  const level = request.priorityLevel.microLamports ?? 0n;
  return level < spread ? level : spread;
}

/** The response fields reporting a transaction's compute budget. */
export function computeBudgetFields(
  limit: number,
  microLamports: bigint,
): Pick<OrderResponse, "computeUnitLimit" | "prioritizationFeeLamports" | "prioritizationType"> {
  // Solana charges ceil(limit × price / 10^6) lamports of priority fee.
  const priorityLamports = (BigInt(limit) * microLamports + 999_999n) / 1_000_000n;
  return {
    computeUnitLimit: limit,
    prioritizationFeeLamports: Number(priorityLamports),
    prioritizationType: {
      computeBudget: { microLamports: Number(microLamports), estimatedMicroLamports: Number(microLamports) },
    },
  };
}
