/** What a request leaves in the log: one access line, no API key, and Node's refusals in one line. */
import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import { isKeyParameter } from "../api-keys/url-keys.js";
import { answerClientError as answerNodeClientError } from "../http/client-errors.js";

/** One access line per request, with its status and time, instead of Fastify's two. */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // Checked first: building the line costs more than the request itself at high rates.
    if (!(reply.log as Logger).isLevelEnabled("info")) return;
    const line = {
      method: request.method,
      url: redactQueryKeys(request.url),
      status: reply.statusCode,
      ms: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "request");
  }
}

/** Node's own refusals (see http/client-errors.ts), logged as one line without the request they could not parse. */
export function answerClientError(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  const id = randomUUID();
  const wire = answerNodeClientError(error, socket, { "x-request-id": id });
  // No URL and no raw bytes: the request may not even have parsed, and could hold a key.
  if (wire)
    this.log.info(
      { reqId: id, status: wire.status, code: wire.body.code, reason: error.code },
      wire.body.msg,
    );
}

/** pino's request serializer, with key-like query parameters hidden (Fastify's logs the URL as sent). */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactQueryKeys(request.url ?? ""),
    remoteAddress: request.ip,
  };
}

/**
 * Hides the value of any API-key-like query parameter, so a key pasted into a URL never reaches a log.
 * Names are compared decoded, as the access check compares them (`%61pi_key` is `api_key`).
 */
export function redactQueryKeys(url: string): string {
  const start = url.indexOf("?");
  if (start === -1) return url;
  const query = url.slice(start + 1);
  const pairs = query.split("&").map((pair) => {
    const name = pair.split("=")[0] ?? "";
    return isKeyParameter(safeDecode(name)) ? `${name}=[redacted]` : pair;
  });
  return `${url.slice(0, start)}?${pairs.join("&")}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}

/** A child of `base`, so that its request serializer replaces Fastify's, which would log the URL as sent. */
export function requestLogger(base: FastifyBaseLogger): FastifyBaseLogger {
  return base.child({}, { serializers: { req: serializeRequest } });
}
