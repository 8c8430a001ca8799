/**
 * A `fetch` that answers from a Fastify app in process (`app.inject`), carrying the MCP caller's own
 * x-api-key: every tool call is then one of the venue's requests, checked and counted as any other.
 */
import type { FastifyInstance } from "fastify";

/** Base URL the injected requests are addressed to (the host is never dialled). */
export const IN_PROCESS_URL = "http://in-process.invalid";

/** A fetch over `app.inject`; `remoteAddress` keeps the caller's address for per-IP limits. */
export function inProcessFetch(app: FastifyInstance, remoteAddress: string): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const answer = await app.inject({
      method: (init?.method ?? "GET") as "GET" | "POST",
      url: `${url.pathname}${url.search}`,
      headers,
      remoteAddress,
      ...(typeof init?.body === "string" ? { payload: init.body } : {}),
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined)
        responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : String(value));
    }
    // A 204 or 304 has no body, and Response refuses one.
    const body = answer.rawPayload.length > 0 ? answer.rawPayload : null;
    return new Response(body, { status: answer.statusCode, headers: responseHeaders });
  };
}
