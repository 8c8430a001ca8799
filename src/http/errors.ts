/**
 * The one place that turns any thrown value into a status and `{code, msg}` body: the catalogue's
 * ApiError as it is, Fastify's and Node's own client errors mapped onto the catalogue, anything else
 * an `internal` error that leaks nothing.
 */
import type { FastifyError } from "fastify";
import { ApiError, ERRORS, type ErrorBody, type ErrorCode } from "../contract/errors.js";
import { HTTP_LIMITS } from "../limits.js";

export interface WireError {
  status: number;
  body: ErrorBody;
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
    const { code, message: msg, reason } = error;
    return { status: error.status, body: reason ? { code, msg, reason } : { code, msg } };
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

/** What a schema failure's `validation` holds per issue (fastify-type-provider-zod's shape). */
interface ValidationIssue {
  keyword?: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** A zod schema as far as a message needs it. */
interface Describable {
  safeParse(value: unknown): { success: boolean; error?: { issues: { message: string }[] } };
  description?: string;
  meta?: () => { description?: string } | undefined;
  shape?: Record<string, unknown>;
}

function describable(value: unknown): value is Describable {
  return (
    typeof value === "object" && value !== null && typeof (value as Describable).safeParse === "function"
  );
}

/**
 * What a parameter expects, in words: its documented description, else its own rule as its schema
 * words it for an empty value (the routes' parameters name themselves: "limit must be an integer from
 * 1 to 1000"), else its type.
 */
function expectation(name: string, field: unknown): string | undefined {
  if (!describable(field)) return undefined;
  const description = field.meta?.()?.description ?? field.description;
  if (description) return description;
  const probe = field.safeParse("");
  const rule = probe.success ? undefined : probe.error?.issues[0]?.message;
  return rule?.startsWith(name) ? rule : undefined;
}

/**
 * A schema failure's issues as one message naming each parameter and its rule; a missing parameter
 * is said in words ("query parameter startTs is required: startTs must be ..."), not as the
 * validator's "expected string, received undefined". `schema` (the route's schema for the failing
 * part, e.g. its querystring) lets the message say what the parameter expects.
 */
export function validationMessage(
  error: Pick<FastifyError, "validation" | "validationContext">,
  schema?: unknown,
): string {
  const where =
    error.validationContext === "querystring" ? "query parameter" : (error.validationContext ?? "input");
  const fields = describable(schema) ? schema.shape : undefined;
  const details = ((error.validation ?? []) as ValidationIssue[]).map((issue) => {
    const name = issue.instancePath.replace(/^\//, "").replaceAll("/", ".");
    const missing = issue.keyword === "invalid_type" && /received undefined$/.test(issue.message ?? "");
    if (name && missing) {
      const expected = expectation(name, fields?.[name]);
      return `${where} ${name} is required${expected ? `: ${expected}` : ""}`;
    }
    const values = issue.params?.values;
    if (
      name &&
      issue.keyword === "invalid_value" &&
      Array.isArray(values) &&
      /^Invalid/.test(issue.message ?? "")
    ) {
      return `${where} ${name} must be one of ${values.join(", ")}`;
    }
    return name ? `${where} ${name}: ${issue.message}` : `${where}: ${issue.message}`;
  });
  return details.join("; ") || "invalid request";
}
