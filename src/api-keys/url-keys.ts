/**
 * Query parameter names under which clients paste API keys, tokens or other secrets. A secret in a
 * URL ends up in logs, so every listener refuses it and the request log redacts it; this is the one
 * rule they all use.
 *
 * A name is compared decoded (by the caller), in Unicode compatibility form, lower-cased and with
 * everything but `[a-z0-9]` removed, so that `api_key`, `API-Key`, `api+key`, `api%20key`,
 * `api_key[]`, `apikey%00` and `api.key` are all `apikey`. It is a key name when it is exactly `key`,
 * or contains one of `KEY_NAME_PARTS` outside the words of `NOT_SECRETS`. No query parameter the API
 * declares matches (the hardening tests check every one, e.g. `userPublicKey`, `feeAccount`,
 * `sponsor`, `cursor`, `destinationTokenAccount`, `outputCloseAuthority`).
 */

/** Normalized names that are a key on their own (`key`, `Key`, `k.e.y`...), though they are part of legitimate names. */
const KEY_NAMES = new Set(["key"]);

/**
 * Parts of a normalized name that make it a key name wherever they occur: `apiKey`, `x-api-key`,
 * `access_key`, `api_token`, `access-token`, `client_secret`, `password`, `auth`, `Authorization`,
 * `bearer`, `credentials`...
 */
const KEY_NAME_PARTS = [
  "apikey",
  "accesskey",
  "secretkey",
  "privatekey",
  "token",
  "secret",
  "password",
  "passwd",
  "auth",
  "bearer",
  "credential",
] as const;

/**
 * Words that contain a part of `KEY_NAME_PARTS` but name no secret, removed before the parts are
 * looked for: a token account or mint (`destinationTokenAccount`), an authority
 * (`outputCloseAuthority`). `authorization`, `api_token` and `token_secret` still match.
 */
const NOT_SECRETS = /token(?:account|mint|program)|authorit(?:y|ies)/g;

/** A parameter name in the form the rule compares: compatibility-normalized, lower case, `[a-z0-9]` only. */
export function normalizeKeyParameter(name: string): string {
  return name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
}

/** Whether a (decoded) query parameter name is one under which clients paste keys or other secrets. */
export function isKeyParameter(name: string): boolean {
  const normalized = normalizeKeyParameter(name);
  if (KEY_NAMES.has(normalized)) return true;
  const words = normalized.replace(NOT_SECRETS, " ");
  return KEY_NAME_PARTS.some((part) => words.includes(part));
}

/** Plain ASCII with nothing escaped: a query whose names normalize by lower-casing and stripping alone. */
const PLAIN_QUERY = /^[\x21-\x7e]*$/;
/** The letters any key name holds once normalized (every `KEY_NAMES` entry and `KEY_NAME_PARTS` part contains one). */
const KEY_LETTERS = /key|token|secret|passw|auth|bearer|credential/;

/** Whether a request URL carries a key in its query string. */
export function hasKeyInQuery(url: string): boolean {
  const start = url.indexOf("?");
  if (start === -1) return false;
  const query = url.slice(start + 1);
  // The common case, on every request with a query: when nothing in it, names and values alike,
  // spells a key's letters, no name can normalize to a key name, so there is nothing to parse.
  if (
    PLAIN_QUERY.test(query) &&
    !query.includes("%") &&
    !query.includes("+") &&
    !KEY_LETTERS.test(query.toLowerCase().replace(/[^a-z0-9&=]/g, ""))
  )
    return false;
  for (const name of new URLSearchParams(query).keys()) {
    if (isKeyParameter(name)) return true;
  }
  return false;
}
