/**
 * The one place the trading domain's refusals, and every other error on a trade route, become the
 * catalogue's errors, with the codes the route's reference declares (dflow-trade-api.md §9):
 *
 *   a schema failure                → the route's code for the parameter at fault (PARAMETER_CODES)
 *   OrderRefused(reason)            → reason (its reference code: route_not_found, invalid_fee_account, …)
 *   IntentRefused(reason)           → POST /submit-intent's code for it (SUBMIT_INTENT_CODES)
 *   TradingNotReady("pools")        → amm_map_not_initialized (503)
 *   TradingNotReady("clock")        → blockhash_unavailable (503)
 *   TradingNotReady("holds")        → amm_map_lagging (503: the pools moved under every pricing)
 *   TradingNotReady("upstream")     → not_ready (503: a prediction market's book could not be read)
 *   TradingNotReady("chain")        → not_ready (503: the chain's state is not current; so is a
 *                                     NodeUnhealthyError from a chain read)
 *   IntentOutcomeUnknown            → not_ready (503: the reference has no code for "not confirmed yet")
 *   StorageUnavailable              → not_ready (503: the catalogue's code for a part that is down)
 *   FirmQuoteRefused(insufficient_funds)          → insufficient_funds
 *   FirmQuoteRefused(wallet_limit | client_limit) → too_many_firm_quotes
 *   UnsafeTransactionError          → the code of the account the order named that it names, else
 *                                     invalid_user_public_key (the transaction is the user's)
 *
 * and then, per route, a code its reference has no name for as the one that means the same there, the
 * catalogue's code kept as `reason` (ROUTE_RENAMES): a route with no reference name for a status (429,
 * 413, …) keeps the catalogue's.
 */
import type { FastifyError } from "fastify";
import { NodeUnhealthyError } from "../../chain/errors.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";
import { ROUTE_RENAMES } from "../../contract/operation-errors.js";
import { toWireError, validationMessage } from "../../http/errors.js";
import {
  IntentOutcomeUnknown,
  type IntentRefusal,
  IntentRefused,
  OrderRefused,
  StorageUnavailable,
  TradingNotReady,
} from "../errors.js";
import { FirmQuoteRefused } from "../quotes/firm-quotes.js";
import { UnsafeTransactionError } from "../tx/signing-guard.js";
import { INTENT_PARAM_CODES } from "./get-intent.js";
import { ORDER_STATUS_PARAM_CODES } from "./get-order-status.js";
import { QUOTE_PARAM_CODES } from "./get-quote.js";
import { ORDER_PARAM_CODES } from "./order-params.js";
import { SUBMIT_INTENT_FIELD_CODES } from "./submit-intent.js";
import { SWAP_FIELD_CODES } from "./swap-request.js";

type CodeTable = Readonly<Partial<Record<string, ErrorCode>>>;

/** Per trade route, the code of each query parameter or body field when it is missing or malformed. */
const PARAMETER_CODES: Readonly<Partial<Record<string, CodeTable>>> = {
  "/order": ORDER_PARAM_CODES,
  "/intent": INTENT_PARAM_CODES,
  "/order-status": ORDER_STATUS_PARAM_CODES,
  "/submit-intent": SUBMIT_INTENT_FIELD_CODES,
  "/quote": QUOTE_PARAM_CODES,
  "/swap": SWAP_FIELD_CODES,
  "/swap-instructions": SWAP_FIELD_CODES,
  "/prediction-market-init": { payer: "invalid_payer", outcomeMint: "invalid_outcome_mint" },
};

/** Why a submitted intent is refused, in POST /submit-intent's reference codes. */
const SUBMIT_INTENT_CODES: Readonly<Record<IntentRefusal, ErrorCode>> = {
  invalid_open_transaction: "invalid_open_transaction",
  // Not signed by the quote's user: not an open transaction the venue sends.
  invalid_signature: "invalid_open_transaction",
  // The quote differs from the terms sealed into the open instruction's data.
  invalid_quote_response: "invalid_open_instruction_data",
  // Its blockhash has expired: the chain refuses it, as simulating it would show.
  open_transaction_expired: "open_transaction_simulation_failed",
  open_transaction_simulation_failed: "open_transaction_simulation_failed",
};

/**
 * A schema failure on a trade route as the route's code for the parameter at fault (the first
 * issue's); undefined on other routes. The message names every parameter at fault.
 */
export function tradeValidationError(
  route: string | undefined,
  error: Pick<FastifyError, "validation" | "validationContext">,
): ApiError | undefined {
  const codes = route === undefined ? undefined : own(PARAMETER_CODES, route);
  if (!codes) return undefined;
  const path = (error.validation?.[0]?.instancePath ?? "").split("/").filter((part) => part !== "");
  // The most specific path with a code: quoteResponse.inAmount, else quoteResponse, else "" (the body).
  for (let length = path.length; length >= 0; length--) {
    const code = own(codes, path.slice(0, length).join("."));
    if (code) return new ApiError(code, validationMessage(error));
  }
  return undefined;
}

/**
 * The catalogue error a trading refusal answers with, and on a trade route any error its reference
 * names otherwise; undefined for errors it does not know.
 */
export function tradeApiError(
  error: unknown,
  request: { readonly routeOptions: { readonly url?: string | undefined }; readonly query: unknown },
): ApiError | undefined {
  const mapped = domainError(error, request.query);
  const route = request.routeOptions.url;
  const renames = route === undefined ? undefined : own(ROUTE_RENAMES, route);
  if (!renames) return mapped;
  const wire = toWireError(mapped ?? error);
  const code = own(renames, wire.body.code);
  return code ? new ApiError(code, wire.body.msg, wire.body.code as ErrorCode) : mapped;
}

function domainError(error: unknown, query: unknown): ApiError | undefined {
  if (error instanceof OrderRefused) return new ApiError(error.reason, error.message);
  if (error instanceof IntentRefused) return new ApiError(SUBMIT_INTENT_CODES[error.reason], error.message);
  if (error instanceof IntentOutcomeUnknown || error instanceof StorageUnavailable) {
    return new ApiError("not_ready", error.message);
  }
  if (error instanceof TradingNotReady) {
    const code = {
      pools: "amm_map_not_initialized",
      clock: "blockhash_unavailable",
      chain: "not_ready",
      holds: "amm_map_lagging",
      upstream: "not_ready",
    } as const;
    return new ApiError(code[error.missing], error.message);
  }
  if (error instanceof NodeUnhealthyError) return new ApiError("not_ready", error.message);
  if (error instanceof FirmQuoteRefused) {
    return new ApiError(
      error.reason === "insufficient_funds" ? "insufficient_funds" : "too_many_firm_quotes",
      error.message,
    );
  }
  if (error instanceof UnsafeTransactionError)
    return new ApiError(unsafeTransactionCode(error, query), error.message);
  return undefined;
}

/**
 * The signing guard refused the transaction built for an order: the code of the account the order
 * named that its reason names, else the user's, whose transaction it is.
 */
function unsafeTransactionCode(error: UnsafeTransactionError, query: unknown): ErrorCode {
  for (const name of ["feeAccount", "destinationWallet"] as const) {
    const value = queryText(query, name);
    if (value && error.message.includes(value)) return ORDER_PARAM_CODES[name];
  }
  return ORDER_PARAM_CODES.userPublicKey;
}

function queryText(query: unknown, name: string): string | undefined {
  if (typeof query !== "object" || query === null) return undefined;
  const value: unknown = Reflect.get(query, name);
  return typeof value === "string" ? value : undefined;
}

/** `table[key]` when `key` is the table's own (never an inherited `constructor` or the like). */
function own<T>(table: Readonly<Partial<Record<string, T>>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
