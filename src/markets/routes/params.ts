/** Query and response schemas shared by the prediction-market routes. */
import { z } from "zod";
import { MarketStatus, SORT_KEYS } from "../../contract/markets.js";

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

/** An integer query parameter within bounds. */
export const integerParam = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, { error: `${name} must be an integer from ${min} to ${max}` })
    .transform(Number)
    .refine((value) => value >= min && value <= max, {
      error: `${name} must be an integer from ${min} to ${max}`,
    });

/** A comma-separated list of non-empty items, at most `max` of them. */
export const commaList = (name: string, max: number) =>
  z
    .string()
    .transform((value) => value.split(",").map((item) => item.trim()))
    .refine((items) => items.every((item) => item.length > 0), {
      error: `${name} must be a comma-separated list without blank items`,
    })
    .refine((items) => items.length <= max, { error: `${name} takes at most ${max} values` });

export const paging = {
  limit: integerParam("limit", 1, 200).optional().default(100),
  cursor: integerParam("cursor", 0, Number.MAX_SAFE_INTEGER).optional().default(0),
};

export const sorting = {
  sort: z.enum(SORT_KEYS, { error: `sort must be one of ${SORT_KEYS.join(", ")}` }).optional(),
  order: z.enum(["asc", "desc"], { error: "order must be asc or desc" }).optional(),
};

export const statusParam = MarketStatus.optional().meta({ description: "Market status" });

/** Returns a page of `items` starting at the cursor offset and the next cursor (null on the last page). */
export function page<T>(
  items: readonly T[],
  cursor: number,
  limit: number,
): { items: readonly T[]; next: number | null } {
  const slice = items.slice(cursor, cursor + limit);
  const end = cursor + slice.length;
  return { items: slice, next: end < items.length ? end : null };
}
