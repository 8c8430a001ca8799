/**
 * The error catalogue (contract §3): every code the service answers with, its HTTP status and
 * whether retrying the same request can help; the one error class routes throw; the `{code, msg}`
 * body every error response has. The server, the client and the published documents read it.
 */
import { z } from "zod";

interface ErrorSpec {
  readonly status: number;
  readonly retryable: boolean;
}

export const ERRORS = {
  bad_request: { status: 400, retryable: false },
  invalid_json: { status: 400, retryable: false },
  api_key_in_query: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  stream_not_permitted: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  event_not_found: { status: 404, retryable: false },
  market_not_found: { status: 404, retryable: false },
  series_not_found: { status: 404, retryable: false },
  orderbook_not_found: { status: 404, retryable: false },
  upstream_rejected: { status: 400, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  // The client took longer than the listener allows to send its request (HTTP_LIMITS).
  request_timeout: { status: 408, retryable: true },
  payload_too_large: { status: 413, retryable: false },
  uri_too_long: { status: 414, retryable: false },
  unsupported_media_type: { status: 415, retryable: false },
  // A WebSocket endpoint asked for with plain HTTP.
  upgrade_required: { status: 426, retryable: false },
  headers_too_large: { status: 431, retryable: false },
  // Trade API codes, named as the reference service names them (contract §3).
  invalid_input_mint: { status: 400, retryable: false },
  invalid_output_mint: { status: 400, retryable: false },
  same_input_and_output_mint: { status: 400, retryable: false },
  requested_input_amount_is_zero: { status: 400, retryable: false },
  invalid_slippage_bps: { status: 400, retryable: false },
  prediction_slippage_bps_below_routing_slippage: { status: 400, retryable: false },
  invalid_price_impact_tolerance_pct: { status: 400, retryable: false },
  price_impact_too_high: { status: 400, retryable: true },
  invalid_platform_fee_bps: { status: 400, retryable: false },
  platform_fee_account_not_specified: { status: 400, retryable: false },
  platform_fee_account_not_specified_for_platform_fee_scale: { status: 400, retryable: false },
  invalid_fee_account: { status: 400, retryable: false },
  invalid_dex: { status: 400, retryable: false },
  cannot_disable_sync_and_async_execution: { status: 400, retryable: false },
  both_priority_fee_params_specified: { status: 400, retryable: false },
  invalid_platform_fee_scale: { status: 400, retryable: false },
  invalid_positive_slippage_fee_account: { status: 400, retryable: false },
  invalid_sponsor: { status: 400, retryable: false },
  invalid_prediction_market_init_payer: { status: 400, retryable: false },
  both_sponsor_and_prediction_market_init_payer_specified: { status: 400, retryable: false },
  skip_pumpfun_cashback_claim_with_sponsor_executor: { status: 400, retryable: false },
  allow_bonding_curve_underconsumption_with_sponsor_executor: { status: 400, retryable: false },
  both_destination_params_specified: { status: 400, retryable: false },
  invalid_destination_token_account: { status: 400, retryable: false },
  destination_token_account_not_supported: { status: 400, retryable: false },
  invalid_destination_wallet: { status: 400, retryable: false },
  invalid_output_close_authority: { status: 400, retryable: false },
  output_close_authority_with_native_sol_output: { status: 400, retryable: false },
  output_close_authority_with_destination_token_account: { status: 400, retryable: false },
  invalid_input_mint_for_restrict_revert_mint: { status: 400, retryable: false },
  invalid_revert_wallet: { status: 400, retryable: false },
  invalid_outcome_account_rent_recipient: { status: 400, retryable: false },
  invalid_jito_sandwich_mitigation_account: { status: 400, retryable: false },
  both_max_accounts_and_reserve_accounts_specified: { status: 400, retryable: false },
  max_accounts_too_small: { status: 400, retryable: false },
  reserve_accounts_too_large: { status: 400, retryable: false },
  both_max_transaction_size_and_reserve_transaction_size_specified: { status: 400, retryable: false },
  max_transaction_size_too_small: { status: 400, retryable: false },
  reserve_transaction_size_too_large: { status: 400, retryable: false },
  invalid_user_public_key: { status: 400, retryable: false },
  route_not_found: { status: 400, retryable: true },
  zero_out_amount: { status: 400, retryable: true },
  requested_fee_budget_too_low: { status: 400, retryable: false },
  invalid_max_auto_fee_budget: { status: 400, retryable: false },
  invalid_referral_account: { status: 400, retryable: false },
  // A prediction-market buy to a wallet that is not verified (the reference's Proof check).
  unverified_wallet_not_allowed: { status: 400, retryable: false },
  // GET /quote, POST /swap and /swap-instructions.
  use_order_endpoint_for_prediction_markets: { status: 400, retryable: false },
  sponsored_swap_cannot_create_fee_account: { status: 400, retryable: false },
  invalid_platform_fee_amount: { status: 400, retryable: false },
  invalid_destination_token_account_for_native_sol: { status: 400, retryable: false },
  route_is_empty: { status: 400, retryable: false },
  route_too_long: { status: 400, retryable: false },
  invalid_route_plan_leg: { status: 400, retryable: false },
  // POST /submit-intent.
  invalid_open_transaction: { status: 400, retryable: false },
  invalid_open_instruction_data: { status: 400, retryable: false },
  invalid_in_amount: { status: 400, retryable: false },
  invalid_out_amount: { status: 400, retryable: false },
  open_transaction_simulation_failed: { status: 400, retryable: false },
  // GET /order-status.
  invalid_signature: { status: 400, retryable: false },
  // GET /prediction-market-init.
  invalid_payer: { status: 400, retryable: false },
  invalid_outcome_mint: { status: 400, retryable: false },
  unknown_outcome_mint: { status: 400, retryable: false },
  prediction_market_already_initialized: { status: 400, retryable: false },
  // The venue's own, for firm quotes it will not back (no reference code covers them).
  insufficient_funds: { status: 400, retryable: true },
  too_many_firm_quotes: { status: 429, retryable: true },
  rate_limit_exceeded: { status: 429, retryable: true },
  internal: { status: 500, retryable: true },
  // What an unexpected failure is called on the trade routes whose reference names their 500s.
  failed_to_construct_order: { status: 500, retryable: true },
  failed_to_construct_intent: { status: 500, retryable: true },
  failed_to_compute_route: { status: 500, retryable: true },
  failed_to_compute_swap: { status: 500, retryable: true },
  internal_server_error: { status: 500, retryable: true },
  upstream_unavailable: { status: 502, retryable: true },
  not_ready: { status: 503, retryable: true },
  mint_info_not_initialized: { status: 503, retryable: true },
  amm_map_not_initialized: { status: 503, retryable: true },
  amm_map_lagging: { status: 503, retryable: true },
  blockhash_unavailable: { status: 503, retryable: true },
  upstream_timeout: { status: 504, retryable: true },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The service's one error class: a catalogue code plus a message naming what was wrong, and where a
 * route answers in its reference's broader code, the venue's own exact one as `reason`.
 */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly reason?: ErrorCode,
  ) {
    super(message);
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  get retryable(): boolean {
    return ERRORS[this.code].retryable;
  }
}

/** The body of every error response. */
export const ErrorBody = z
  .object({
    code: z.string().describe("a code from the error catalogue"),
    msg: z.string().describe("what was wrong, for a person"),
    reason: z
      .string()
      .optional()
      .describe(
        "the venue's own code, more exact than `code`, where the route answers in its reference's code (a trade route the reference has no such code for)",
      ),
  })
  .meta({ id: "ErrorResponse" });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Whether `code` is a code of the catalogue. */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}
