/**
 * Contract §2: a query parameter a route does not define is ignored, and named in the
 * `x-ignored-params` response header. A route defines the keys of its querystring schema; one without
 * a schema defines none.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { z } from "zod";

export const IGNORED_PARAMS_HEADER = "x-ignored-params";
/** Names listed at most; past them the list ends with `...`. */
export const MAX_IGNORED_NAMES = 16;
/** A longer name is cut to this many characters, the last three `...`. */
export const MAX_IGNORED_NAME_CHARS = 64;

const NONE: ReadonlySet<string> = new Set();
const declared = new WeakMap<object, ReadonlySet<string>>();

/** Adds the header to every routed request whose query has parameters its route does not define. */
export function installIgnoredParams(app: FastifyInstance): void {
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const start = request.url.indexOf("?");
    // An unknown path has no parameters of its own to compare with: its 404 says enough.
    if (start !== -1 && !request.is404) {
      const names = ignoredParams(
        request.url.slice(start + 1),
        declaredParams(request.routeOptions.schema?.querystring),
      );
      if (names !== undefined) reply.header(IGNORED_PARAMS_HEADER, names);
    }
    done();
  });
}

/**
 * The header value for a raw query string: the names not in `known`, once each, in the order sent and
 * as sent (percent-encoding kept; a comma or a byte outside visible ASCII is percent-encoded so the
 * list stays parseable), bounded by MAX_IGNORED_NAMES and MAX_IGNORED_NAME_CHARS. Undefined when none.
 */
export function ignoredParams(query: string, known: ReadonlySet<string>): string | undefined {
  const names: string[] = [];
  for (const pair of query.split("&")) {
    const equals = pair.indexOf("=");
    const raw = equals === -1 ? pair : pair.slice(0, equals);
    if (raw === "" || known.has(decodeName(raw))) continue;
    const shown = shownName(raw);
    if (names.includes(shown)) continue;
    if (names.length === MAX_IGNORED_NAMES) {
      names.push("...");
      break;
    }
    names.push(shown);
  }
  return names.length > 0 ? names.join(",") : undefined;
}

/** The parameter names a querystring schema (zod, or JSON Schema) defines, read once per schema. */
function declaredParams(schema: unknown): ReadonlySet<string> {
  if (schema === null || typeof schema !== "object") return NONE;
  let names = declared.get(schema);
  if (names === undefined) {
    names = new Set(keysOf(schema));
    declared.set(schema, names);
  }
  return names;
}

function keysOf(schema: object): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  // A transformed object validates the object it transforms.
  if (schema instanceof z.ZodPipe) return keysOf(schema.in);
  const { properties } = schema as { properties?: unknown };
  return properties !== null && typeof properties === "object" ? Object.keys(properties) : [];
}

/** A name as the query parser reads it: `+` a space, percent-escapes decoded (kept raw when malformed). */
function decodeName(raw: string): string {
  if (!raw.includes("%") && !raw.includes("+")) return raw;
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

function shownName(raw: string): string {
  const safe = raw.replace(
    /[^\x21-\x7e]|,/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
  return safe.length > MAX_IGNORED_NAME_CHARS ? `${safe.slice(0, MAX_IGNORED_NAME_CHARS - 3)}...` : safe;
}
