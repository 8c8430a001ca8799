/**
 * The rest of the reference's `GET /order` parameters: those whose effect on this venue is exactly
 * none (a firm quote has no positive slippage, no leg can slip, no Jito or Pump.fun runs on this
 * chain), accepted after the same checks the reference makes; and those whose effect the venue does
 * not build yet (sponsors, other destinations, market-init payers, ...), refused with the reference's
 * code for them. None is ever accepted and dropped.
 */
import { isAddressText } from "../../chain/base58.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";

/** The parameters this module decides, as the query carries them. */
export const OTHER_ORDER_PARAMS = [
  "perLegSlippage",
  "onlyJitRoutes",
  "forJitoBundle",
  "restrictRevertMint",
  "platformFeeMode",
  "platformFeeScale",
  "positiveSlippageFeeAccount",
  "positiveSlippageLimitPct",
  "sponsor",
  "sponsorExec",
  "destinationTokenAccount",

  "outputCloseAuthority",
  "revertWallet",
  "dynamicComputeUnitLimit",
  "includeJitoSandwichMitigationAccount",
  "predictionMarketInitPayer",
  "outcomeAccountRentRecipient",
  "skipPumpfunCashbackClaim",
  "allowBondingCurveUnderconsumption",
  "includeAddressLookupTables",
  "maxAccounts",
  "reserveAccounts",
  "maxTransactionSize",
  "reserveTransactionSize",
] as const;

export type OtherOrderQuery = Partial<
  Record<(typeof OTHER_ORDER_PARAMS)[number] | "platformFeeBps" | "destinationWallet", string>
>;

/** Solana's limits on one transaction: accounts it may lock, and bytes on the wire. */
const TRANSACTION_MAX_ACCOUNTS = 64;
const TRANSACTION_MAX_SIZE = 1232;

/**
 * Checks the parameters of `OTHER_ORDER_PARAMS`: returns when each has no effect here, throws the
 * reference's code for the first that the venue refuses. `isVenueAccount` names the venue's own keys.
 */
export function checkOtherOrderParams(
  query: OtherOrderQuery,
  isVenueAccount: (address: string) => boolean,
): void {
  const refuse = (code: ErrorCode, message: string): never => {
    throw new ApiError(code, message);
  };
  const flag = (name: keyof OtherOrderQuery): boolean | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (value === "true" || value === "false") return value === "true";
    return refuse("bad_request", `${name} must be true or false, got ${JSON.stringify(value.slice(0, 32))}`);
  };
  const account = (name: keyof OtherOrderQuery, code: ErrorCode): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (!isAddressText(value)) refuse(code, `${name} must be a base58 public key`);
    if (isVenueAccount(value)) refuse(code, `${name} ${value} is one of the venue's own accounts`);
    return value;
  };
  const count = (name: keyof OtherOrderQuery, max: number): number | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (!/^\d{1,10}$/.test(value) || Number(value) > max)
      return refuse(
        "bad_request",
        `${name} must be an integer from 0 to ${max}, got ${JSON.stringify(value.slice(0, 32))}`,
      );
    return Number(value);
  };

  // Each leg of a firm quote pays an exact amount: per-leg checks cannot fail, either way.
  flag("perLegSlippage");
  if (flag("onlyJitRoutes"))
    refuse("route_not_found", "onlyJitRoutes: this venue has no JIT router, so no route uses one");
  if (flag("forJitoBundle"))
    refuse(
      "route_not_found",
      "forJitoBundle: the venue's chain runs no Jito block engine, so no route is built for a bundle",
    );
  // The revert of an async order here is always its input: restricting it to the input changes nothing.
  flag("restrictRevertMint");
  const mode = query.platformFeeMode;
  if (mode !== undefined && mode !== "outputMint" && mode !== "inputMint")
    refuse(
      "invalid_platform_fee_bps",
      `platformFeeMode must be outputMint or inputMint, got ${JSON.stringify(mode.slice(0, 32))}`,
    );
  if (mode === "inputMint" && query.platformFeeBps !== undefined && query.platformFeeBps !== "0")
    refuse(
      "invalid_platform_fee_bps",
      "platformFeeMode=inputMint: this venue takes platform fees from the output only",
    );
  if (query.platformFeeScale !== undefined && query.platformFeeScale !== "0")
    refuse(
      "invalid_platform_fee_scale",
      "platformFeeScale: the prediction-market builder fee is not offered by this venue; send 0 or nothing",
    );
  // A firm quote delivers exactly its output: there is never positive slippage to collect or cap.
  account("positiveSlippageFeeAccount", "invalid_positive_slippage_fee_account");
  count("positiveSlippageLimitPct", 100);

  const sponsor = account("sponsor", "invalid_sponsor");
  const initPayer = account("predictionMarketInitPayer", "invalid_prediction_market_init_payer");
  if (sponsor && initPayer)
    refuse(
      "both_sponsor_and_prediction_market_init_payer_specified",
      "send sponsor or predictionMarketInitPayer, not both",
    );
  if (sponsor)
    refuse("invalid_sponsor", "sponsor: sponsored (gasless) transactions are not built by this venue yet");
  if (initPayer)
    refuse(
      "invalid_prediction_market_init_payer",
      "predictionMarketInitPayer: markets are not initialized by orders on this venue yet",
    );
  // Without a sponsor there is nobody else to execute: sponsorExec changes nothing.
  const sponsorExec = flag("sponsorExec");
  if (flag("skipPumpfunCashbackClaim") && sponsorExec !== false)
    refuse(
      "skip_pumpfun_cashback_claim_with_sponsor_executor",
      "skipPumpfunCashbackClaim needs sponsorExec=false",
    );
  if (flag("allowBondingCurveUnderconsumption") && sponsorExec !== false)
    refuse(
      "allow_bonding_curve_underconsumption_with_sponsor_executor",
      "allowBondingCurveUnderconsumption needs sponsorExec=false",
    );

  if (query.destinationTokenAccount !== undefined && query.destinationWallet !== undefined)
    refuse(
      "both_destination_params_specified",
      "send destinationWallet or destinationTokenAccount, not both",
    );
  account("destinationTokenAccount", "invalid_destination_token_account");
  if (query.destinationTokenAccount !== undefined)
    refuse(
      "destination_token_account_not_supported",
      "destinationTokenAccount: output goes to the user's own account on this venue",
    );
  account("outputCloseAuthority", "invalid_output_close_authority");
  if (query.outputCloseAuthority !== undefined)
    refuse(
      "invalid_output_close_authority",
      "outputCloseAuthority: output accounts are created with the user as their only authority here",
    );
  account("revertWallet", "invalid_revert_wallet");
  if (query.revertWallet !== undefined)
    refuse("invalid_revert_wallet", "revertWallet: reverts go back to the user on this venue");
  account("outcomeAccountRentRecipient", "invalid_outcome_account_rent_recipient");
  if (query.outcomeAccountRentRecipient !== undefined)
    refuse(
      "invalid_outcome_account_rent_recipient",
      "outcomeAccountRentRecipient: this venue closes no outcome accounts",
    );
  if (flag("dynamicComputeUnitLimit"))
    refuse(
      "bad_request",
      "dynamicComputeUnitLimit: transactions ask for the fixed 200,000-unit limit on this venue",
    );
  const mitigation = query.includeJitoSandwichMitigationAccount;
  if (mitigation !== undefined && mitigation !== "false")
    refuse(
      "invalid_jito_sandwich_mitigation_account",
      "includeJitoSandwichMitigationAccount: the venue's chain runs no Jito block engine",
    );
  // The venue's transactions use no lookup tables: there are none to return.
  flag("includeAddressLookupTables");

  // Each limit is a maximum or a reserve below the chain's own: the venue builds only to the chain's.
  const limit = (rule: TransactionLimit) => {
    const max = count(rule.max, 65_535);
    const reserve = count(rule.reserve, rule.chainLimit);
    if (max !== undefined && reserve !== undefined)
      refuse(rule.codes.both, `send ${rule.max} or ${rule.reserve}, not both`);
    if (max !== undefined && max < rule.chainLimit)
      refuse(
        rule.codes.tooSmall,
        `${rule.max}: this venue builds transactions up to ${rule.chainLimit} ${rule.unit}, the chain's limit`,
      );
    if (reserve) refuse(rule.codes.tooLarge, `${rule.reserve}: this venue reserves no room; send 0`);
  };
  limit({
    max: "maxAccounts",
    reserve: "reserveAccounts",
    chainLimit: TRANSACTION_MAX_ACCOUNTS,
    unit: "accounts",
    codes: {
      both: "both_max_accounts_and_reserve_accounts_specified",
      tooSmall: "max_accounts_too_small",
      tooLarge: "reserve_accounts_too_large",
    },
  });
  limit({
    max: "maxTransactionSize",
    reserve: "reserveTransactionSize",
    chainLimit: TRANSACTION_MAX_SIZE,
    unit: "bytes",
    codes: {
      both: "both_max_transaction_size_and_reserve_transaction_size_specified",
      tooSmall: "max_transaction_size_too_small",
      tooLarge: "reserve_transaction_size_too_large",
    },
  });
}

/** A pair of the reference's transaction limits: a maximum, or a reserve off the chain's limit. */
interface TransactionLimit {
  max: keyof OtherOrderQuery;
  reserve: keyof OtherOrderQuery;
  chainLimit: number;
  unit: string;
  codes: { both: ErrorCode; tooSmall: ErrorCode; tooLarge: ErrorCode };
}
