/** The one place the markets and upstream domain errors become catalogue errors (contract §3). */
import { InvalidArchiveQueryError } from "../../archive/errors.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";
import {
  UpstreamError,
  type UpstreamFailure,
  UpstreamNotFoundError,
  type UpstreamSubject,
} from "../../upstream/errors.js";
import { CatalogNotReadyError } from "../catalog-holder.js";

const UPSTREAM_FAILURES = {
  timeout: "upstream_timeout",
  unavailable: "upstream_unavailable",
  rejected: "upstream_rejected",
} as const satisfies Record<UpstreamFailure, ErrorCode>;

const UPSTREAM_NOT_FOUND = {
  event: "event_not_found",
  market: "market_not_found",
  orderbook: "orderbook_not_found",
} as const satisfies Record<UpstreamSubject, ErrorCode>;

/** The catalogue error a markets or upstream domain error answers with; undefined for any other error. */
export function marketsApiError(error: unknown): ApiError | undefined {
  if (error instanceof UpstreamError) return new ApiError(UPSTREAM_FAILURES[error.kind], error.message);
  if (error instanceof UpstreamNotFoundError) {
    return new ApiError(UPSTREAM_NOT_FOUND[error.subject], error.message);
  }
  if (error instanceof CatalogNotReadyError) return new ApiError("not_ready", error.message);
  // A history range or cursor the archive cannot answer (a bad cursor, more recorded trades than one answer reads).
  if (error instanceof InvalidArchiveQueryError) return new ApiError("bad_request", error.message);
  return undefined;
}
