/**
 * The quick look `hasKeyInQuery` takes before parsing a query must never miss a key name that parsing
 * every name would find: checked against the parse itself over random queries built from key-like
 * names, separators, escapes and look-alikes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasKeyInQuery, isKeyParameter } from "../../src/api-keys/url-keys.js";

/** What `hasKeyInQuery` answers by parsing every name, with no shortcut. */
function parsedHasKey(query: string): boolean {
  return [...new URLSearchParams(query).keys()].some(isKeyParameter);
}

const pieces = [
  "api",
  "key",
  "Key",
  "K",
  "ey",
  "tok",
  "en",
  "auth",
  "bearer",
  "secret",
  "pass",
  "word",
  "credential",
  "user",
  "Public",
  "limit",
  "cursor",
  "_",
  "-",
  ".",
  "[]",
  "%20",
  "%5F",
  "%6B",
  "+",
  "ｋ",
  "=",
  "&",
  "1",
];

describe("hasKeyInQuery", () => {
  it("finds every key name the full parse finds, whatever the query", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const query = parts.join("");
        expect(hasKeyInQuery(`/x?${query}`), query).toBe(parsedHasKey(query));
      }),
      { numRuns: 5_000, seed: 42 },
    );
  });

  it("answers a query with no key's letters without parsing it, and still finds a spelled-out one", () => {
    expect(hasKeyInQuery("/api/v1/events?limit=10&status=active&sort=volume")).toBe(false);
    expect(hasKeyInQuery("/order?inputMint=A&userPublicKey=B")).toBe(false);
    expect(hasKeyInQuery("/order?k.e.y=secret")).toBe(true);
    expect(hasKeyInQuery("/order?api%5Fkey=secret")).toBe(true);
  });
});
