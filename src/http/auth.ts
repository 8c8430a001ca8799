/**
 * Access control (contract §4), run before every route, WebSocket upgrades included: a key offered in
 * the URL is refused, the `x-api-key` header is checked, production requires one (development serves
 * a key it never issued as anonymous, with `x-api-key-status: unknown`, but refuses a revoked one),
 * and every caller draws from a token bucket (per key by tier, per client IP without a key).
 *
 * Two exceptions, both for the explorer: its built files (routes marked `asset`) hold no data and are
 * never limited; and in development, the explorer page's own requests without a key (marked
 * `x-oddsgate-client: explorer`) draw from a bucket of their own per client IP, EXPLORER_BUDGET times
 * the anonymous limit, so a person browsing a page a second never meets the limit a script would.
 * The marker is trusted in development only: in production the page sends a key and the key's tier
 * applies, marker or not.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { hashSecret, type KeyGrant } from "../api-keys/store.js";
import type { KeyTier } from "../api-keys/tiers.js";
import { hasKeyInQuery } from "../api-keys/url-keys.js";
import type { Config } from "../config.js";
import { ApiError } from "../contract/errors.js";
import type { BucketState, RateStore } from "./rate-limit.js";
import { StreamCredentials } from "./stream-peers.js";

/** Checks a secret; the KeyRing in production, a stub in tests that need no keys. */
export interface KeyChecker {
  /** What a secret grants as far as this instance already knows, without waiting: undefined when unknown. */
  lookup(secret: string): KeyGrant | undefined;
  /** The same, after looking in storage for a key this instance has not seen yet. */
  check(secret: string): Promise<KeyGrant | undefined>;
  /**
   * Hears the hashes of secrets that stopped being valid (revoked, rotated, past their grace), so
   * streams opened with them can be closed; returns a function that stops listening.
   */
  onInvalidated?(listener: (secretHashes: ReadonlySet<string>) => void): () => void;
  /** Whether a secret was a key here once and is not now (revoked, rotated away): refused in every mode. */
  hasEnded?(secret: string): boolean;
}

export interface AccessControl {
  mode: Config["MODE"];
  keys: KeyChecker;
  rateStore: RateStore;
  /** Requests per minute by caller kind; 0 means unlimited. */
  limits: Record<"anonymous" | KeyTier, number>;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key, or null for an anonymous (development) caller. */
    grant: KeyGrant | null;
  }
  interface FastifyContextConfig {
    /**
     * Open without a key in every mode (what a caller needs before it has one, e.g. the response
     * signing key): a missing or unknown key is served as anonymous, under the anonymous rate limit.
     */
    public?: boolean;
    /** A built file of the explorer (no data): served to anyone, never rate limited. */
    asset?: boolean;
  }
}

/** The header by which the explorer page marks its own requests. */
export const EXPLORER_CLIENT_HEADER = "x-oddsgate-client";
/**
 * The explorer's budget in development, in multiples of the anonymous limit (600 a minute by
 * default): a page a second with its market, book, trades and candles, and room to spare.
 */
export const EXPLORER_BUDGET = 10;

/**
 * Installs the access checks as an onRequest hook. It is written with a callback rather than async:
 * a known key and an in-memory bucket are then checked without a single promise, which keeps access
 * control nearly free on the hot path.
 */
export function installAccessControl(app: FastifyInstance, access: AccessControl): void {
  app.decorateRequest("grant", null);
  // Streams stay under the access rules after the upgrade: a key that stops being valid ends its streams.
  const streams = new StreamCredentials();
  const stopListening = access.keys.onInvalidated?.((secretHashes) => streams.closeInvalidated(secretHashes));
  if (stopListening) app.addHook("onClose", async () => stopListening());
  // Every WebSocket route gets the upgrade and streams checks, so a new stream cannot forget them.
  app.addHook("onRoute", (route) => {
    if (!route.websocket) return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [...own, requireUpgrade, requireStreamPermission];
    const handler = route.handler as unknown as WebSocketHandler;
    // Still the stream's handler here: @fastify/websocket, registered after this hook, takes it next.
    route.handler = function (this: FastifyInstance, socket: WebSocket, request: FastifyRequest) {
      const offered = request.headers["x-api-key"];
      if (request.grant && typeof offered === "string") streams.track(socket, hashSecret(offered));
      return handler.call(this, socket, request);
    } as unknown as typeof route.handler;
  });
  app.addHook("onRequest", (request, reply, done) => {
    // A refused request still draws from its address's bucket: guessing keys is not free.
    const refuse = (error: ApiError) =>
      limitRate(request, reply, access, (limited) => done(limited ?? error));
    if (hasKeyInQuery(request.url)) {
      return refuse(
        new ApiError(
          "api_key_in_query",
          "API keys go in the x-api-key header, never in the URL (URLs end up in logs); rotate a key sent this way",
        ),
      );
    }
    // The explorer's files: nothing to protect, nothing to count.
    if (request.routeOptions.config?.asset === true) return done();
    const offered = request.headers["x-api-key"];
    const open = request.routeOptions.config?.public === true;
    if (offered === undefined) {
      if (access.mode === "production" && !open) {
        return refuse(
          new ApiError("unauthorized", "this deployment requires an API key in the x-api-key header"),
        );
      }
      return limitRate(request, reply, access, done);
    }
    const known = typeof offered === "string" ? access.keys.lookup(offered) : undefined;
    if (known) {
      request.grant = known;
      return limitRate(request, reply, access, done);
    }
    const checked = typeof offered === "string" ? access.keys.check(offered) : Promise.resolve(undefined);
    checked.then((grant) => {
      if (!grant) {
        if (open) return limitRate(request, reply, access, done);
        // A key this deployment never issued (a client's DFlow key, say) is no credential here: in
        // development its caller is served as anonymous, and told why.
        if (
          access.mode === "development" &&
          typeof offered === "string" &&
          !access.keys.hasEnded?.(offered)
        ) {
          reply.header("x-api-key-status", "unknown");
          return limitRate(request, reply, access, done);
        }
        return refuse(new ApiError("unauthorized", "unknown or revoked API key in x-api-key"));
      }
      request.grant = grant;
      limitRate(request, reply, access, done);
    }, done);
  });
}

/** When the rate store last failed to answer, to log an outage once every WARN_INTERVAL_MS rather than per request. */
let lastStoreWarning = 0;
const WARN_INTERVAL_MS = 10_000;

function limitRate(
  request: FastifyRequest,
  reply: FastifyReply,
  access: AccessControl,
  done: (error?: Error) => void,
) {
  const explorer =
    !request.grant && access.mode === "development" && request.headers[EXPLORER_CLIENT_HEADER] === "explorer";
  const policy = request.grant?.tier ?? (explorer ? "explorer" : "anonymous");
  const limit = access.limits[request.grant?.tier ?? "anonymous"] * (explorer ? EXPLORER_BUDGET : 1);
  if (limit === 0) return done();
  const bucket = request.grant
    ? `key:${request.grant.id}`
    : explorer
      ? `explorer:${request.ip}`
      : `ip:${request.ip}`;
  const apply = (state: BucketState) => {
    reply.header("ratelimit-policy", `"${policy}";q=${limit};w=60`);
    reply.header("ratelimit", `"${policy}";r=${state.remaining};t=${state.resetSeconds}`);
    reply.header("x-ratelimit-limit", limit);
    reply.header("x-ratelimit-remaining", state.remaining);
    if (state.allowed) return done();
    reply.header("retry-after", state.retryAfterSeconds);
    done(
      new ApiError(
        "rate_limit_exceeded",
        `rate limit of ${limit} requests per minute (${policy}) exceeded; retry in ${state.retryAfterSeconds} s` +
          (request.grant ? "" : "; an API key raises the limit"),
      ),
    );
  };
  const storeUnavailable = (error: unknown) => {
    // A rate store outage must not take the API down with it: serve unlimited, and say so.
    if (Date.now() - lastStoreWarning > WARN_INTERVAL_MS) {
      lastStoreWarning = Date.now();
      request.log.warn({ err: error }, "rate limit store unavailable; requests are not limited");
    }
    done();
  };
  try {
    const state = access.rateStore.take(bucket, limit);
    if (state instanceof Promise) state.then(apply, storeUnavailable);
    else apply(state);
  } catch (error) {
    storeUnavailable(error);
  }
}

type WebSocketHandler = (this: FastifyInstance, socket: WebSocket, request: FastifyRequest) => unknown;

/**
 * A WebSocket route asked for with plain HTTP gets a `{code,msg}` 426 saying so (rather than the
 * empty 404 @fastify/websocket would send).
 */
export async function requireUpgrade(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.ws) return;
  reply.header("upgrade", "websocket");
  throw new ApiError(
    "upgrade_required",
    `${request.url.split("?")[0]} is a WebSocket stream: open it with a WebSocket client (Upgrade: websocket)`,
  );
}

/**
 * The upgrade check added to every WebSocket route on top of the shared checks above: a key must
 * carry the `streams` permission (anonymous development callers may stream).
 */
export async function requireStreamPermission(request: FastifyRequest): Promise<void> {
  if (request.grant && !request.grant.streams) {
    throw new ApiError(
      "stream_not_permitted",
      "this API key may not open streams; create one with --streams",
    );
  }
}
