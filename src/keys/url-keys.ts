/**
 * Query parameter names under which clients paste API keys or tokens. A key in a URL ends up in logs,
 * so every listener refuses it and the request log redacts it; this is the one list they all use.
 */

/** The names in the normalized form `isKeyParameter` compares (lower case, `-` as `_`): `apiKey`, `api-key`, `X-Api-Key`, `access-token`... */
const KEY_QUERY_NAMES = new Set([
  "api_key",
  "apikey",
  "x_api_key",
  "key",
  "token",
  "access_token",
  "accesstoken",
]);

/** Whether a (decoded) query parameter name is one under which clients paste keys. */
export function isKeyParameter(name: string): boolean {
  return KEY_QUERY_NAMES.has(name.toLowerCase().replaceAll("-", "_"));
}

/** Whether a request URL carries a key in its query string. */
export function hasKeyInQuery(url: string): boolean {
  const start = url.indexOf("?");
  if (start === -1) return false;
  for (const name of new URLSearchParams(url.slice(start + 1)).keys()) {
    if (isKeyParameter(name)) return true;
  }
  return false;
}
