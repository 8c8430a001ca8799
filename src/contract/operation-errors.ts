/**
 * Which catalogue codes each operation answers with, for the published API documents (contract §3):
 * the codes any request can meet, those of a JSON body and of a stream's upgrade, and each operation's
 * own, by its operationId. The trade operations list their reference enums' codes (dflow-trade-openapi
 * `*BadRequestCode` and the like) that the catalogue holds, plus the venue's own refusals.
 */
import type { ErrorCode } from "./errors.js";

/** What any request can be answered with, before or around its operation: the listener's and access control's. */
export const REQUEST_ERRORS = [
  "bad_request",
  "api_key_in_query",
  "unauthorized",
  "request_timeout",
  "uri_too_long",
  "headers_too_large",
  "rate_limit_exceeded",
] as const satisfies readonly ErrorCode[];

/** What a WebSocket upgrade can be answered with besides the request's errors. */
export const STREAM_ERRORS = [
  "upgrade_required",
  "stream_not_permitted",
] as const satisfies readonly ErrorCode[];

/** What answers a path no operation has, or a method the path does not take: no operation's, the router's. */
export const ROUTING_ERRORS = ["not_found", "method_not_allowed"] as const satisfies readonly ErrorCode[];

/** A JSON request body's refusals (a route may rename `invalid_json` to its reference's code). */
const BODY = ["invalid_json", "payload_too_large", "unsupported_media_type"] as const;
/** What a trade route's JSON body is refused with besides its reference's codes: its size (the reference declares no 413). */
const BODY_LIMIT = ["payload_too_large"] as const;
/** The catalogue's data is loaded at start and refreshed; until the first load a read is `not_ready`. */
const CATALOGUE = ["not_ready", "internal"] as const;
/** A relayed call to the upstream exchange. */
const UPSTREAM = ["upstream_rejected", "upstream_unavailable", "upstream_timeout"] as const;
/** The trade routes that quote wait for the pools and the chain's clock (reference: *ServiceUnavailableCode). */
const QUOTING = ["amm_map_not_initialized", "amm_map_lagging"] as const;
/**
 * The venue's own 503 for a trade route whose reference declares none, while its chain's state is not
 * current (an embedded sandbox whose lease another instance took): nothing is signed from it.
 */
const CHAIN_NOT_CURRENT = ["not_ready"] as const;

/** The reference's `/order` 400 codes that the catalogue holds, and the venue's own. */
const ORDER_REFUSALS = [
  "invalid_user_public_key",
  "invalid_sponsor",
  "invalid_revert_wallet",
  "invalid_prediction_market_init_payer",
  "requested_input_amount_is_zero",
  "invalid_input_mint",
  "invalid_output_mint",
  "same_input_and_output_mint",
  "invalid_slippage_bps",
  "prediction_slippage_bps_below_routing_slippage",
  "invalid_platform_fee_bps",
  "invalid_platform_fee_scale",
  "invalid_fee_account",
  "platform_fee_account_not_specified",
  "platform_fee_account_not_specified_for_platform_fee_scale",
  "invalid_positive_slippage_fee_account",
  "cannot_disable_sync_and_async_execution",
  "invalid_dex",
  "route_not_found",
  "zero_out_amount",
  "price_impact_too_high",
  "both_priority_fee_params_specified",
  "both_destination_params_specified",
  "both_sponsor_and_prediction_market_init_payer_specified",
  "invalid_destination_token_account",
  "invalid_destination_wallet",
  "destination_token_account_not_supported",
  "invalid_output_close_authority",
  "output_close_authority_with_native_sol_output",
  "output_close_authority_with_destination_token_account",
  "invalid_input_mint_for_restrict_revert_mint",
  "invalid_jito_sandwich_mitigation_account",
  "invalid_outcome_account_rent_recipient",
  "unverified_wallet_not_allowed",
  "invalid_price_impact_tolerance_pct",
  "skip_pumpfun_cashback_claim_with_sponsor_executor",
  "allow_bonding_curve_underconsumption_with_sponsor_executor",
  "both_max_accounts_and_reserve_accounts_specified",
  "both_max_transaction_size_and_reserve_transaction_size_specified",
  "max_accounts_too_small",
  "max_transaction_size_too_small",
  "reserve_accounts_too_large",
  "reserve_transaction_size_too_large",
] as const;

/** The reference's `/swap` and `/swap-instructions` 400 codes. */
const SWAP_REFUSALS = [
  "invalid_out_amount",
  "invalid_user_public_key",
  "invalid_sponsor",
  "sponsored_swap_cannot_create_fee_account",
  "invalid_platform_fee_amount",
  "invalid_fee_account",
  "invalid_positive_slippage_fee_account",
  "invalid_referral_account",
  "invalid_destination_token_account",
  "invalid_destination_token_account_for_native_sol",
  "invalid_output_close_authority",
  "output_close_authority_with_native_sol_output",
  "output_close_authority_with_destination_token_account",
  "both_priority_fee_params_specified",
  "route_is_empty",
  "route_too_long",
  "invalid_route_plan_leg",
  "invalid_jito_sandwich_mitigation_account",
  "skip_pumpfun_cashback_claim_with_sponsor_executor",
] as const;

const SWAP = [
  ...SWAP_REFUSALS,
  ...BODY_LIMIT,
  "amm_map_not_initialized",
  "amm_map_lagging",
  "blockhash_unavailable",
  ...CHAIN_NOT_CURRENT,
  "failed_to_compute_swap",
] as const;

/**
 * Each operation's own codes, by operationId, beyond `REQUEST_ERRORS` (and `STREAM_ERRORS` on a
 * stream). An operation missing here is documented with the catalogue's generic code for each error
 * status its route declares (`GENERIC_ERRORS`): add it here to say exactly what it answers.
 */
export const OPERATION_ERRORS: Readonly<Partial<Record<string, readonly ErrorCode[]>>> = {
  // Every listener's.
  handler_health_check: ["mint_info_not_initialized", "amm_map_lagging", "internal"],
  metrics: ["internal"],
  devFaucet: [...BODY, "not_ready", "internal"],
  // A Host or Origin naming another site on a loopback venue is a bad_request, as a body the transport refuses.
  mcp: ["bad_request", ...BODY, "internal"],
  // The prediction-market data API (contract §5).
  event: [...CATALOGUE, "event_not_found"],
  events: CATALOGUE,
  market: [...CATALOGUE, "market_not_found"],
  market_by_mint: [...CATALOGUE, "market_not_found"],
  markets: CATALOGUE,
  markets_batch: [...CATALOGUE, ...BODY],
  outcome_mints: CATALOGUE,
  filter_outcome_mints: [...CATALOGUE, ...BODY],
  series: CATALOGUE,
  series_by_ticker: [...CATALOGUE, "series_not_found"],
  tags_by_categories: CATALOGUE,
  filters_by_sports: CATALOGUE,
  search: CATALOGUE,
  forecast_percentile_history: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  forecast_percentile_history_by_mint: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  orderbook: [...CATALOGUE, ...UPSTREAM, "market_not_found", "orderbook_not_found"],
  orderbook_by_mint: [...CATALOGUE, ...UPSTREAM, "market_not_found", "orderbook_not_found"],
  trades: [...CATALOGUE, ...UPSTREAM, "market_not_found"],
  trades_by_mint: [...CATALOGUE, ...UPSTREAM, "market_not_found"],
  market_candlesticks: [...CATALOGUE, ...UPSTREAM, "market_not_found"],
  market_candlesticks_by_mint: [...CATALOGUE, ...UPSTREAM, "market_not_found"],
  event_candlesticks: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  live_data: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  live_data_by_event: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  live_data_by_mint: [...CATALOGUE, ...UPSTREAM, "event_not_found"],
  onchain_trades: CATALOGUE,
  onchain_trades_by_market: [...CATALOGUE, "market_not_found"],
  onchain_trades_by_event: [...CATALOGUE, "event_not_found"],
  // The trade API (contract §6), in the reference's codes where it has them.
  tokens_with_decimals_handler: ["mint_info_not_initialized", "internal"],
  tokens_handler: ["mint_info_not_initialized", "internal"],
  venues_handler: ["internal"],
  order_handler: [...ORDER_REFUSALS, ...QUOTING, "failed_to_construct_order"],
  quote_handler: [
    "requested_input_amount_is_zero",
    "invalid_input_mint",
    "invalid_output_mint",
    "same_input_and_output_mint",
    "invalid_slippage_bps",
    "invalid_platform_fee_bps",
    "invalid_dex",
    "route_not_found",
    "use_order_endpoint_for_prediction_markets",
    "price_impact_too_high",
    "invalid_price_impact_tolerance_pct",
    ...QUOTING,
    "failed_to_compute_route",
  ],
  swap_handler: SWAP,
  swap_instructions_handler: SWAP,
  intent_handler: [
    "requested_input_amount_is_zero",
    "invalid_input_mint",
    "invalid_output_mint",
    "invalid_slippage_bps",
    "invalid_platform_fee_bps",
    "invalid_user_public_key",
    "same_input_and_output_mint",
    "invalid_fee_account",
    "invalid_referral_account",
    "requested_fee_budget_too_low",
    "invalid_max_auto_fee_budget",
    "route_not_found",
    "price_impact_too_high",
    "invalid_price_impact_tolerance_pct",
    ...QUOTING,
    "failed_to_compute_route",
    "failed_to_construct_intent",
  ],
  submit_intent_handler: [
    "invalid_input_mint",
    "invalid_output_mint",
    "same_input_and_output_mint",
    "invalid_in_amount",
    "invalid_out_amount",
    "invalid_fee_account",
    "invalid_open_transaction",
    "invalid_open_instruction_data",
    "open_transaction_simulation_failed",
    ...BODY_LIMIT,
    "blockhash_unavailable",
    "not_ready",
    "internal",
  ],
  order_status_handler: ["invalid_signature", "not_found", "internal_server_error"],
  prediction_market_init_handler: [
    "invalid_payer",
    "invalid_outcome_mint",
    "prediction_market_already_initialized",
    "unknown_outcome_mint",
    "not_ready",
    "internal",
  ],
  priority_fees_handler: ["not_ready", "internal"],
  verify_wallet: ["internal"],
};

/**
 * A firm quote the venue will not back for its wallet (its funds are promised to live quotes, or the
 * client holds as many live quotes as it may): the reference has no code for it, and a 429 reads as
 * the caller's rate limit; the nearest is the code of the wallet that cannot be quoted (`reason` says which).
 */
const FIRM_QUOTE_CODES = {
  insufficient_funds: "invalid_user_public_key",
  too_many_firm_quotes: "invalid_user_public_key",
} as const satisfies Partial<Record<ErrorCode, ErrorCode>>;

/**
 * `/order` codes a swap's reference has no name for: what the quote's route plan holds (its mints,
 * venues and amounts) is the leg's; where the output goes is the destination's.
 */
const SWAP_CODES: Partial<Record<ErrorCode, ErrorCode>> = {
  // A body that is not a JSON object carries no quote, so no route.
  invalid_json: "route_is_empty",
  bad_request: "route_is_empty",
  unsupported_media_type: "route_is_empty",
  invalid_input_mint: "invalid_route_plan_leg",
  invalid_output_mint: "invalid_route_plan_leg",
  same_input_and_output_mint: "invalid_route_plan_leg",
  requested_input_amount_is_zero: "invalid_route_plan_leg",
  invalid_slippage_bps: "invalid_route_plan_leg",
  invalid_dex: "invalid_route_plan_leg",
  route_not_found: "invalid_route_plan_leg",
  use_order_endpoint_for_prediction_markets: "invalid_route_plan_leg",
  zero_out_amount: "invalid_out_amount",
  invalid_platform_fee_bps: "invalid_platform_fee_amount",
  platform_fee_account_not_specified: "invalid_fee_account",
  invalid_destination_wallet: "invalid_destination_token_account",
  ...FIRM_QUOTE_CODES,
  internal: "failed_to_compute_swap",
};

/**
 * The routes that quote answer 503 in their reference's two codes: the venue's own `not_ready` (its
 * chain's state is not current) and `blockhash_unavailable` are the venue lagging the chain.
 */
const LAGGING = {
  not_ready: "amm_map_lagging",
  blockhash_unavailable: "amm_map_lagging",
} as const satisfies Partial<Record<ErrorCode, ErrorCode>>;

/**
 * Per trade route, catalogue codes its reference has no name for, as the reference code meaning the
 * same (the catalogue's code goes along as `reason`). A status the route's reference does not declare
 * at all (429, 413, a 503 of `/submit-intent`) keeps the catalogue's code.
 */
export const ROUTE_RENAMES: Readonly<Partial<Record<string, Partial<Record<ErrorCode, ErrorCode>>>>> = {
  "/order": { ...LAGGING, ...FIRM_QUOTE_CODES, internal: "failed_to_construct_order" },
  "/intent": {
    // An intent's reference has no zero_out_amount: a route that pays nothing is no route.
    zero_out_amount: "route_not_found",
    // Its reference names the fee account's own code for a fee without one.
    platform_fee_account_not_specified: "invalid_fee_account",
    ...LAGGING,
    internal: "failed_to_construct_intent",
  },
  // A body that is not a JSON object carries no open transaction.
  "/submit-intent": {
    invalid_json: "invalid_open_transaction",
    bad_request: "invalid_open_transaction",
    unsupported_media_type: "invalid_open_transaction",
  },
  "/order-status": { internal: "internal_server_error" },
  "/quote": {
    // A quote's reference has no zero_out_amount: a route that pays nothing is no route.
    zero_out_amount: "route_not_found",
    invalid_jito_sandwich_mitigation_account: "invalid_dex",
    ...LAGGING,
    internal: "failed_to_compute_route",
  },
  "/swap": SWAP_CODES,
  "/swap-instructions": SWAP_CODES,
  // The payer whose initialization cannot be held for it.
  "/prediction-market-init": { insufficient_funds: "invalid_payer", too_many_firm_quotes: "invalid_payer" },
};

/** The code an error status is documented with for an operation `OPERATION_ERRORS` does not list. */
export const GENERIC_ERRORS: Readonly<Partial<Record<number, ErrorCode>>> = {
  400: "bad_request",
  404: "not_found",
  500: "internal",
  502: "upstream_unavailable",
  503: "not_ready",
  504: "upstream_timeout",
};
