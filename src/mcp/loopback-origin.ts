/**
 * DNS rebinding protection for a venue listening on loopback only: a page of another site that a
 * browser was tricked into sending here names that site in Host and Origin. MCP's transport security
 * asks a local server without authentication to refuse such requests (an attacker's page could
 * otherwise fund, trade and settle through the sandbox tools).
 */
import type { IncomingHttpHeaders } from "node:http";

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether `host` (a listen address, or a Host header with its port) names this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  // A listen address ("::1") as it is; a Host header ("[::1]:8080", "localhost:8080") by its name.
  if (LOOPBACK_NAMES.has(host)) return true;
  try {
    return LOOPBACK_NAMES.has(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

/** Why a request's Host or Origin (when sent) does not name loopback, or undefined when both do. */
export function foreignOrigin(headers: IncomingHttpHeaders): string | undefined {
  const host = headers.host ?? "";
  if (!isLoopbackHost(host)) return `Host ${JSON.stringify(host.slice(0, 100))} does not name this machine`;
  const origin = headers.origin;
  // Agents send none; a browser sends its page's (an opaque "null" one from a sandboxed frame).
  if (origin === undefined) return undefined;
  try {
    if (isLoopbackHost(new URL(origin).host)) return undefined;
  } catch {
    // Not a URL: as foreign as another site's.
  }
  return `Origin ${JSON.stringify(origin.slice(0, 100))} is not a page of this machine`;
}
