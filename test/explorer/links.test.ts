/**
 * The explorer links catalogue data only to web pages: an event's settlement-source URL from the
 * upstream catalogue becomes an href only when it is an absolute http: or https: URL (the page shows
 * anything else as plain text), however a `javascript:` URL is spelled.
 */
import { describe, expect, it } from "vitest";
import { webHref } from "../../web/src/links.js";

describe("webHref", () => {
  it("keeps absolute http: and https: URLs", () => {
    expect(webHref("https://www.bls.gov/cpi/")).toBe("https://www.bls.gov/cpi/");
    expect(webHref("http://example.com/a?b=c#d")).toBe("http://example.com/a?b=c#d");
    expect(webHref("HTTPS://Example.com")).toBe("https://example.com/");
  });

  it("refuses every other scheme, however it is spelled", () => {
    for (const url of [
      "javascript:alert(document.cookie)",
      "JavaScript:alert(1)",
      " javascript:alert(1)",
      "\u0000javascript:alert(1)",
      "java\tscript:alert(1)",
      "java\nscript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html,<script>alert(1)</script>",
      "file:///etc/passwd",
      "blob:https://example.com/uuid",
      "mailto:someone@example.com",
    ]) {
      expect(webHref(url), JSON.stringify(url)).toBeUndefined();
    }
  });

  it("refuses what is not an absolute URL", () => {
    for (const url of [
      "",
      "/relative",
      "//example.com/x",
      "www.example.com",
      "not a url",
      null,
      undefined,
      42,
    ]) {
      expect(webHref(url), JSON.stringify(url)).toBeUndefined();
    }
  });
});
