/**
 * What goes wrong talking to the upstream exchange, in the upstream's own terms. Routes turn these
 * into catalogue errors (src/markets/routes/errors.ts); other callers (the stream, the sync, the
 * prediction venue) decide for themselves what a failure means to them.
 */

/** Why the upstream gave no answer we can use: too slow, broken or unreachable, or it refused the request. */
export type UpstreamFailure = "timeout" | "unavailable" | "rejected";

/** The upstream exchange failed a call, or refused it as malformed. */
export class UpstreamError extends Error {
  override name = "UpstreamError";
  /** A stable, Node-style code (`upstream_timeout`, ...) for logs and for callers that match on codes. */
  readonly code: `upstream_${UpstreamFailure}`;

  constructor(
    readonly kind: UpstreamFailure,
    message: string,
  ) {
    super(message);
    this.code = `upstream_${kind}`;
  }
}

/** What a relayed call asked the upstream for. */
export type UpstreamSubject = "event" | "market" | "orderbook";

/** The upstream exchange has no such event, market or order book (it answered 404). */
export class UpstreamNotFoundError extends Error {
  override name = "UpstreamNotFoundError";

  constructor(
    readonly subject: UpstreamSubject,
    message: string,
  ) {
    super(message);
  }
}
