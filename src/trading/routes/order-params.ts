/**
 * The parameters of `GET /order`, declared once (`ORDER_PARAMS`), which `/intent`, `/quote` and
 * `/swap` share: `GET /order`'s schema, the code each is refused with, and the `OrderRequest` the
 * order desk is asked (`order-request.ts`) derive from it. A parameter the reference gives no code of its own is refused
 * with the code of its family; the message names it. Parameters whose effect here is exactly none by
 * their meaning (a firm quote has no positive slippage, no leg can slip, no Jito or Pump.fun runs on
 * this chain) are checked the same way and taken.
 */
import {
  type PriorityLevel,
  TRANSACTION_MAX_ACCOUNTS,
  TRANSACTION_MAX_SIZE,
} from "../spot/request-limits.js";
import {
  address,
  bps,
  flag,
  integer,
  list,
  type Param,
  PUBLISHED,
  paramCodes,
  parseUnsigned,
  type RawQuery,
  requiredAddress,
  requiredText,
  U32_MAX,
  U64_MAX,
} from "./query-params.js";

/** The reference's cap on a priority fee the venue picks: 0.005 SOL. */
export const MAX_AUTO_PRIORITY_FEE_LAMPORTS = 5_000_000;
/** The highest price per compute unit taken: its fee over a whole transaction stays an exact JSON number. */
const MAX_COMPUTE_UNIT_PRICE = 10n ** 15n;
/** The names `prioritizationFeeLamports` takes for a level of the chain's recent fees; `auto` is medium. */
const PRIORITY_LEVEL_NAMES: Readonly<Record<string, PriorityLevel>> = {
  auto: "medium",
  medium: "medium",
  high: "high",
  veryHigh: "veryHigh",
};

/**
 * `amount`: base units of the input token, 1 to 2^64−1 (a token amount on chain is a u64). The
 * reference's enums (Order, Intent, Quote) have no code for an invalid amount, only
 * `requested_input_amount_is_zero`: every refusal carries it, and the message says which bound failed.
 */
const amount = {
  ...requiredText(
    "requested_input_amount_is_zero",
    "Input amount in the input token's smallest unit",
    (text, _name, refuse) => {
      const value = parseUnsigned(text);
      if (value === undefined)
        return refuse(
          `amount must be an integer number of the input token's smallest unit, from 1 to ${U64_MAX} (2^64-1), got ${JSON.stringify(text.slice(0, 64))}`,
        );
      if (value > U64_MAX)
        return refuse(
          `amount is past its bound: at most ${U64_MAX} (2^64-1, a u64 token amount), got ${JSON.stringify(text.slice(0, 64))}`,
        );
      if (value === 0n) return refuse("amount must be greater than zero");
      return value;
    },
    "1000000",
  ),
  published: PUBLISHED.int64,
};

/** A priority fee named as lamports, a level of the chain's recent fees, or `disabled`. */
type PriorityFeeAsked = number | PriorityLevel | "disabled";

const prioritizationFeeLamports: Param<PriorityFeeAsked> = {
  code: "both_priority_fee_params_specified",
  description:
    "Priority fee in lamports, or auto, medium, high, veryHigh, disabled; not with computeUnitPriceMicroLamports",
  default: "auto",
  published: {
    oneOf: [
      { type: "string", enum: ["auto", "medium", "high", "veryHigh", "disabled"] },
      { type: "integer", format: "int32", minimum: 0 },
    ],
  },
  read: (text = "auto", name, refuse) => {
    if (text === "disabled") return text;
    if (Object.hasOwn(PRIORITY_LEVEL_NAMES, text)) return PRIORITY_LEVEL_NAMES[text] as PriorityLevel;
    const range = { min: 0, max: U32_MAX, or: ", or auto, medium, high, veryHigh, disabled" };
    const parsed = parseUnsigned(text);
    if (parsed === undefined || parsed > BigInt(range.max))
      return refuse(
        `${name} must be an integer from 0 to ${range.max}${range.or}, got ${JSON.stringify(text.slice(0, 64))}`,
      );
    return Number(parsed);
  },
};

const computeUnitPriceMicroLamports: Param<bigint | undefined> = {
  code: "both_priority_fee_params_specified",
  description: "Price per compute unit in micro-lamports, instead of prioritizationFeeLamports",
  published: PUBLISHED.int64,
  read: (text, name, refuse) => {
    if (text === undefined) return undefined;
    const price = parseUnsigned(text);
    if (price === undefined || price > MAX_COMPUTE_UNIT_PRICE)
      return refuse(
        `${name} must be an integer from 0 to ${MAX_COMPUTE_UNIT_PRICE}, got ${JSON.stringify(text.slice(0, 32))}`,
      );
    return price;
  },
};

const platformFeeMode: Param<"outputMint" | "inputMint"> = {
  code: "invalid_platform_fee_bps",
  description: "outputMint (the default) or inputMint: the fee is taken off the input before routing",
  default: "outputMint",
  published: { type: "string", enum: ["outputMint", "inputMint"] },
  read: (text = "outputMint", name, refuse) =>
    text === "outputMint" || text === "inputMint"
      ? text
      : refuse(`${name} must be outputMint or inputMint, got ${JSON.stringify(text.slice(0, 32))}`),
};

/** `false` or nothing: the venue's chain runs no Jito block engine. */
const includeJitoSandwichMitigationAccount: Param<false> = {
  code: "invalid_jito_sandwich_mitigation_account",
  description: "false only (invalid_jito_sandwich_mitigation_account)",
  // The reference takes a flag or an account's address; only false means anything on this chain.
  published: { oneOf: [{ type: "boolean" }, { type: "string" }] },
  read: (text, name, refuse) => {
    if (text !== undefined && text !== "false")
      return refuse(`${name}: the venue's chain runs no Jito block engine; send false or nothing`);
    return false;
  },
};

const routeLength = { min: 1, max: 64 };
const transactionNumber = { min: 0, max: 65_535 };

/** Every parameter of `GET /order`, in the order its document lists them. */
export const ORDER_PARAMS = {
  inputMint: requiredAddress("invalid_input_mint", "Mint of the token given"),
  outputMint: requiredAddress("invalid_output_mint", "Mint of the token received"),
  amount,
  slippageBps: bps(
    "invalid_slippage_bps",
    'Allowed slippage in basis points (0–10000) or "auto" (the default, 50)',
  ),
  userPublicKey: address(
    "invalid_user_public_key",
    "The user's wallet; the response then carries the transaction to sign",
  ),
  destinationWallet: address(
    "invalid_destination_wallet",
    "Wallet whose token account receives the output (created if missing); spot orders, not native SOL",
  ),
  predictionMarketSlippageBps: bps(
    "invalid_slippage_bps",
    'Prediction-market orders: slippage in basis points or "auto"; at least slippageBps',
  ),
  priceImpactTolerancePct: integer(
    "invalid_price_impact_tolerance_pct",
    "Largest price impact accepted, in whole percent. Unset: 25 on a spot route; on a prediction-market " +
      "order, an average price at most 3 cents per contract from the best one",
    { min: 0, max: 100 },
  ),
  dexes: list("invalid_dex", "Comma-separated venues a route may use (see GET /venues)"),
  excludeDexes: list("invalid_dex", "Comma-separated venues a route must not use"),
  onlyDirectRoutes: flag("invalid_dex", "true for single-leg routes only", false),
  maxRouteLength: integer(
    "invalid_dex",
    "Most legs a route may have (1 or more; routes have at most 2)",
    routeLength,
    2,
  ),
  platformFeeBps: integer(
    "invalid_platform_fee_bps",
    "Integrator fee in basis points, taken from the output; needs feeAccount",
    { min: 0, max: 10_000 },
    0,
  ),
  feeAccount: address(
    "invalid_fee_account",
    "Token account of the output mint that receives the platform fee",
  ),
  prioritizationFeeLamports,
  prioritizationFeeMaxLamports: integer(
    "both_priority_fee_params_specified",
    "Cap on a priority fee level the venue picks (default 5000000, 0.005 SOL)",
    { min: 0, max: U32_MAX },
    MAX_AUTO_PRIORITY_FEE_LAMPORTS,
  ),
  computeUnitPriceMicroLamports,
  allowSyncExec: flag(
    "cannot_disable_sync_and_async_execution",
    "false to refuse routes executed in this transaction (default true)",
    true,
  ),
  allowAsyncExec: flag(
    "cannot_disable_sync_and_async_execution",
    "false to refuse routes settled after it, prediction-market orders (default true)",
    true,
  ),
  wrapAndUnwrapSol: flag(
    "invalid_input_mint",
    "With wrapped SOL as input or output, wrap and unwrap native SOL (default true)",
    true,
  ),
  // Each leg of a firm quote pays an exact amount: per-leg checks cannot fail, either way.
  perLegSlippage: flag(
    "invalid_slippage_bps",
    "true or false; no effect: every leg of a firm quote pays an exact amount",
    true,
  ),
  onlyJitRoutes: flag(
    "invalid_dex",
    "true is refused (route_not_found): this venue has no JIT router",
    false,
  ),
  forJitoBundle: flag(
    "invalid_jito_sandwich_mitigation_account",
    "true is refused (route_not_found): the chain runs no Jito block engine",
    false,
  ),
  restrictRevertMint: flag(
    "invalid_input_mint_for_restrict_revert_mint",
    "true or false; an async order here always reverts to its input mint",
    false,
  ),
  platformFeeMode,
  platformFeeScale: integer(
    "invalid_platform_fee_scale",
    "Prediction-market builder fee k in thousandths (0–999): k·p·(1−p) per contract, in USDC; needs feeAccount",
    { min: 0, max: 999 },
    0,
  ),
  // A firm quote delivers exactly its output: there is never positive slippage to collect or cap.
  positiveSlippageFeeAccount: address(
    "invalid_positive_slippage_fee_account",
    "Checked; no effect: a firm quote has no positive slippage",
  ),
  positiveSlippageLimitPct: integer(
    "invalid_positive_slippage_fee_account",
    "0 to 100; no effect: a firm quote has no positive slippage",
    { min: 0, max: 100 },
  ),
  sponsor: address(
    "invalid_sponsor",
    "Pays the transaction fee and the rent of created accounts, and signs; the user signs for its tokens",
  ),
  sponsorExec: flag(
    "invalid_sponsor",
    "true (the default) or false; the sponsor is the fee payer either way",
    true,
  ),
  destinationTokenAccount: address(
    "invalid_destination_token_account",
    "An existing token account of the output mint that receives the output; for native SOL output, a wallet",
  ),
  outputCloseAuthority: address(
    "invalid_output_close_authority",
    "Creates the user's output account with this close authority",
  ),
  revertWallet: address(
    "invalid_revert_wallet",
    "Async orders: receives the input if the order reverts; no effect on spot orders",
  ),
  dynamicComputeUnitLimit: flag(
    "both_priority_fee_params_specified",
    "true: simulate the transaction and ask for the units it uses plus a tenth",
    false,
  ),
  includeJitoSandwichMitigationAccount,
  predictionMarketInitPayer: address(
    "invalid_prediction_market_init_payer",
    "Pays (and signs for) an uninitialized market's initialization",
  ),
  outcomeAccountRentRecipient: address(
    "invalid_outcome_account_rent_recipient",
    "No effect on spot orders; prediction-market orders refuse it (invalid_outcome_account_rent_recipient): outcome accounts are not closed by orders here",
  ),
  skipPumpfunCashbackClaim: flag(
    "skip_pumpfun_cashback_claim_with_sponsor_executor",
    "true needs sponsorExec=false; no effect: no Pump.fun venue here",
    false,
  ),
  allowBondingCurveUnderconsumption: flag(
    "allow_bonding_curve_underconsumption_with_sponsor_executor",
    "true needs sponsorExec=false; no effect: no Pump.fun venue here",
    false,
  ),
  includeAddressLookupTables: flag(
    "max_accounts_too_small",
    "true returns addressLookupTables: those the transaction uses (none)",
    false,
  ),
  maxAccounts: integer(
    "max_accounts_too_small",
    "Most accounts the transaction may name; a two-leg route falls back to a direct one",
    transactionNumber,
  ),
  reserveAccounts: integer("reserve_accounts_too_large", "Accounts to leave free under the chain's 64", {
    min: 0,
    max: TRANSACTION_MAX_ACCOUNTS,
  }),
  maxTransactionSize: integer(
    "max_transaction_size_too_small",
    "Most bytes the transaction may take on the wire",
    transactionNumber,
  ),
  reserveTransactionSize: integer(
    "reserve_transaction_size_too_large",
    "Bytes to leave free under the chain's 1232",
    { min: 0, max: TRANSACTION_MAX_SIZE },
  ),
};

/** The code each parameter is refused with when it is missing or malformed. */
export const ORDER_PARAM_CODES = paramCodes(ORDER_PARAMS);
/** The raw query, as strings (unknown parameters are ignored). */
export type OrderQuery = RawQuery<typeof ORDER_PARAMS>;
/** Firm quotes are bounded per client: its key when it has one, else its address. */
export function clientOf(request: { grant: { id: string } | null; ip: string }): string {
  return request.grant ? `key:${request.grant.id}` : `ip:${request.ip}`;
}
