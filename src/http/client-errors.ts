/**
 * The answer to a request Node's HTTP server refuses before any handler sees it (a malformed request,
 * a head over HTTP_LIMITS.maxHeaderBytes, a request past its time limit): a `{code,msg}` body like
 * every other error, on every listener, where Node would write an empty one.
 */
import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { toWireError, type WireError } from "./errors.js";

/**
 * Writes the `{code,msg}` answer to `error` on `socket` (unless a response to the request has
 * started) and closes it; returns what was answered, or undefined for a reset connection.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: Socket,
  headers: Record<string, string> = {},
): WireError | undefined {
  // A reset connection has nobody to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return undefined;
  const wire = toWireError(error);
  // As Node does: answer only if no response to this request has started on the socket.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(wire.body);
    const extra = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.write(
      `HTTP/1.1 ${wire.status} ${STATUS_CODES[wire.status] ?? ""}\r\n` +
        "content-type: application/json; charset=utf-8\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `${extra}connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
  return wire;
}
