import { describe, expect, it } from "vitest";
import { ApiError, ERRORS } from "../../src/contract/errors.js";
import { toWireError } from "../../src/http/errors.js";

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

  it("has a code for every refusal the listener itself makes", () => {
    expect(ERRORS.request_timeout).toEqual({ status: 408, retryable: true });
    expect(ERRORS.upgrade_required).toEqual({ status: 426, retryable: false });
    expect(ERRORS.headers_too_large).toEqual({ status: 431, retryable: false });
    // Codes are unique per meaning; the statuses Node's parser uses are all covered.
    const statuses = new Set<number>(Object.values(ERRORS).map((spec) => spec.status));
    for (const status of [400, 408, 413, 426, 431]) expect(statuses.has(status), String(status)).toBe(true);
  });

  it("maps Node's own client errors (parser, time limits) onto the catalogue", () => {
    const nodeError = (code: string) => Object.assign(new Error(`Parse Error: ${code}`), { code });
    expect(toWireError(nodeError("ERR_HTTP_REQUEST_TIMEOUT"))).toMatchObject({
      status: 408,
      body: { code: "request_timeout" },
    });
    expect(toWireError(nodeError("HPE_HEADER_OVERFLOW"))).toMatchObject({
      status: 431,
      body: { code: "headers_too_large" },
    });
    expect(toWireError(nodeError("HPE_INVALID_METHOD"))).toEqual({
      status: 400,
      body: { code: "bad_request", msg: "malformed HTTP/1.1 request (HPE_INVALID_METHOD)" },
    });
    expect(toWireError(nodeError("HPE_CHUNK_EXTENSIONS_OVERFLOW")).status).toBe(413);
    // Any other coded error stays an unexpected one.
    expect(toWireError(nodeError("EPIPE")).status).toBe(500);
  });

  it("never answers a thrown non-error with a 5xx body that leaks it", () => {
    expect(toWireError("boom")).toEqual({ status: 500, body: expect.objectContaining({ code: "internal" }) });
    expect(toWireError(undefined).status).toBe(500);
  });
});
