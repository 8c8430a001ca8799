/**
 * The parameters of `GET /order`, checked one by one so that each invalid value is refused with the
 * reference service's error code for it (contract §3 and §6).
 */
import type { Address } from "@solana/kit";
import { isAddressText } from "../../chain/base58.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";
import type { OrderRequest } from "../order-terms.js";

/** Largest price impact accepted when the caller sets no `priceImpactTolerancePct`. */
export const DEFAULT_PRICE_IMPACT_TOLERANCE_PCT = 25;
/** Priority fee levels, in lamports for the whole transaction; `auto` is `medium`. */
export const PRIORITY_FEE_LEVELS = {
  disabled: 0,
  auto: 1_000,
  medium: 1_000,
  high: 10_000,
  veryHigh: 100_000,
} as const;
/** The reference's cap on a priority fee the venue picks: 0.005 SOL. */
export const MAX_AUTO_PRIORITY_FEE_LAMPORTS = 5_000_000;
/** The highest price per compute unit taken: its fee over a whole transaction stays an exact JSON number. */
const MAX_COMPUTE_UNIT_PRICE = 10n ** 15n;
const U64_MAX = 2n ** 64n - 1n;
const U32_MAX = 2 ** 32 - 1;

/** The raw query, as strings (unknown parameters are ignored). */
export type OrderQuery = Partial<Record<keyof OrderRequest | "prioritizationFeeMaxLamports", string>>;

/** Parses and checks the query of `GET /order`; throws an `ApiError` naming the parameter at fault. */
export function parseOrderRequest(query: OrderQuery, venues: readonly string[]): OrderRequest {
  const inputMint = address(query.inputMint, "inputMint", "invalid_input_mint");
  const outputMint = address(query.outputMint, "outputMint", "invalid_output_mint");
  if (inputMint === outputMint) {
    throw new ApiError("same_input_and_output_mint", `inputMint and outputMint are both ${inputMint}`);
  }
  const amount = amountParam(query.amount);
  const slippageBps = bps(query.slippageBps, "slippageBps", "invalid_slippage_bps");
  const predictionMarketSlippageBps = bps(
    query.predictionMarketSlippageBps,
    "predictionMarketSlippageBps",
    "invalid_slippage_bps",
  );
  if (
    predictionMarketSlippageBps !== undefined &&
    slippageBps !== undefined &&
    predictionMarketSlippageBps < slippageBps
  ) {
    throw new ApiError(
      "prediction_slippage_bps_below_routing_slippage",
      `predictionMarketSlippageBps must be at least slippageBps (${slippageBps}), got ${predictionMarketSlippageBps}`,
    );
  }
  const userPublicKey =
    query.userPublicKey === undefined
      ? undefined
      : address(query.userPublicKey, "userPublicKey", "invalid_user_public_key");
  const destinationWallet =
    query.destinationWallet === undefined
      ? undefined
      : address(query.destinationWallet, "destinationWallet", "invalid_destination_wallet");
  const priceImpactTolerancePct =
    query.priceImpactTolerancePct === undefined
      ? DEFAULT_PRICE_IMPACT_TOLERANCE_PCT
      : integer(
          query.priceImpactTolerancePct,
          "priceImpactTolerancePct",
          0,
          100,
          "invalid_price_impact_tolerance_pct",
        );
  const dexes = venueList(query.dexes, "dexes", venues);
  const excludeDexes = venueList(query.excludeDexes, "excludeDexes", venues);
  const onlyDirectRoutes = bool(query.onlyDirectRoutes, "onlyDirectRoutes", false);
  const maxRouteLength =
    query.maxRouteLength === undefined
      ? 2
      : integer(query.maxRouteLength, "maxRouteLength", 1, 64, "bad_request");
  const platformFeeBps =
    query.platformFeeBps === undefined
      ? 0
      : integer(query.platformFeeBps, "platformFeeBps", 0, 10_000, "invalid_platform_fee_bps");
  const feeAccount =
    query.feeAccount === undefined
      ? undefined
      : address(query.feeAccount, "feeAccount", "invalid_fee_account");
  if (platformFeeBps > 0 && feeAccount === undefined) {
    throw new ApiError(
      "platform_fee_account_not_specified",
      "platformFeeBps is set, so feeAccount (a token account of the output mint) is required",
    );
  }
  return {
    inputMint,
    outputMint,
    amount,
    slippageBps,
    predictionMarketSlippageBps,
    userPublicKey,
    destinationWallet,
    priceImpactTolerancePct,
    dexes,
    excludeDexes,
    onlyDirectRoutes,
    maxRouteLength,
    platformFeeBps,
    feeAccount,
    ...priority(query),
    wrapAndUnwrapSol: bool(query.wrapAndUnwrapSol, "wrapAndUnwrapSol", true),
    ...executionModes(query),
  };
}

/** `allowSyncExec` and `allowAsyncExec` (both default true); refusing both leaves no route at all. */
function executionModes(query: OrderQuery): Pick<OrderRequest, "allowSyncExec" | "allowAsyncExec"> {
  const allowSyncExec = bool(query.allowSyncExec, "allowSyncExec", true);
  const allowAsyncExec = bool(query.allowAsyncExec, "allowAsyncExec", true);
  if (!allowSyncExec && !allowAsyncExec) {
    throw new ApiError(
      "cannot_disable_sync_and_async_execution",
      "allowSyncExec and allowAsyncExec are both false: at least one kind of execution must be allowed",
    );
  }
  return { allowSyncExec, allowAsyncExec };
}

/**
 * The priority fee: `computeUnitPriceMicroLamports` (a price per compute unit), or
 * `prioritizationFeeLamports` (a level, capped by `prioritizationFeeMaxLamports`, or lamports), never both.
 */
function priority(
  query: OrderQuery,
): Pick<OrderRequest, "prioritizationFeeLamports" | "computeUnitPriceMicroLamports"> {
  const maxLamports =
    query.prioritizationFeeMaxLamports === undefined
      ? MAX_AUTO_PRIORITY_FEE_LAMPORTS
      : integer(
          query.prioritizationFeeMaxLamports,
          "prioritizationFeeMaxLamports",
          0,
          U32_MAX,
          "bad_request",
        );
  if (query.computeUnitPriceMicroLamports === undefined) {
    return {
      prioritizationFeeLamports: priorityFee(query.prioritizationFeeLamports, maxLamports),
      computeUnitPriceMicroLamports: undefined,
    };
  }
  if (query.prioritizationFeeLamports !== undefined) {
    throw new ApiError(
      "both_priority_fee_params_specified",
      "send prioritizationFeeLamports or computeUnitPriceMicroLamports, not both",
    );
  }
  const text = query.computeUnitPriceMicroLamports;
  if (!/^\d{1,16}$/.test(text) || BigInt(text) > MAX_COMPUTE_UNIT_PRICE) {
    throw new ApiError(
      "bad_request",
      `computeUnitPriceMicroLamports must be an integer from 0 to ${MAX_COMPUTE_UNIT_PRICE}, got ${JSON.stringify(text.slice(0, 32))}`,
    );
  }
  return { prioritizationFeeLamports: 0, computeUnitPriceMicroLamports: BigInt(text) };
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === "")
    throw new ApiError("bad_request", `query parameter ${name} is required`);
  return value;
}

function address(value: string | undefined, name: string, code: ErrorCode): Address {
  const text = required(value, name);
  if (!isAddressText(text))
    throw new ApiError(code, `${name} must be a base58 public key, got ${JSON.stringify(text.slice(0, 64))}`);
  return text;
}

function amountParam(value: string | undefined): bigint {
  const text = required(value, "amount");
  if (!/^\d{1,20}$/.test(text) || BigInt(text) > U64_MAX) {
    throw new ApiError(
      "bad_request",
      `amount must be an integer number of the input token's smallest unit (0 to 2^64-1), got ${JSON.stringify(text.slice(0, 64))}`,
    );
  }
  const amount = BigInt(text);
  if (amount === 0n) throw new ApiError("requested_input_amount_is_zero", "amount must be greater than zero");
  return amount;
}

function bps(value: string | undefined, name: string, code: ErrorCode): number | undefined {
  if (value === undefined || value === "auto") return undefined;
  return integer(value, name, 0, 10_000, code, ' or "auto"');
}

function integer(value: string, name: string, min: number, max: number, code: ErrorCode, or = ""): number {
  const number = Number(value);
  if (!/^\d{1,10}$/.test(value) || number < min || number > max) {
    throw new ApiError(
      code,
      `${name} must be an integer from ${min} to ${max}${or}, got ${JSON.stringify(value.slice(0, 64))}`,
    );
  }
  return number;
}

function bool(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ApiError(
    "bad_request",
    `${name} must be true or false, got ${JSON.stringify(value.slice(0, 64))}`,
  );
}

function venueList(value: string | undefined, name: string, venues: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  for (const venue of names) {
    if (!venues.includes(venue)) {
      throw new ApiError(
        "invalid_dex",
        `${name}: unknown venue ${JSON.stringify(venue.slice(0, 64))}; venues are ${venues.join(", ")}`,
      );
    }
  }
  return names;
}

/** `prioritizationFeeLamports`: a level the venue picks (at most `maxLamports`), or lamports as asked. */
function priorityFee(value: string | undefined, maxLamports: number): number {
  if (value === undefined) return Math.min(PRIORITY_FEE_LEVELS.auto, maxLamports);
  if (Object.hasOwn(PRIORITY_FEE_LEVELS, value))
    return Math.min(PRIORITY_FEE_LEVELS[value as keyof typeof PRIORITY_FEE_LEVELS], maxLamports);
  return integer(
    value,
    "prioritizationFeeLamports",
    0,
    U32_MAX,
    "bad_request",
    ", or auto, medium, high, veryHigh, disabled",
  );
}
