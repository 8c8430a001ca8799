/** Every code of the error catalogue has a hint an agent can act on, and venue errors become tool errors carrying it. */
import { describe, expect, it } from "vitest";
import { OddsgateApiError } from "../../src/client/http.js";
import { ERRORS } from "../../src/contract/errors.js";
import { ERROR_HINTS, toolError } from "../../src/mcp/error-hints.js";
import { errorCatalogue } from "../../src/mcp/resources.js";

describe("error hints", () => {
  it("has a hint for every catalogue code, and none for a code the catalogue lacks", () => {
    expect(Object.keys(ERROR_HINTS).sort()).toEqual(Object.keys(ERRORS).sort());
    for (const hint of Object.values(ERROR_HINTS)) expect(hint.length).toBeGreaterThan(10);
    expect(errorCatalogue()).toHaveLength(Object.keys(ERRORS).length);
  });

  it("turns a venue error into an MCP tool error with its code, message, hint and retry delay", () => {
    const result = toolError(new OddsgateApiError(429, "rate_limit_exceeded", "slow down", null, 7));
    expect(result.isError).toBe(true);
    const first = result.content[0];
    expect(JSON.parse(first?.type === "text" ? first.text : "")).toEqual({
      code: "rate_limit_exceeded",
      msg: "slow down",
      hint: ERROR_HINTS.rate_limit_exceeded,
      retryAfterSeconds: 7,
    });
  });
});
