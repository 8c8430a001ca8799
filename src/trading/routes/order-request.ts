/**
 * The `OrderRequest` a query of `GET /order` (or the part of one `/intent`, `/quote` and `/swap` share)
 * comes to: each parameter read as `ORDER_PARAMS` declares it, then the combinations the reference
 * refuses, the priority fee and the transaction's size limits.
 */
import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { ApiError } from "../../contract/errors.js";
import {
  type PriorityLevelRequest,
  TRANSACTION_MAX_ACCOUNTS,
  TRANSACTION_MAX_SIZE,
  type TransactionLimit,
} from "../spot/request-limits.js";
import { ORDER_PARAMS, type OrderQuery } from "./order-params.js";
import { type ParamValues, parseParams } from "./query-params.js";

type OrderParamValues = ParamValues<typeof ORDER_PARAMS>;

/** The keys an `OrderRequest` has beyond its parameters, which its values carry from the start. */
const DERIVED_KEYS: readonly ("priorityLevel" | "minOutAmount")[] = ["priorityLevel", "minOutAmount"];

/**
 * What the order desk is asked: the parameters as read, with the priority fee and the transaction's
 * size limits as their combinations come to.
 */
export type OrderRequest = Omit<
  OrderParamValues,
  "prioritizationFeeLamports" | "computeUnitPriceMicroLamports" | "maxAccounts" | "maxTransactionSize"
> &
  PriorityFee & {
    /** Most accounts the transaction may lock (the chain's 64 unless asked for fewer). */
    maxAccounts: TransactionLimit;
    /** Most bytes the transaction may take on the wire (the chain's 1232 unless asked for fewer). */
    maxTransactionSize: TransactionLimit;
    /** POST /swap: the least output the quote being executed promised (its otherAmountThreshold). */
    minOutAmount?: bigint;
  };

/**
 * The priority fee: a price per compute unit, or lamports for the whole transaction (with a
 * `priorityLevel`, the most that level may cost).
 */
interface PriorityFee {
  prioritizationFeeLamports: number;
  priorityLevel?: PriorityLevelRequest;
  computeUnitPriceMicroLamports: bigint | undefined;
}

/**
 * Parses and checks the query of `GET /order`; throws an `ApiError` naming the parameter at fault.
 * `GET /quote` names no fee account: `feeAccountLater` lets a platform fee go without one.
 */
export function parseOrderRequest(
  query: OrderQuery,
  venues: readonly string[],
  options: { feeAccountLater?: boolean } = {},
): OrderRequest {
  const values = parseParams(ORDER_PARAMS, query, DERIVED_KEYS);
  refuseCombinations(values, venues, options);
  return {
    ...values,
    ...priorityFee(values, query),
    maxAccounts: transactionLimit(values.maxAccounts, values.reserveAccounts, "accounts"),
    maxTransactionSize: transactionLimit(values.maxTransactionSize, values.reserveTransactionSize, "size"),
  };
}

/** The values each well-formed alone that the reference refuses together, or that no route here takes. */
function refuseCombinations(
  order: OrderParamValues,
  venues: readonly string[],
  options: { feeAccountLater?: boolean },
): void {
  if (order.inputMint === order.outputMint)
    throw new ApiError("same_input_and_output_mint", `inputMint and outputMint are both ${order.inputMint}`);
  const { slippageBps, predictionMarketSlippageBps } = order;
  if (
    predictionMarketSlippageBps !== undefined &&
    slippageBps !== undefined &&
    predictionMarketSlippageBps < slippageBps
  )
    throw new ApiError(
      "prediction_slippage_bps_below_routing_slippage",
      `predictionMarketSlippageBps must be at least slippageBps (${slippageBps}), got ${predictionMarketSlippageBps}`,
    );
  checkVenues(order.dexes, "dexes", venues);
  checkVenues(order.excludeDexes, "excludeDexes", venues);
  if (order.platformFeeBps > 0 && order.feeAccount === undefined && !options.feeAccountLater)
    throw new ApiError(
      "platform_fee_account_not_specified",
      "platformFeeBps is set, so feeAccount (a token account of the output mint) is required",
    );
  if (!order.allowSyncExec && !order.allowAsyncExec)
    throw new ApiError(
      "cannot_disable_sync_and_async_execution",
      "allowSyncExec and allowAsyncExec are both false: at least one kind of execution must be allowed",
    );
  if (order.onlyJitRoutes)
    throw new ApiError(
      "route_not_found",
      "onlyJitRoutes: this venue has no JIT router, so no route uses one",
    );
  if (order.forJitoBundle)
    throw new ApiError(
      "route_not_found",
      "forJitoBundle: the venue's chain runs no Jito block engine, so no route is built for a bundle",
    );
  if (order.platformFeeScale > 0 && order.feeAccount === undefined)
    throw new ApiError(
      "platform_fee_account_not_specified_for_platform_fee_scale",
      "platformFeeScale is set, so feeAccount (a token account of the settlement mint) is required",
    );
  refuseAccountCombinations(order);
  for (const [max, reserve, code] of [
    ["maxAccounts", "reserveAccounts", "both_max_accounts_and_reserve_accounts_specified"],
    [
      "maxTransactionSize",
      "reserveTransactionSize",
      "both_max_transaction_size_and_reserve_transaction_size_specified",
    ],
  ] as const)
    if (order[max] !== undefined && order[reserve] !== undefined)
      throw new ApiError(code, `send ${max} or ${reserve}, not both`);
}

/** Who pays, signs and receives: the pairings the reference refuses. */
function refuseAccountCombinations(order: OrderParamValues): void {
  if (order.sponsor && order.predictionMarketInitPayer)
    throw new ApiError(
      "both_sponsor_and_prediction_market_init_payer_specified",
      "send sponsor or predictionMarketInitPayer, not both",
    );
  if (order.skipPumpfunCashbackClaim && order.sponsorExec)
    throw new ApiError(
      "skip_pumpfun_cashback_claim_with_sponsor_executor",
      "skipPumpfunCashbackClaim needs sponsorExec=false",
    );
  if (order.allowBondingCurveUnderconsumption && order.sponsorExec)
    throw new ApiError(
      "allow_bonding_curve_underconsumption_with_sponsor_executor",
      "allowBondingCurveUnderconsumption needs sponsorExec=false",
    );
  const destination = order.destinationTokenAccount ?? order.destinationWallet;
  if (order.destinationTokenAccount && order.destinationWallet)
    throw new ApiError(
      "both_destination_params_specified",
      "send destinationWallet or destinationTokenAccount, not both",
    );
  if (order.outputCloseAuthority && destination)
    throw new ApiError(
      "output_close_authority_with_destination_token_account",
      "outputCloseAuthority sets up the user's own output account: it cannot go with destinationWallet or destinationTokenAccount",
    );
  if (order.outputCloseAuthority && order.wrapAndUnwrapSol && order.outputMint === WRAPPED_SOL_MINT)
    throw new ApiError(
      "output_close_authority_with_native_sol_output",
      "outputCloseAuthority: native SOL output has no output account to keep; send wrapAndUnwrapSol=false",
    );
}

function checkVenues(names: string[] | undefined, name: string, venues: readonly string[]): void {
  const unknown = names?.find((venue) => !venues.includes(venue));
  if (unknown !== undefined)
    throw new ApiError(
      "invalid_dex",
      `${name}: unknown venue ${JSON.stringify(unknown.slice(0, 64))}; venues are ${venues.join(", ")}`,
    );
}

/**
 * The priority fee: `computeUnitPriceMicroLamports` (a price per compute unit), or
 * `prioritizationFeeLamports` (a level, capped by `prioritizationFeeMaxLamports`, or lamports), never both.
 */
function priorityFee(order: OrderParamValues, query: OrderQuery): PriorityFee {
  const price = order.computeUnitPriceMicroLamports;
  if (price !== undefined) {
    if (query.prioritizationFeeLamports !== undefined)
      throw new ApiError(
        "both_priority_fee_params_specified",
        "send prioritizationFeeLamports or computeUnitPriceMicroLamports, not both",
      );
    return { prioritizationFeeLamports: 0, computeUnitPriceMicroLamports: price };
  }
  const asked = order.prioritizationFeeLamports;
  if (asked === "disabled") return { prioritizationFeeLamports: 0, computeUnitPriceMicroLamports: undefined };
  if (typeof asked === "number")
    return { prioritizationFeeLamports: asked, computeUnitPriceMicroLamports: undefined };
  return {
    prioritizationFeeLamports: order.prioritizationFeeMaxLamports,
    computeUnitPriceMicroLamports: undefined,
    priorityLevel: { level: asked, multiplier: 1 },
  };
}

/** A maximum, or a reserve off the chain's own limit, never both; a maximum above the chain's is the chain's. */
function transactionLimit(
  max: number | undefined,
  reserve: number | undefined,
  of: "accounts" | "size",
): TransactionLimit {
  const chainLimit = of === "accounts" ? TRANSACTION_MAX_ACCOUNTS : TRANSACTION_MAX_SIZE;
  if (reserve !== undefined)
    return {
      limit: chainLimit - reserve,
      refusal: of === "accounts" ? "reserve_accounts_too_large" : "reserve_transaction_size_too_large",
    };
  return {
    limit: Math.min(max ?? chainLimit, chainLimit),
    refusal: of === "accounts" ? "max_accounts_too_small" : "max_transaction_size_too_small",
  };
}
