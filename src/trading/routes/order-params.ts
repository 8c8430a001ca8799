/**
 * The parameters of `GET /order` (and the ones `GET /intent` shares), checked one by one so that each
 * invalid value is refused with the reference service's code for it. A parameter the reference gives
 * no code of its own is refused with the code of its family (`ORDER_PARAM_CODES`); the message names
 * it. Parameters whose effect here is exactly none by their meaning (a firm quote has no positive
 * slippage, no leg can slip, no Jito or Pump.fun runs on this chain) are checked the same way and
 * taken; the rest reach the order desk as `OrderRequest` fields, which decides them per route.
 */
import type { Address } from "@solana/kit";
import { isAddressText } from "../../chain/base58.js";
import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";
import {
  type OrderRequest,
  type PriorityLevel,
  TRANSACTION_MAX_ACCOUNTS,
  TRANSACTION_MAX_SIZE,
  type TransactionLimit,
} from "../spot/order-terms.js";

/** Largest price impact accepted when the caller sets no `priceImpactTolerancePct`. */
export const DEFAULT_PRICE_IMPACT_TOLERANCE_PCT = 25;
/** The names `prioritizationFeeLamports` takes for a level of the chain's recent fees; `auto` is medium. */
const PRIORITY_LEVEL_NAMES: Readonly<Record<string, PriorityLevel>> = {
  auto: "medium",
  medium: "medium",
  high: "high",
  veryHigh: "veryHigh",
};
/** The reference's cap on a priority fee the venue picks: 0.005 SOL. */
export const MAX_AUTO_PRIORITY_FEE_LAMPORTS = 5_000_000;
/** The highest price per compute unit taken: its fee over a whole transaction stays an exact JSON number. */
const MAX_COMPUTE_UNIT_PRICE = 10n ** 15n;
const U64_MAX = 2n ** 64n - 1n;
const U32_MAX = 2 ** 32 - 1;
/** What `parseUnsigned` gives for a number of more digits than any bound here has: past them all. */
const PAST_EVERY_BOUND = 10n ** 40n;

/**
 * The reference code each parameter is refused with when it is missing or malformed: its own where the
 * reference has one, else its family's (the reference's enum has no generic code).
 */
export const ORDER_PARAM_CODES = {
  inputMint: "invalid_input_mint",
  outputMint: "invalid_output_mint",
  // The reference's only amount code: a malformed amount, or one past 2^64−1, gets it too.
  amount: "requested_input_amount_is_zero",
  slippageBps: "invalid_slippage_bps",
  predictionMarketSlippageBps: "invalid_slippage_bps",
  perLegSlippage: "invalid_slippage_bps",
  userPublicKey: "invalid_user_public_key",
  priceImpactTolerancePct: "invalid_price_impact_tolerance_pct",
  dexes: "invalid_dex",
  excludeDexes: "invalid_dex",
  onlyDirectRoutes: "invalid_dex",
  maxRouteLength: "invalid_dex",
  onlyJitRoutes: "invalid_dex",
  forJitoBundle: "invalid_jito_sandwich_mitigation_account",
  includeJitoSandwichMitigationAccount: "invalid_jito_sandwich_mitigation_account",
  allowSyncExec: "cannot_disable_sync_and_async_execution",
  allowAsyncExec: "cannot_disable_sync_and_async_execution",
  restrictRevertMint: "invalid_input_mint_for_restrict_revert_mint",
  platformFeeBps: "invalid_platform_fee_bps",
  platformFeeMode: "invalid_platform_fee_bps",
  platformFeeScale: "invalid_platform_fee_scale",
  feeAccount: "invalid_fee_account",
  positiveSlippageFeeAccount: "invalid_positive_slippage_fee_account",
  positiveSlippageLimitPct: "invalid_positive_slippage_fee_account",
  sponsor: "invalid_sponsor",
  sponsorExec: "invalid_sponsor",
  destinationWallet: "invalid_destination_wallet",
  destinationTokenAccount: "invalid_destination_token_account",
  outputCloseAuthority: "invalid_output_close_authority",
  revertWallet: "invalid_revert_wallet",
  wrapAndUnwrapSol: "invalid_input_mint",
  // The reference's only priority-fee code: a malformed or out-of-range fee gets it too (the message says which).
  prioritizationFeeLamports: "both_priority_fee_params_specified",
  prioritizationFeeMaxLamports: "both_priority_fee_params_specified",
  computeUnitPriceMicroLamports: "both_priority_fee_params_specified",
  dynamicComputeUnitLimit: "both_priority_fee_params_specified",
  predictionMarketInitPayer: "invalid_prediction_market_init_payer",
  outcomeAccountRentRecipient: "invalid_outcome_account_rent_recipient",
  skipPumpfunCashbackClaim: "skip_pumpfun_cashback_claim_with_sponsor_executor",
  allowBondingCurveUnderconsumption: "allow_bonding_curve_underconsumption_with_sponsor_executor",
  includeAddressLookupTables: "max_accounts_too_small",
  maxAccounts: "max_accounts_too_small",
  reserveAccounts: "reserve_accounts_too_large",
  maxTransactionSize: "max_transaction_size_too_small",
  reserveTransactionSize: "reserve_transaction_size_too_large",
} as const satisfies Record<string, ErrorCode>;

export type OrderParam = keyof typeof ORDER_PARAM_CODES;

/** Firm quotes are bounded per client: its key when it has one, else its address. */
export function clientOf(request: { grant: { id: string } | null; ip: string }): string {
  return request.grant ? `key:${request.grant.id}` : `ip:${request.ip}`;
}

/** The raw query, as strings (unknown parameters are ignored). */
export type OrderQuery = Partial<Record<OrderParam, string>>;

/**
 * Parses and checks the query of `GET /order`; throws an `ApiError` naming the parameter at fault.
 * `GET /quote` names no fee account: `feeAccountLater` lets a platform fee go without one.
 */
export function parseOrderRequest(
  query: OrderQuery,
  venues: readonly string[],
  options: { feeAccountLater?: boolean } = {},
): OrderRequest {
  const inputMint = address(query.inputMint, "inputMint");
  const outputMint = address(query.outputMint, "outputMint");
  if (inputMint === outputMint) {
    throw new ApiError("same_input_and_output_mint", `inputMint and outputMint are both ${inputMint}`);
  }
  const amount = amountParam(query.amount);
  const slippageBps = bps(query.slippageBps, "slippageBps");
  const predictionMarketSlippageBps = bps(query.predictionMarketSlippageBps, "predictionMarketSlippageBps");
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
  const userPublicKey = optionalAddress(query.userPublicKey, "userPublicKey");
  const destinationWallet = optionalAddress(query.destinationWallet, "destinationWallet");
  const priceImpactTolerancePct =
    query.priceImpactTolerancePct === undefined
      ? DEFAULT_PRICE_IMPACT_TOLERANCE_PCT
      : integer(query.priceImpactTolerancePct, "priceImpactTolerancePct", 0, 100);
  const dexes = venueList(query.dexes, "dexes", venues);
  const excludeDexes = venueList(query.excludeDexes, "excludeDexes", venues);
  const onlyDirectRoutes = bool(query.onlyDirectRoutes, "onlyDirectRoutes", false);
  const maxRouteLength =
    query.maxRouteLength === undefined ? 2 : integer(query.maxRouteLength, "maxRouteLength", 1, 64);
  const platformFeeBps =
    query.platformFeeBps === undefined ? 0 : integer(query.platformFeeBps, "platformFeeBps", 0, 10_000);
  const feeAccount = optionalAddress(query.feeAccount, "feeAccount");
  const wrapAndUnwrapSol = bool(query.wrapAndUnwrapSol, "wrapAndUnwrapSol", true);
  if (platformFeeBps > 0 && feeAccount === undefined && !options.feeAccountLater) {
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
    wrapAndUnwrapSol,
    ...executionModes(query),
    ...accountsAndFees(query, { outputMint, wrapAndUnwrapSol, destinationWallet, feeAccount }),
    ...transactionLimits(query),
  };
}

/**
 * Who pays, signs and receives, and the fee parameters beyond `platformFeeBps`: each checked alone and
 * against the combinations the reference refuses. Route routing options that cannot apply here
 * (JIT, Jito) are refused; those with exactly no effect here are checked and taken.
 */
function accountsAndFees(
  query: OrderQuery,
  order: {
    outputMint: Address;
    wrapAndUnwrapSol: boolean;
    destinationWallet: Address | undefined;
    feeAccount: Address | undefined;
  },
): Pick<
  OrderRequest,
  | "sponsor"
  | "sponsorExec"
  | "destinationTokenAccount"
  | "positiveSlippageFeeAccount"
  | "outputCloseAuthority"
  | "platformFeeMode"
  | "platformFeeScale"
  | "revertWallet"
  | "restrictRevertMint"
  | "predictionMarketInitPayer"
  | "outcomeAccountRentRecipient"
> {
  // Each leg of a firm quote pays an exact amount: per-leg checks cannot fail, either way.
  bool(query.perLegSlippage, "perLegSlippage", true);
  if (bool(query.onlyJitRoutes, "onlyJitRoutes", false))
    throw new ApiError(
      "route_not_found",
      "onlyJitRoutes: this venue has no JIT router, so no route uses one",
    );
  if (bool(query.forJitoBundle, "forJitoBundle", false))
    throw new ApiError(
      "route_not_found",
      "forJitoBundle: the venue's chain runs no Jito block engine, so no route is built for a bundle",
    );
  const mitigation = query.includeJitoSandwichMitigationAccount;
  if (mitigation !== undefined && mitigation !== "false")
    throw new ApiError(
      "invalid_jito_sandwich_mitigation_account",
      "includeJitoSandwichMitigationAccount: the venue's chain runs no Jito block engine; send false or nothing",
    );

  const mode = query.platformFeeMode ?? "outputMint";
  if (mode !== "outputMint" && mode !== "inputMint")
    throw new ApiError(
      ORDER_PARAM_CODES.platformFeeMode,
      `platformFeeMode must be outputMint or inputMint, got ${JSON.stringify(mode.slice(0, 32))}`,
    );
  const platformFeeScale =
    query.platformFeeScale === undefined ? 0 : integer(query.platformFeeScale, "platformFeeScale", 0, 999);
  if (platformFeeScale > 0 && order.feeAccount === undefined)
    throw new ApiError(
      "platform_fee_account_not_specified_for_platform_fee_scale",
      "platformFeeScale is set, so feeAccount (a token account of the settlement mint) is required",
    );
  // A firm quote delivers exactly its output: there is never positive slippage to collect or cap.
  const positiveSlippageFeeAccount = optionalAddress(
    query.positiveSlippageFeeAccount,
    "positiveSlippageFeeAccount",
  );
  if (query.positiveSlippageLimitPct !== undefined)
    integer(query.positiveSlippageLimitPct, "positiveSlippageLimitPct", 0, 100);

  const sponsor = optionalAddress(query.sponsor, "sponsor");
  const predictionMarketInitPayer = optionalAddress(
    query.predictionMarketInitPayer,
    "predictionMarketInitPayer",
  );
  if (sponsor && predictionMarketInitPayer)
    throw new ApiError(
      "both_sponsor_and_prediction_market_init_payer_specified",
      "send sponsor or predictionMarketInitPayer, not both",
    );
  const sponsorExec = bool(query.sponsorExec, "sponsorExec", true);
  if (bool(query.skipPumpfunCashbackClaim, "skipPumpfunCashbackClaim", false) && sponsorExec)
    throw new ApiError(
      "skip_pumpfun_cashback_claim_with_sponsor_executor",
      "skipPumpfunCashbackClaim needs sponsorExec=false",
    );
  if (
    bool(query.allowBondingCurveUnderconsumption, "allowBondingCurveUnderconsumption", false) &&
    sponsorExec
  )
    throw new ApiError(
      "allow_bonding_curve_underconsumption_with_sponsor_executor",
      "allowBondingCurveUnderconsumption needs sponsorExec=false",
    );

  const destinationTokenAccount = optionalAddress(query.destinationTokenAccount, "destinationTokenAccount");
  if (destinationTokenAccount && order.destinationWallet)
    throw new ApiError(
      "both_destination_params_specified",
      "send destinationWallet or destinationTokenAccount, not both",
    );
  const outputCloseAuthority = optionalAddress(query.outputCloseAuthority, "outputCloseAuthority");
  if (outputCloseAuthority && (destinationTokenAccount || order.destinationWallet))
    throw new ApiError(
      "output_close_authority_with_destination_token_account",
      "outputCloseAuthority sets up the user's own output account: it cannot go with destinationWallet or destinationTokenAccount",
    );
  if (outputCloseAuthority && order.wrapAndUnwrapSol && order.outputMint === WRAPPED_SOL_MINT)
    throw new ApiError(
      "output_close_authority_with_native_sol_output",
      "outputCloseAuthority: native SOL output has no output account to keep; send wrapAndUnwrapSol=false",
    );
  return {
    sponsor,
    sponsorExec,
    destinationTokenAccount,
    positiveSlippageFeeAccount,
    outputCloseAuthority,
    platformFeeMode: mode,
    platformFeeScale,
    revertWallet: optionalAddress(query.revertWallet, "revertWallet"),
    restrictRevertMint: bool(query.restrictRevertMint, "restrictRevertMint", false),
    predictionMarketInitPayer,
    outcomeAccountRentRecipient: optionalAddress(
      query.outcomeAccountRentRecipient,
      "outcomeAccountRentRecipient",
    ),
  };
}

/**
 * The transaction's size limits (a maximum, or a reserve off the chain's own, never both; a maximum
 * above the chain's is the chain's), the compute-unit limit's sizing and the lookup-table listing.
 */
function transactionLimits(
  query: OrderQuery,
): Pick<
  OrderRequest,
  "maxAccounts" | "maxTransactionSize" | "dynamicComputeUnitLimit" | "includeAddressLookupTables"
> {
  const limit = (
    max: "maxAccounts" | "maxTransactionSize",
    reserve: "reserveAccounts" | "reserveTransactionSize",
    chainLimit: number,
    both: ErrorCode,
  ): TransactionLimit => {
    const maxText = query[max];
    const reserveText = query[reserve];
    const maxValue = maxText === undefined ? undefined : integer(maxText, max, 0, 65_535);
    const reserveValue = reserveText === undefined ? undefined : integer(reserveText, reserve, 0, chainLimit);
    if (maxValue !== undefined && reserveValue !== undefined)
      throw new ApiError(both, `send ${max} or ${reserve}, not both`);
    if (reserveValue !== undefined)
      return { limit: chainLimit - reserveValue, refusal: ORDER_PARAM_CODES[reserve] };
    return { limit: Math.min(maxValue ?? chainLimit, chainLimit), refusal: ORDER_PARAM_CODES[max] };
  };
  return {
    maxAccounts: limit(
      "maxAccounts",
      "reserveAccounts",
      TRANSACTION_MAX_ACCOUNTS,
      "both_max_accounts_and_reserve_accounts_specified",
    ),
    maxTransactionSize: limit(
      "maxTransactionSize",
      "reserveTransactionSize",
      TRANSACTION_MAX_SIZE,
      "both_max_transaction_size_and_reserve_transaction_size_specified",
    ),
    dynamicComputeUnitLimit: bool(query.dynamicComputeUnitLimit, "dynamicComputeUnitLimit", false),
    includeAddressLookupTables: bool(query.includeAddressLookupTables, "includeAddressLookupTables", false),
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
): Pick<OrderRequest, "prioritizationFeeLamports" | "computeUnitPriceMicroLamports" | "priorityLevel"> {
  const maxLamports =
    query.prioritizationFeeMaxLamports === undefined
      ? MAX_AUTO_PRIORITY_FEE_LAMPORTS
      : integer(query.prioritizationFeeMaxLamports, "prioritizationFeeMaxLamports", 0, U32_MAX);
  if (query.computeUnitPriceMicroLamports === undefined) {
    const value = query.prioritizationFeeLamports ?? "auto";
    if (value === "disabled")
      return { prioritizationFeeLamports: 0, computeUnitPriceMicroLamports: undefined };
    const level = Object.hasOwn(PRIORITY_LEVEL_NAMES, value) ? PRIORITY_LEVEL_NAMES[value] : undefined;
    if (level)
      return {
        prioritizationFeeLamports: maxLamports,
        computeUnitPriceMicroLamports: undefined,
        priorityLevel: { level, multiplier: 1 },
      };
    return {
      prioritizationFeeLamports: integer(
        value,
        "prioritizationFeeLamports",
        0,
        U32_MAX,
        ", or auto, medium, high, veryHigh, disabled",
      ),
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
  const price = parseUnsigned(text);
  if (price === undefined || price > MAX_COMPUTE_UNIT_PRICE) {
    throw new ApiError(
      ORDER_PARAM_CODES.computeUnitPriceMicroLamports,
      `computeUnitPriceMicroLamports must be an integer from 0 to ${MAX_COMPUTE_UNIT_PRICE}, got ${JSON.stringify(text.slice(0, 32))}`,
    );
  }
  return { prioritizationFeeLamports: 0, computeUnitPriceMicroLamports: price };
}

/**
 * The value of a decimal integer written in digits only (leading zeros allowed), exactly, as a bigint:
 * never rounded through a float. `undefined` for anything else (a sign, a point, an exponent, spaces).
 * A number of more digits than any bound here has is `PAST_EVERY_BOUND`, without parsing it.
 */
export function parseUnsigned(text: string): bigint | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const digits = text.replace(/^0+(?=\d)/, "");
  return digits.length > 39 ? PAST_EVERY_BOUND : BigInt(digits);
}

function required(value: string | undefined, name: OrderParam): string {
  if (value === undefined || value === "")
    throw new ApiError(ORDER_PARAM_CODES[name], `query parameter ${name} is required`);
  return value;
}

function address(value: string | undefined, name: OrderParam): Address {
  const text = required(value, name);
  if (!isAddressText(text))
    throw new ApiError(
      ORDER_PARAM_CODES[name],
      `${name} must be a base58 public key, got ${JSON.stringify(text.slice(0, 64))}`,
    );
  return text;
}

function optionalAddress(value: string | undefined, name: OrderParam): Address | undefined {
  return value === undefined ? undefined : address(value, name);
}

/**
 * `amount`: base units of the input token, 1 to 2^64−1 (a token amount on chain is a u64). The
 * reference's enums (Order, Intent, Quote) have no code for an invalid amount, only
 * `requested_input_amount_is_zero`: every refusal carries it, and the message says which bound failed.
 */
function amountParam(value: string | undefined): bigint {
  const text = required(value, "amount");
  const amount = parseUnsigned(text);
  if (amount === undefined) {
    throw new ApiError(
      ORDER_PARAM_CODES.amount,
      `amount must be an integer number of the input token's smallest unit, from 1 to ${U64_MAX} (2^64-1), got ${JSON.stringify(text.slice(0, 64))}`,
    );
  }
  if (amount > U64_MAX) {
    throw new ApiError(
      ORDER_PARAM_CODES.amount,
      `amount is past its bound: at most ${U64_MAX} (2^64-1, a u64 token amount), got ${JSON.stringify(text.slice(0, 64))}`,
    );
  }
  if (amount === 0n) throw new ApiError("requested_input_amount_is_zero", "amount must be greater than zero");
  return amount;
}

function bps(value: string | undefined, name: OrderParam): number | undefined {
  if (value === undefined || value === "auto") return undefined;
  return integer(value, name, 0, 10_000, ' or "auto"');
}

/** An integer parameter within [min, max] (both at most 2^53−1), compared exactly before it becomes a number. */
function integer(value: string, name: OrderParam, min: number, max: number, or = ""): number {
  const parsed = parseUnsigned(value);
  if (parsed === undefined || parsed < BigInt(min) || parsed > BigInt(max)) {
    throw new ApiError(
      ORDER_PARAM_CODES[name],
      `${name} must be an integer from ${min} to ${max}${or}, got ${JSON.stringify(value.slice(0, 64))}`,
    );
  }
  return Number(parsed);
}

function bool(value: string | undefined, name: OrderParam, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ApiError(
    ORDER_PARAM_CODES[name],
    `${name} must be true or false, got ${JSON.stringify(value.slice(0, 64))}`,
  );
}

function venueList(
  value: string | undefined,
  name: OrderParam,
  venues: readonly string[],
): string[] | undefined {
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
