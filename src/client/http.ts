/**
 * The HTTP transport the typed clients share: base URL, `x-api-key`, `{code, msg}` errors, and
 * optionally signed responses, verified before they are used.
 */
import { randomUUID } from "node:crypto";
import { ERRORS, isErrorCode } from "../contract/errors.js";
import { verifyResponse } from "./verify-response.js";

export interface ClientOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:8080 (no /api/v1). */
  baseUrl: string;
  /** Sent as `x-api-key` when set. */
  apiKey?: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /**
   * Asks for a signature on every response (`x-sign-request`, with a fresh `x-request-id`) and
   * verifies it with the venue's key (base58 or raw bytes; `fetchSigningKey` reads it once) before
   * the body is used; a response that fails throws a ResponseSignatureError, an error answer included.
   */
  verifySignatures?: { publicKey: string | Uint8Array; maxAgeSeconds?: number };
}

/** A non-2xx answer, carrying the service's `{code, msg}`. */
export class OddsgateApiError extends Error {
  override name = "OddsgateApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    readonly msg: string,
    readonly requestId: string | null,
    /** Seconds the service asked to wait before retrying (its Retry-After), when it said. */
    readonly retryAfterSeconds: number | undefined = undefined,
  ) {
    super(`${status} ${code}: ${msg}`);
  }

  /**
   * Whether sending the same request again can succeed (the catalogue says so for its code; a code
   * the catalogue does not know is retryable only as a 5xx from something in between).
   */
  get retryable(): boolean {
    return isErrorCode(this.code) ? ERRORS[this.code].retryable : this.status >= 500;
  }
}

export type QueryValue = string | number | bigint | boolean | string[] | number[] | undefined;

/** JSON over HTTP to one API group (`prefix`, e.g. "/api/v1" or "" for the trade API). */
export class ApiTransport {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly options: ClientOptions,
    prefix: string,
  ) {
    this.baseUrl = `${options.baseUrl.replace(/\/+$/, "")}${prefix}`;
    this.fetchImpl = options.fetch ?? fetch;
  }

  get<T>(path: string, query: Record<string, QueryValue> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) params.set(name, Array.isArray(value) ? value.join(",") : String(value));
    }
    const search = params.size > 0 ? `?${params}` : "";
    return this.request(`${path}${search}`, { method: "GET" });
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
  }

  private async request<T>(path: string, init: RequestInit): Promise<T> {
    const headers = new Headers(init.headers);
    if (this.options.apiKey) headers.set("x-api-key", this.options.apiKey);
    const verify = this.options.verifySignatures;
    // A fresh id per request: the signature covers it, so an answer to another request cannot pass.
    const requestId = randomUUID();
    if (verify) {
      headers.set("x-sign-request", "true");
      headers.set("x-request-id", requestId);
    }
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, { ...init, headers });
    const body = new Uint8Array(await response.arrayBuffer());
    if (verify) {
      verifyResponse(
        { status: response.status, headers: response.headers, body },
        { publicKey: verify.publicKey, requestId, maxAgeSeconds: verify.maxAgeSeconds },
      );
    }
    const text = new TextDecoder().decode(body);
    if (!response.ok) {
      let code = "http_error";
      let msg = text;
      try {
        ({ code, msg } = JSON.parse(text) as { code: string; msg: string });
      } catch {
        // Not our error body (a proxy in between, say): keep the raw text as the message.
      }
      const retryAfter = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
      throw new OddsgateApiError(
        response.status,
        code,
        msg,
        response.headers.get("x-request-id"),
        Number.isFinite(retryAfter) ? retryAfter : undefined,
      );
    }
    return JSON.parse(text) as T;
  }
}
