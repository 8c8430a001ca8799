/** Telling a database that is out of reach from a query that was wrong. */

// The socket's codes for a database that cannot be reached or went away mid-query (and the codes
// PG_OUTAGE_MESSAGES gives pg's errors), and PostgreSQL's for a server shutting down, starting up or
// out of connections (class 08 too).
const OUTAGE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "SQLITE_BUSY",
]);

// node-postgres (`pg`) fails a query whose connection closed, timed out or was never made with an
// error that has a message but no code: the code each stands for here.
const PG_OUTAGE_MESSAGES: ReadonlyMap<string, string> = new Map([
  ["Connection terminated unexpectedly", "CONNECTION_CLOSED"],
  ["Client has encountered a connection error and is not queryable", "CONNECTION_CLOSED"],
  ["Connection terminated", "CONNECTION_ENDED"],
  ["Client was closed and is not queryable", "CONNECTION_ENDED"],
  ["Cannot use a pool after calling end on the pool", "CONNECTION_ENDED"],
  ["timeout exceeded when trying to connect", "CONNECT_TIMEOUT"],
  ["Connection terminated due to connection timeout", "CONNECT_TIMEOUT"],
]);

/**
 * The code of a storage error that says the database is out of reach (not that the query was wrong),
 * for errors of storage calls only (the socket codes are every network client's too),
 * else undefined: a retry can succeed once it is back.
 */
export function storageOutageCode(error: unknown): string | undefined {
  for (let cause = error, depth = 0; depth < 3; depth++) {
    if (typeof cause !== "object" || cause === null) return undefined;
    const code: unknown = Reflect.get(cause, "code");
    if (typeof code === "string" && (OUTAGE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return code;
    const message: unknown = code === undefined ? Reflect.get(cause, "message") : undefined;
    const pgCode = typeof message === "string" ? PG_OUTAGE_MESSAGES.get(message) : undefined;
    if (pgCode) return pgCode;
    cause = Reflect.get(cause, "cause");
  }
  return undefined;
}
