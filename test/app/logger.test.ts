/** The service's log lines: readable on a terminal, JSON elsewhere, and never an API key in either. */
import { Writable } from "node:stream";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/app/logger.js";
import { type Config, loadConfig } from "../../src/config.js";

const SECRET = "og_HEADERSECRET456";

/** Logs one request entry, with credentials in its headers, and returns what was written. */
function logRequest(config: Pick<Config, "LOG_LEVEL" | "LOG_FORMAT">, isTTY: boolean): string {
  let written = "";
  const capture = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  });
  const log = createLogger(config, isTTY, capture);
  const headers = { "x-api-key": SECRET, authorization: `Bearer ${SECRET}`, accept: "application/json" };
  log.info({ req: { method: "GET", url: "/api/v1/events", headers }, status: 200 }, "request");
  // Colours depend on the terminal running the tests; the text does not.
  return stripVTControlCharacters(written);
}

describe("log format", () => {
  it("writes one readable line on a terminal: time, level, message and fields", () => {
    const written = logRequest({ LOG_LEVEL: "info" }, true);
    expect(written.endsWith("\n")).toBe(true);
    expect(written.trimEnd().split("\n")).toHaveLength(1);
    expect(written).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: request \{.*"status":200/);
    expect(written).not.toMatch(/"pid"|"hostname"/);
    expect(() => JSON.parse(written)).toThrow();
  });

  it("writes JSON when the output is not a terminal", () => {
    const written = logRequest({ LOG_LEVEL: "info" }, false);
    expect(written.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(written)).toMatchObject({ level: 30, msg: "request", status: 200 });
  });

  it("follows LOG_FORMAT over the terminal", () => {
    expect(() => JSON.parse(logRequest({ LOG_LEVEL: "info", LOG_FORMAT: "json" }, true))).not.toThrow();
    expect(logRequest({ LOG_LEVEL: "info", LOG_FORMAT: "pretty" }, false)).toMatch(/ INFO: request /);
  });

  it.each([true, false])("redacts the key and authorization headers (terminal: %s)", (isTTY) => {
    const written = logRequest({ LOG_LEVEL: "info" }, isTTY);
    expect(written).not.toContain(SECRET);
    expect(written).toContain('"x-api-key":"[redacted]"');
    expect(written).toContain('"authorization":"[redacted]"');
    expect(written).toContain('"accept":"application/json"');
  });

  it("respects LOG_LEVEL in both formats", () => {
    expect(logRequest({ LOG_LEVEL: "warn" }, true)).toBe("");
    expect(logRequest({ LOG_LEVEL: "warn" }, false)).toBe("");
  });

  it("refuses an unknown LOG_FORMAT, naming the setting", () => {
    expect(() => loadConfig({}, { LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT \(flag --log-format\)/);
    expect(loadConfig({}, {}).LOG_FORMAT).toBeUndefined();
  });
});
