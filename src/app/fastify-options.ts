/** How the app names requests, answers errors raised before routing, and trusts proxies. */
import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import { toWireError } from "../http/errors.js";
import {
  REQUEST_ID_PATTERN,
  type ResponseSigningKey,
  signReply,
  wantsSignature,
} from "../http/response-signing.js";

/**
 * A caller's id is echoed only when it is short and plain, so it cannot forge log lines (or lines of a
 * signature base). A signed response covers the id used here as the request's: a caller whose id was
 * replaced finds the new one in x-request-id, and its own does not verify.
 */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const offered = request.headers["x-request-id"];
  return typeof offered === "string" && REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
}

/** Errors raised before routing (a malformed URL, say) get the same {code,msg} body as the rest. */
export function answerFrameworkError(signingKey: ResponseSigningKey | undefined) {
  return (error: Error, request: FastifyRequest, reply: FastifyReply) => {
    const wire = toWireError(error);
    reply.header("x-request-id", request.id).code(wire.status);
    if (!signingKey || !wantsSignature(request)) return reply.send(wire.body);
    // Fastify sends these answers without running onSend hooks: signed here, over the bytes sent.
    const body = JSON.stringify(wire.body);
    reply.type("application/json; charset=utf-8");
    signReply(request, reply, Buffer.from(body), signingKey);
    return reply.send(body);
  };
}

/** Fastify's trust setting for TRUST_PROXY: the n nearest hops, or the listed proxy addresses. */
export function trustedProxies(
  setting: Config["TRUST_PROXY"],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(setting)) return setting;
  return setting === 0 ? false : (_address, hop) => hop < setting;
}
