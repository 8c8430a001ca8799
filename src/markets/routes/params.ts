/** Query and response schemas shared by the prediction-market routes. */
import { z } from "zod";
import { MarketStatus, SORT_KEYS } from "../../contract/markets.js";
import { rfc3339Seconds } from "../../upstream/relay.js";

/** A strict boolean query flag: only `true` or `false` are accepted. */
export const booleanFlag = z
  .enum(["true", "false"], { error: "must be true or false" })
  .transform((value) => value === "true");

/** A non-negative integer in Unix seconds. */
export const unixSecondsParam = (name: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, { error: `${name} must be a non-negative integer (Unix seconds)` })
    .transform(Number)
    .refine((value) => value <= 1e11, {
      error: (issue) => `${name} must be Unix seconds, got ${String(issue.input)} (milliseconds?)`,
    });

/** An RFC 3339 moment (`2026-11-22T14:03:00.250Z`), as Unix milliseconds. */
export const rfc3339MsParam = (name: string) =>
  z
    .string()
    .max(40, { error: `${name} must be an RFC 3339 timestamp, e.g. 2026-11-22T14:03:00Z` })
    .transform((value, ctx) => {
      if (rfc3339Seconds(value) === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be an RFC 3339 timestamp, e.g. 2026-11-22T14:03:00Z, got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return Date.parse(value.toUpperCase());
    });

/** An integer query parameter within bounds. */
export const integerParam = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, { error: `${name} must be an integer from ${min} to ${max}` })
    .transform(Number)
    .refine((value) => value >= min && value <= max, {
      error: `${name} must be an integer from ${min} to ${max}`,
    });

/** A comma-separated list of non-empty items, at most `max` of them, each at most `itemChars` long. */
export const commaList = (name: string, max: number, itemChars = 128) =>
  z
    .string()
    // Bounded before it is split, so a huge value costs nothing to refuse.
    .max(max * (itemChars + 1), {
      error: `${name} must be at most ${max * (itemChars + 1)} characters (${max} values of up to ${itemChars})`,
    })
    .transform((value) => value.split(",").map((item) => item.trim()))
    .refine((items) => items.every((item) => item.length > 0), {
      error: `${name} must be a comma-separated list without blank items`,
    })
    .refine((items) => items.length <= max, { error: `${name} takes at most ${max} values` })
    .refine((items) => items.every((item) => item.length <= itemChars), {
      error: `${name} values must be at most ${itemChars} characters each`,
    });

/** A free-text filter value (a category name, say): 1 to 64 characters. */
export const nameParam = (name: string) =>
  z
    .string()
    .min(1, { error: `${name} must not be empty` })
    .max(64, { error: `${name} must be at most 64 characters` });

/**
 * Series filters shared by /series and /events: `category` is matched exactly, `tags` (comma-separated,
 * at most 25) match a series carrying any of them.
 */
export const seriesFilters = {
  category: nameParam("category").optional().meta({ description: "Series category, matched exactly" }),
  tags: commaList("tags", 25, 64)
    .optional()
    .meta({ description: "Comma-separated series tags (at most 25): a series carrying any of them matches" }),
};

/** Whether a series passes the `category` and `tags` filters (absent filters pass everything). */
export function seriesMatches(
  series: { category: string; tags: readonly string[] } | undefined,
  q: { category?: string | undefined; tags?: readonly string[] | undefined },
): boolean {
  if (q.category === undefined && q.tags === undefined) return true;
  if (series === undefined) return false;
  return (
    (q.category === undefined || series.category === q.category) &&
    (q.tags === undefined || q.tags.some((tag) => series.tags.includes(tag)))
  );
}

export const paging = {
  // The reference allows 0: an empty page whose cursor stays where it was (null when nothing is left).
  limit: integerParam("limit", 0, 200)
    .optional()
    .default(100)
    .meta({ description: "0–200 (default 100); 0 returns no items and the same cursor, or null at the end" }),
  cursor: integerParam("cursor", 0, Number.MAX_SAFE_INTEGER).optional().default(0),
};

export const sorting = {
  sort: z.enum(SORT_KEYS, { error: `sort must be one of ${SORT_KEYS.join(", ")}` }).optional(),
  order: z.enum(["asc", "desc"], { error: "order must be asc or desc" }).optional(),
};

export const statusParam = MarketStatus.optional().meta({ description: "Market status" });

/**
 * Returns a page of `items` starting at the cursor offset and the next cursor: null on the last page,
 * and with `limit` 0 the offset itself while items remain there, so paging on from it loses nothing.
 */
export function page<T>(
  items: readonly T[],
  cursor: number,
  limit: number,
): { items: readonly T[]; next: number | null } {
  const slice = items.slice(cursor, cursor + limit);
  const end = cursor + slice.length;
  return { items: slice, next: end < items.length ? end : null };
}
