import { describe, expect, it } from "vitest";
import { ApiError, ERRORS, toWireError } from "../../src/http/errors.js";

describe("error catalogue", () => {
  it("gives every code a status and a retry hint", () => {
    for (const [code, spec] of Object.entries(ERRORS)) {
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(typeof spec.retryable, code).toBe("boolean");
    }
    expect(ERRORS.rate_limit_exceeded).toEqual({ status: 429, retryable: true });
    expect(ERRORS.event_not_found).toEqual({ status: 404, retryable: false });
  });

  it("turns an ApiError into its status and {code,msg}", () => {
    expect(toWireError(new ApiError("event_not_found", "event X not found"))).toEqual({
      status: 404,
      body: { code: "event_not_found", msg: "event X not found" },
    });
  });

  it("hides everything about an unexpected error", () => {
    const error = new Error("connection to db:5432 refused at /srv/app/secret.ts:12");
    const wire = toWireError(error);
    expect(wire.status).toBe(500);
    expect(wire.body.code).toBe("internal");
    expect(JSON.stringify(wire)).not.toContain("5432");
    expect(JSON.stringify(wire)).not.toContain("secret");
  });

  it("maps Fastify's body errors onto the catalogue", () => {
    expect(toWireError({ code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413, message: "x" }).body.code).toBe(
      "payload_too_large",
    );
    expect(toWireError({ code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 }).status).toBe(415);
    expect(toWireError({ code: "FST_ERR_CTP_EMPTY_JSON_BODY", statusCode: 400 }).body.code).toBe(
      "invalid_json",
    );
    const syntax = Object.assign(new SyntaxError("Unexpected token"), { statusCode: 400 });
    expect(toWireError(syntax).body.code).toBe("invalid_json");
  });

  it("never answers a thrown non-error with a 5xx body that leaks it", () => {
    expect(toWireError("boom")).toEqual({ status: 500, body: expect.objectContaining({ code: "internal" }) });
    expect(toWireError(undefined).status).toBe(500);
  });
});
