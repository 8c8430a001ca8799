/**
 * The one client of the upstream exchange (Kalshi trade-api v2, or the simulator). Every call runs
 * within a time budget, behind a circuit breaker; identical calls in flight share one request, and
 * answers the caller marks as settled (ranges wholly in the past) are kept in an LRU cache.
 *
 * It answers with what the upstream said when the upstream is healthy (2xx, and 4xx: a client error
 * is the caller's, not the upstream's fault) and throws an `UpstreamError` (`timeout` or `unavailable`)
 * otherwise, so the relay can pass bodies through byte for byte.
 */
import { LRUCache } from "lru-cache";
import CircuitBreaker from "opossum";
import type { Agent } from "undici";
import { ByteBudget } from "./byte-budget.js";
import { UpstreamError } from "./errors.js";
import { type KalshiCredentials, kalshiSignatureHeaders } from "./signing.js";

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  body: Buffer;
  /**
   * A fresh 200's body as the client parsed it to check it is JSON, so that no reader parses it again
   * (a sync's page of events is megabytes). Callers of one coalesced request share it: read it, never
   * change it. A cached answer keeps only its bytes.
   */
  json?: unknown;
  /** Set on an answer the cache holds: its body will be sent again, so it is worth compressing once. */
  cached?: true;
}

/** Hears a fresh answer: its path relative to the base URL (with the query), its body and that body parsed. */
export type UpstreamObserver = (path: string, body: Buffer, json: unknown) => void;

/** An answer's body as JSON: as the client parsed it when it arrived, or parsed now (a cached answer). */
export function answerJson(answer: UpstreamAnswer): unknown {
  return answer.json !== undefined ? answer.json : JSON.parse(answer.body.toString("utf8"));
}

export interface UpstreamRequestOptions {
  /** The answer can never change (e.g. a range wholly in the past): keep a 200 in the cache. */
  cacheable?: boolean;
  /** Whether a 200 says of itself that it can never change (e.g. a finished game): then it is cached. */
  cacheableIf?: (answer: UpstreamAnswer) => boolean;
  /** A 200 that changes seldom (an event's milestones) is kept this long; a change shows within it. */
  maxAgeMs?: number;
}

/** What the relay and the sync need from an upstream exchange. */
export interface Upstream {
  get(path: string, query?: URLSearchParams, options?: UpstreamRequestOptions): Promise<UpstreamAnswer>;
  close(): Promise<void>;
}

export interface UpstreamClientOptions {
  /** e.g. https://api.elections.kalshi.com/trade-api/v2 */
  baseUrl: string;
  /** Time from sending a request to having its whole body; past it the call fails with a `timeout` UpstreamError. */
  timeoutMs: number;
  credentials?: KalshiCredentials;
  breaker?: {
    /** Failures among the recent calls that open the circuit, in percent. */
    errorThresholdPercentage?: number;
    /** Calls in the rolling window before the breaker judges at all. */
    volumeThreshold?: number;
    /** How long the circuit stays open before one trial call may close it. */
    resetTimeoutMs?: number;
  };
  /** Upper bound of the cache of settled answers, in bytes. */
  cacheBytes?: number;
  /** Longest body accepted from the upstream, in bytes (default 32 MiB). */
  maxBodyBytes?: number;
  /**
   * Bytes of bodies being read at once, across every request (default: two longest bodies). A body
   * whose next bytes do not fit fails as `unavailable`, so concurrent oversized answers hold no more.
   */
  bodyBudget?: ByteBudget;
}

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;
/**
 * Identical calls in flight share one request; the entry goes as soon as the request settles, so this
 * is coalescing, not caching. (opossum 9 has these options; its DefinitelyTyped types, at 8, do not.)
 */
const IN_FLIGHT_COALESCING = {
  coalesce: true,
  coalesceResetOn: ["error", "success", "timeout"],
} as CircuitBreaker.Options;

/** Longest upstream body we accept; a relay answer larger than this is not a sane exchange response. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Bytes of upstream bodies read at once: 20 concurrent oversized answers held 20 × 32 MiB without it. */
const BODY_BUDGET_BYTES = 2 * MAX_BODY_BYTES;

/** A Kalshi-compatible HTTP client with a budget, a breaker, coalescing and a cache of settled answers. */
export class UpstreamClient implements Upstream {
  private readonly base: URL;
  // undici takes ~70 ms to load: it is imported with the first request, after start-up.
  private agent: Promise<Agent> | undefined;
  private readonly breaker: CircuitBreaker<[string], UpstreamAnswer>;
  private readonly settled: LRUCache<string, UpstreamAnswer>;
  private readonly maxBodyBytes: number;
  /** What the bodies being read hold between them. */
  readonly bodyBudget: ByteBudget;
  private readonly observers: UpstreamObserver[] = [];

  constructor(private readonly options: UpstreamClientOptions) {
    this.base = new URL(options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.bodyBudget = options.bodyBudget ?? new ByteBudget(BODY_BUDGET_BYTES);
    this.breaker = new CircuitBreaker((url: string) => this.fetchOnce(url), {
      // The budget is enforced per request by fetchOnce, where the request can also be aborted.
      timeout: false,
      errorThresholdPercentage: options.breaker?.errorThresholdPercentage ?? 50,
      volumeThreshold: options.breaker?.volumeThreshold ?? 20,
      resetTimeout: options.breaker?.resetTimeoutMs ?? 10_000,
      rollingCountTimeout: 30_000,
      rollingCountBuckets: 30,
      ...IN_FLIGHT_COALESCING,
    });
    this.settled = new LRUCache({
      maxSize: options.cacheBytes ?? DEFAULT_CACHE_BYTES,
      sizeCalculation: (answer) => answer.body.length + 256,
    });
  }

  /** Whether the breaker currently refuses calls. */
  get circuitOpen(): boolean {
    return this.breaker.opened;
  }

  /** The breaker's state: `halfOpen` while it lets a trial call through after being open. */
  get circuitState(): "closed" | "open" | "halfOpen" {
    return this.breaker.halfOpen ? "halfOpen" : this.breaker.opened ? "open" : "closed";
  }

  /** GET `path` (relative to the base URL) with `query`, from the cache when the caller marks it settled. */
  async get(
    path: string,
    query?: URLSearchParams,
    options: UpstreamRequestOptions = {},
  ): Promise<UpstreamAnswer> {
    const url = this.urlOf(path, query);
    if (options.cacheable || options.cacheableIf || options.maxAgeMs) {
      const cached = this.settled.get(url);
      if (cached) return cached;
    }
    let answer: UpstreamAnswer;
    try {
      answer = await this.breaker.fire(url);
    } catch (error) {
      throw this.describeFailure(error);
    }
    if (answer.status === 200 && (options.cacheable || options.cacheableIf?.(answer))) {
      this.settled.set(url, bytesOf(answer));
      answer = { ...answer, cached: true };
    } else if (answer.status === 200 && options.maxAgeMs) {
      this.settled.set(url, bytesOf(answer), { ttl: options.maxAgeMs });
      answer = { ...answer, cached: true };
    }
    return answer;
  }

  /** Hears every fresh 200 answer (never a cached one) once, however many callers shared it. */
  observe(observer: UpstreamObserver): void {
    this.observers.push(observer);
  }

  /** The cached answer for a settled call, if any, without touching the network. */
  cached(path: string, query?: URLSearchParams): UpstreamAnswer | undefined {
    return this.settled.get(this.urlOf(path, query));
  }

  async close(): Promise<void> {
    this.breaker.shutdown();
    await (await this.agent)?.close();
  }

  /** The connection pool, made with the first request. */
  private pool(): Promise<Agent> {
    // Through `default` (module.exports): the bundle's chunk of this CommonJS package exports nothing else.
    this.agent ??= import("undici").then(
      ({ default: { Agent } }) =>
        new Agent({
          connections: 64,
          keepAliveTimeout: 30_000,
          headersTimeout: this.options.timeoutMs,
          bodyTimeout: this.options.timeoutMs,
        }),
    );
    return this.agent;
  }

  /** The request URL, built by hand: this runs on every relayed call, cache hits included. */
  private urlOf(path: string, query?: URLSearchParams): string {
    const search = query?.toString();
    return `${this.base.href}${path.replace(/^\//, "")}${search ? `?${search}` : ""}`;
  }

  /** One request within the budget. Resolves with healthy answers, rejects with what counts as a failure. */
  private async fetchOnce(url: string): Promise<UpstreamAnswer> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.options.credentials) {
      Object.assign(headers, kalshiSignatureHeaders(this.options.credentials, "GET", new URL(url).pathname));
    }
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const response = await (await this.pool()).request({
      origin: this.base.origin,
      path: url.slice(this.base.origin.length),
      method: "GET",
      headers,
      signal,
    });
    const { maxBodyBytes, bodyBudget } = this;
    if (Number(response.headers["content-length"]) > maxBodyBytes) {
      response.body.destroy();
      throw unavailable(`answered with a body over ${maxBodyBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    // Bytes taken from the shared budget, given back once the body has been read and checked.
    let size = 0;
    try {
      for await (const chunk of response.body) {
        const bytes = (chunk as Buffer).length;
        if (size + bytes > maxBodyBytes) {
          response.body.destroy();
          throw unavailable(`answered with a body over ${maxBodyBytes} bytes`);
        }
        if (!bodyBudget.take(bytes)) {
          response.body.destroy();
          throw unavailable(
            `answered while other answers held the ${bodyBudget.capacity} bytes of bodies read at once`,
          );
        }
        size += bytes;
        chunks.push(chunk as Buffer);
      }
      const body = Buffer.concat(chunks, size);
      const contentType = String(response.headers["content-type"] ?? "");
      const { statusCode: status } = response;
      if (status === 429) throw unavailable("is rate limiting us (429)");
      if (status >= 500) throw unavailable(`answered ${status}`);
      if (status >= 300 && status < 400) throw unavailable(`redirected (${status})`);
      if (status !== 200) return { status, contentType, body };
      const json = jsonOf(contentType, body);
      if (json === undefined) throw unavailable("answered 200 with a body that is not JSON");
      this.tell(url, body, json);
      return { status, contentType, body, json };
    } finally {
      bodyBudget.release(size);
    }
  }

  private tell(url: string, body: Buffer, json: unknown): void {
    if (this.observers.length === 0) return;
    const path = url.slice(this.base.href.length);
    for (const observer of this.observers) {
      try {
        observer(path, body, json);
      } catch {
        // An observer (the archive) never fails the call it heard.
      }
    }
  }

  /** The UpstreamError a failed call throws, whatever failed: the breaker, the budget, the network. */
  private describeFailure(error: unknown): UpstreamError {
    if (error instanceof UpstreamError) return error;
    const { code, name } = error as { code?: string; name?: string };
    if (code === "EOPENBREAKER") {
      return new UpstreamError(
        "unavailable",
        "the upstream exchange failed repeatedly; calls are paused briefly (circuit open)",
      );
    }
    if (
      name === "TimeoutError" ||
      name === "AbortError" ||
      code === "UND_ERR_HEADERS_TIMEOUT" ||
      code === "UND_ERR_BODY_TIMEOUT"
    ) {
      return new UpstreamError(
        "timeout",
        `the upstream exchange did not answer within ${this.options.timeoutMs} ms`,
      );
    }
    return new UpstreamError(
      "unavailable",
      `the upstream exchange could not be reached (${code ?? (error as Error).message ?? "unknown error"})`,
    );
  }
}

/** The upstream answered, but not in a way we can relay. */
function unavailable(what: string): UpstreamError {
  return new UpstreamError("unavailable", `the upstream exchange ${what}`);
}

/** `application/json` or `application/…+json`, with parameters or none. */
const JSON_MEDIA_TYPE = /^\s*application\/(?:[a-z0-9.!#$&^_-]+\+)?json\s*(?:;|$)/i;

/** The body parsed, or undefined when it is not JSON. */
function jsonOf(contentType: string, body: Buffer): unknown {
  // A JSON media type and nothing else: the relay passes it on, so `text/html; x=json` must not pass.
  if (!JSON_MEDIA_TYPE.test(contentType)) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** What the cache of settled answers keeps of an answer: its bytes, not the tree parsed from them. */
function bytesOf(answer: UpstreamAnswer): UpstreamAnswer {
  return { status: answer.status, contentType: answer.contentType, body: answer.body, cached: true };
}
