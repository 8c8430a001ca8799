/**
 * What an agent should do about each code of the error catalogue, and venue errors turned into MCP
 * tool errors: `{code, msg, hint}` as the result's text, with `isError` set, so a model reads what
 * went wrong and what to try next instead of a protocol failure.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { OddsgateApiError } from "../client/http.js";
import { type ErrorCode, isErrorCode } from "../contract/errors.js";

const FIX_INPUT = "fix the argument the message names and call the tool again";
const RETRY_SOON = "transient: wait a few seconds and call the tool again";
const TRADE_INPUT =
  "fix the order's parameter the message names (see the trade API's error codes) and quote again";
const NOT_HERE = "the venue's trade API offers no such option here: call the tool without it";

/** One hint per catalogue code (a test checks every code has one). */
export const ERROR_HINTS: Record<ErrorCode, string> = {
  bad_request: FIX_INPUT,
  invalid_json: FIX_INPUT,
  api_key_in_query:
    "send the API key only as the x-api-key header (never in a URL) and rotate the key that leaked",
  unauthorized:
    "this venue needs a valid API key: configure the MCP client with an x-api-key header (or ODDSGATE_API_KEY for `oddsgate mcp`)",
  stream_not_permitted:
    "the API key's tier does not include streams: use the polling tools (get_orderbook, get_trades)",
  not_found: "nothing at that name: list what exists with search_markets",
  event_not_found: "no such event: find its ticker with search_markets",
  market_not_found: "no such market: find its ticker with search_markets or get_event",
  series_not_found: "no such series: find the event with search_markets and use its seriesTicker",
  orderbook_not_found:
    "the market has no order book (not active, or unknown upstream): check its status with get_market",
  upstream_rejected:
    "the upstream exchange refused the parameters (a time range too wide or in the future, say): narrow them",
  method_not_allowed: "the tool called the venue wrongly: report it; meanwhile use another tool",
  request_timeout: RETRY_SOON,
  payload_too_large: "ask for less: a smaller limit or a narrower time range",
  uri_too_long: "ask for less: fewer tickers or mints per call",
  unsupported_media_type: "the tool called the venue wrongly: report it",
  upgrade_required: "a stream needs a WebSocket: use the polling tools instead",
  headers_too_large: "the MCP client sends too many or too large headers: trim them",
  invalid_input_mint: TRADE_INPUT,
  invalid_output_mint: TRADE_INPUT,
  same_input_and_output_mint: "buy with USDC or sell for USDC: the two sides must differ",
  requested_input_amount_is_zero: "give an amount above zero",
  invalid_slippage_bps: "give slippageBps as whole basis points from 0 to 10000, or leave it out",
  prediction_slippage_bps_below_routing_slippage: "raise slippageBps or leave it out",
  invalid_price_impact_tolerance_pct: TRADE_INPUT,
  price_impact_too_high:
    "the book is too thin for this size: trade a smaller amount, or wait for liquidity (quote again)",
  invalid_platform_fee_bps: NOT_HERE,
  platform_fee_account_not_specified: NOT_HERE,
  platform_fee_account_not_specified_for_platform_fee_scale: NOT_HERE,
  invalid_fee_account: NOT_HERE,
  invalid_dex: NOT_HERE,
  cannot_disable_sync_and_async_execution: NOT_HERE,
  both_priority_fee_params_specified: NOT_HERE,
  invalid_platform_fee_scale: NOT_HERE,
  invalid_positive_slippage_fee_account: NOT_HERE,
  invalid_sponsor: NOT_HERE,
  invalid_prediction_market_init_payer: NOT_HERE,
  both_sponsor_and_prediction_market_init_payer_specified: NOT_HERE,
  skip_pumpfun_cashback_claim_with_sponsor_executor: NOT_HERE,
  allow_bonding_curve_underconsumption_with_sponsor_executor: NOT_HERE,
  both_destination_params_specified: NOT_HERE,
  invalid_destination_token_account: NOT_HERE,
  destination_token_account_not_supported: NOT_HERE,
  invalid_destination_wallet: NOT_HERE,
  invalid_output_close_authority: NOT_HERE,
  output_close_authority_with_native_sol_output: NOT_HERE,
  output_close_authority_with_destination_token_account: NOT_HERE,
  invalid_input_mint_for_restrict_revert_mint: NOT_HERE,
  invalid_revert_wallet: NOT_HERE,
  invalid_outcome_account_rent_recipient: NOT_HERE,
  invalid_jito_sandwich_mitigation_account: NOT_HERE,
  both_max_accounts_and_reserve_accounts_specified: NOT_HERE,
  max_accounts_too_small: NOT_HERE,
  reserve_accounts_too_large: NOT_HERE,
  both_max_transaction_size_and_reserve_transaction_size_specified: NOT_HERE,
  max_transaction_size_too_small: NOT_HERE,
  reserve_transaction_size_too_large: NOT_HERE,
  invalid_user_public_key:
    "give the wallet as a base58 Solana address (or, in development, a sandbox wallet's name)",
  route_not_found:
    "the market does not trade this way now (not active, no liquidity, or settled: use redeem); check it with get_market",
  zero_out_amount: "the amount buys nothing at this price: trade a larger amount",
  requested_fee_budget_too_low: TRADE_INPUT,
  invalid_max_auto_fee_budget: TRADE_INPUT,
  invalid_referral_account: NOT_HERE,
  unverified_wallet_not_allowed:
    "this venue only lets verified wallets buy: ask its operator to verify the wallet (oddsgate wallets verify)",
  use_order_endpoint_for_prediction_markets: "trade prediction markets with place_order",
  sponsored_swap_cannot_create_fee_account: NOT_HERE,
  invalid_platform_fee_amount: NOT_HERE,
  invalid_destination_token_account_for_native_sol: NOT_HERE,
  route_is_empty: TRADE_INPUT,
  route_too_long: TRADE_INPUT,
  invalid_route_plan_leg: TRADE_INPUT,
  invalid_open_transaction:
    "sign the transaction place_order returned, unchanged, and send it before it expires",
  invalid_open_instruction_data: "sign the transaction place_order returned, unchanged",
  invalid_in_amount: TRADE_INPUT,
  invalid_out_amount: TRADE_INPUT,
  open_transaction_simulation_failed:
    "the transaction would fail (funds moved since the quote?): check get_positions and place the order again",
  invalid_signature: "give the signature place_order or redeem returned (base58)",
  invalid_payer: "the wallet that signs must be the one the order was quoted for",
  invalid_outcome_mint: "use a market's ticker and side rather than a mint; check it with get_market",
  unknown_outcome_mint: "use a market's ticker and side rather than a mint; check it with get_market",
  prediction_market_already_initialized: "nothing to do: the market is already initialized; place the order",
  insufficient_funds:
    "the wallet lacks the funds (USDC, or SOL for fees): check get_positions; in development fund it with sandbox_fund_wallet",
  too_many_firm_quotes:
    "too many open quotes for this wallet: let earlier ones expire (a few seconds) and try again",
  rate_limit_exceeded:
    "the API key's rate limit is spent: wait retryAfterSeconds (or a minute) before the next call, and call less often",
  internal: RETRY_SOON,
  failed_to_construct_order: RETRY_SOON,
  failed_to_construct_intent: RETRY_SOON,
  failed_to_compute_route: RETRY_SOON,
  failed_to_compute_swap: RETRY_SOON,
  internal_server_error: RETRY_SOON,
  upstream_unavailable:
    "the upstream exchange is unavailable: wait and retry; catalogue tools (search_markets, get_market) still answer",
  not_ready: "the venue is starting: retry in a few seconds",
  mint_info_not_initialized: "the venue is starting: retry in a few seconds",
  amm_map_not_initialized: "the venue is starting: retry in a few seconds",
  amm_map_lagging: RETRY_SOON,
  blockhash_unavailable: RETRY_SOON,
  upstream_timeout: "the upstream exchange was slow: retry, or ask for a narrower range",
};

/** An error as the MCP client sees it: the venue's code and message, and what to do about it. */
export interface ToolFailure {
  code: string;
  msg: string;
  hint: string;
  retryAfterSeconds?: number;
}

/** Tool-level refusals of the MCP surface itself (not the venue's), with their hints. */
export class ToolRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** The failure an agent is told of, for any error a tool can meet. */
export function toolFailure(error: unknown): ToolFailure {
  if (error instanceof OddsgateApiError) {
    const hint = isErrorCode(error.code)
      ? ERROR_HINTS[error.code]
      : "the venue answered unexpectedly: retry once, then report it";
    return {
      code: error.code,
      msg: error.msg,
      hint,
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    };
  }
  if (error instanceof ToolRefusal) return { code: error.code, msg: error.message, hint: error.hint };
  const msg = error instanceof Error ? error.message : String(error);
  return { code: "internal", msg, hint: ERROR_HINTS.internal };
}

/** The MCP tool error for `error`: `isError`, and `{code,msg,hint}` as JSON text. */
export function toolError(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(toolFailure(error)) }] };
}
