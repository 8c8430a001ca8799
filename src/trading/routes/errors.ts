/**
 * The one place the trading domain's refusals become the catalogue's errors:
 *
 *   OrderRefused(reason)            → reason (its reference code: route_not_found, invalid_fee_account, …)
 *   IntentRefused(reason)           → reason (invalid_open_transaction, open_transaction_expired, …)
 *   TradingNotReady("pools")        → amm_map_not_initialized (503)
 *   TradingNotReady("clock")        → blockhash_unavailable (503)
 *   FirmQuoteRefused(insufficient_funds)          → insufficient_funds
 *   FirmQuoteRefused(wallet_limit | client_limit) → too_many_firm_quotes (429)
 *   UnsafeTransactionError          → bad_request (the request named something the venue will not sign)
 */
import { ApiError } from "../../contract/errors.js";
import { IntentRefused, OrderRefused, TradingNotReady } from "../errors.js";
import { FirmQuoteRefused } from "../firm-quotes.js";
import { UnsafeTransactionError } from "../signing-guard.js";

/** The catalogue error a trading refusal answers with; undefined for errors it does not know. */
export function tradeApiError(error: unknown): ApiError | undefined {
  if (error instanceof OrderRefused || error instanceof IntentRefused) {
    return new ApiError(error.reason, error.message);
  }
  if (error instanceof TradingNotReady) {
    return new ApiError(
      error.missing === "pools" ? "amm_map_not_initialized" : "blockhash_unavailable",
      error.message,
    );
  }
  if (error instanceof FirmQuoteRefused) {
    return new ApiError(
      error.reason === "insufficient_funds" ? "insufficient_funds" : "too_many_firm_quotes",
      error.message,
    );
  }
  if (error instanceof UnsafeTransactionError) return new ApiError("bad_request", error.message);
  return undefined;
}
