/**
 * The error catalogue (contract §3): every code the service answers with, its HTTP status and
 * whether retrying the same request can help. `toWireError` is the one place that turns any thrown
 * value into the `{code, msg}` body.
 */
import { HTTP_LIMITS } from "../limits.js";

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
  invalid_fee_account: { status: 400, retryable: false },
  invalid_dex: { status: 400, retryable: false },
  invalid_user_public_key: { status: 400, retryable: false },
  route_not_found: { status: 400, retryable: true },
  zero_out_amount: { status: 400, retryable: true },
  requested_fee_budget_too_low: { status: 400, retryable: false },
  invalid_open_transaction: { status: 400, retryable: false },
  invalid_quote_response: { status: 400, retryable: false },
  invalid_signature: { status: 400, retryable: false },
  open_transaction_expired: { status: 400, retryable: false },
  open_transaction_simulation_failed: { status: 400, retryable: false },
  // The venue's own, for firm quotes it will not back (no reference code covers them).
  insufficient_funds: { status: 400, retryable: true },
  too_many_firm_quotes: { status: 429, retryable: true },
  rate_limit_exceeded: { status: 429, retryable: true },
  internal: { status: 500, retryable: true },
  upstream_unavailable: { status: 502, retryable: true },
  not_ready: { status: 503, retryable: true },
  mint_info_not_initialized: { status: 503, retryable: true },
  amm_map_not_initialized: { status: 503, retryable: true },
  blockhash_unavailable: { status: 503, retryable: true },
  upstream_timeout: { status: 504, retryable: true },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** The service's one error class: a catalogue code plus a message naming what was wrong. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: ErrorCode,
    message: string,
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

export interface WireError {
  status: number;
  body: { code: string; msg: string };
}

/** Fastify's own error codes, mapped onto the catalogue. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "bad_request",
  FST_ERR_CTP_BODY_TOO_LARGE: "payload_too_large",
  FST_ERR_CTP_EMPTY_JSON_BODY: "invalid_json",
  FST_ERR_CTP_INVALID_JSON_BODY: "invalid_json",
  FST_ERR_CTP_EMPTY_TYPE: "unsupported_media_type",
  FST_ERR_CTP_INVALID_TYPE: "unsupported_media_type",
  FST_ERR_BAD_URL: "bad_request",
  FST_ERR_MAX_PARAM_LENGTH: "uri_too_long",
};

/**
 * Node's HTTP server's own client errors (its `clientError` event), which it raises before any route
 * runs: the parser's (`HPE_*`) and the listener's time limits.
 */
function nodeClientError(code: string): WireError | undefined {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return wire(
        "request_timeout",
        `the request did not arrive in time: its head must come within ${HTTP_LIMITS.headersTimeoutMs / 1000} s and all of it within ${HTTP_LIMITS.requestTimeoutMs / 1000} s`,
      );
    case "HPE_HEADER_OVERFLOW":
      return wire(
        "headers_too_large",
        `the request line and headers exceed the ${HTTP_LIMITS.maxHeaderBytes / 1024} KiB limit`,
      );
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return wire("payload_too_large", "chunk extensions too large");
    default:
      return code.startsWith("HPE_")
        ? wire("bad_request", `malformed HTTP/1.1 request (${code})`)
        : undefined;
  }
}

/** Turns any thrown value into a status and `{code, msg}` body; never leaks a stack trace. */
export function toWireError(error: unknown): WireError {
  if (error instanceof ApiError) {
    return { status: error.status, body: { code: error.code, msg: error.message } };
  }
  const candidate = error as { code?: unknown; statusCode?: unknown; message?: unknown; name?: unknown };
  const fastifyCode = typeof candidate?.code === "string" ? FASTIFY_CODES[candidate.code] : undefined;
  if (fastifyCode) return wire(fastifyCode, describeFastifyError(fastifyCode, candidate));
  const nodeError = typeof candidate?.code === "string" ? nodeClientError(candidate.code) : undefined;
  if (nodeError) return nodeError;
  // Fastify's JSON parser throws a plain SyntaxError with statusCode 400 for malformed bodies.
  if (candidate?.name === "SyntaxError" && candidate.statusCode === 400) {
    return wire("invalid_json", `request body is not valid JSON: ${String(candidate.message)}`);
  }
  if (
    typeof candidate?.statusCode === "number" &&
    candidate.statusCode >= 400 &&
    candidate.statusCode < 500
  ) {
    // Other client errors Fastify raises itself (e.g. prototype poisoning): keep the status, hide internals.
    if (candidate.statusCode === 413)
      return wire("payload_too_large", describeFastifyError("payload_too_large", candidate));
    return {
      status: candidate.statusCode,
      body: { code: "bad_request", msg: String(candidate.message ?? "bad request") },
    };
  }
  return wire("internal", "internal error; the request id identifies it in the server log");
}

function wire(code: ErrorCode, msg: string): WireError {
  return { status: ERRORS[code].status, body: { code, msg } };
}

function describeFastifyError(code: ErrorCode, error: { message?: unknown }): string {
  switch (code) {
    case "unsupported_media_type":
      return "content-type must be application/json";
    case "payload_too_large":
      return `request body exceeds the ${HTTP_LIMITS.apiBodyBytes / 1024} KiB limit`;
    case "invalid_json":
      return `request body is not valid JSON: ${String(error.message ?? "")}`;
    default:
      return String(error.message ?? "bad request");
  }
}
