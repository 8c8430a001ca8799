/**
 * Links made from catalogue data (an event's settlement sources): the catalogue comes from the
 * upstream exchange, so its URLs are not trusted to be web pages. Only an absolute http: or https:
 * URL becomes a link; anything else (`javascript:`, `data:`, a relative path) is shown as plain text.
 */

/** `url` as an href when it is an absolute http: or https: URL, else undefined (render plain text). */
export function webHref(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  let parsed: URL;
  try {
    // Parsed as a browser would: leading blanks, tabs and newlines inside, and letter case do not hide a scheme.
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : undefined;
}
