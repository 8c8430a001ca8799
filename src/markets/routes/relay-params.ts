/** Query schemas of the relayed operations (forecast history, candlesticks, trades) and their reply. */
import type { FastifyReply } from "fastify";
import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { sendReusedBody } from "../../http/reused-bodies.js";
import type { UpstreamAnswer } from "../../upstream/client.js";
import { MAX_CANDLES, MAX_MILESTONE_IDS, MILESTONE_ID, rfc3339Seconds } from "../../upstream/relay.js";
import { integerParam, unixSecondsParam } from "./params.js";

const MAX_PERCENTILES = 10;
const PERCENTILE = /^\d{1,5}$/;

/** 1–10 comma-separated integers in 0..10000, no blanks, no repeats. */
const percentilesParam = z
  .string()
  .transform((value, ctx) => {
    const items = value.split(",").map((item) => item.trim());
    if (items.some((item) => item === "")) {
      ctx.addIssue({
        code: "custom",
        message: "percentiles must be a comma-separated list without blank items",
      });
      return z.NEVER;
    }
    if (items.length > MAX_PERCENTILES) {
      ctx.addIssue({
        code: "custom",
        message: `percentiles takes at most ${MAX_PERCENTILES} values, got ${items.length}`,
      });
      return z.NEVER;
    }
    const numbers: number[] = [];
    for (const item of items) {
      const number = Number(item);
      if (!PERCENTILE.test(item) || number > 10_000) {
        ctx.addIssue({
          code: "custom",
          message: `percentiles must be integers from 0 to 10000, got ${item}`,
        });
        return z.NEVER;
      }
      if (numbers.includes(number)) {
        ctx.addIssue({ code: "custom", message: `percentiles must not repeat a value, got ${item} twice` });
        return z.NEVER;
      }
      numbers.push(number);
    }
    return numbers;
  })
  .meta({
    description: "Comma-separated percentiles in basis points (0–10000), at most 10",
    example: "2500,5000,7500",
  });

const FORECAST_INTERVALS = [0, 1, 60, 1440] as const;
const CANDLE_INTERVALS = [1, 60, 1440] as const;

const intervalParam = (allowed: readonly number[]) =>
  z
    .string()
    .refine((value) => /^\d{1,4}$/.test(value) && allowed.includes(Number(value)), {
      error: (issue) =>
        `periodInterval must be one of ${allowed.join(", ")} (minutes), got ${String(issue.input)}`,
    })
    .transform(Number);

const startBeforeEnd = <T extends { startTs: number; endTs: number }>(q: T, ctx: z.RefinementCtx) => {
  if (q.startTs > q.endTs) {
    ctx.addIssue({
      code: "custom",
      path: ["startTs"],
      message: `startTs must not be after endTs, got ${q.startTs} > ${q.endTs}`,
    });
  }
};

export const ForecastQuery = z
  .object({
    percentiles: percentilesParam,
    startTs: unixSecondsParam("startTs"),
    endTs: unixSecondsParam("endTs"),
    periodInterval: intervalParam(FORECAST_INTERVALS).meta({
      description: "Period in minutes: 0 (5-second buckets), 1, 60 or 1440",
    }),
  })
  .superRefine(startBeforeEnd);

export const CandleQuery = z
  .object({
    startTs: unixSecondsParam("startTs"),
    endTs: unixSecondsParam("endTs"),
    periodInterval: intervalParam(CANDLE_INTERVALS).meta({ description: "Period in minutes: 1, 60 or 1440" }),
  })
  .superRefine(startBeforeEnd)
  .superRefine((q, ctx) => {
    const candles = Math.floor((q.endTs - q.startTs) / (q.periodInterval * 60)) + 1;
    if (candles > MAX_CANDLES) {
      ctx.addIssue({
        code: "custom",
        path: ["endTs"],
        message: `the range asks for ${candles} candles; at most ${MAX_CANDLES} per request`,
      });
    }
  });

export const TradesQuery = {
  limit: integerParam("limit", 1, 1000).optional().default(100),
  cursor: z.string().min(1).max(128).optional().meta({
    description:
      "A trade id: the page continues after that trade (the previous page's cursor is its last trade's id; a Kalshi upstream's opaque cursor is passed through as it is, and one beginning `a:` goes on in the venue's archive)",
  }),
  minTs: unixSecondsParam("minTs").optional(),
  maxTs: unixSecondsParam("maxTs").optional(),
};

/** A relayed body, sent exactly as the upstream sent it (its bytes and content type). */
export const RelayedBody = z.unknown().meta({ description: "The upstream exchange's body, unchanged" });

/** The answers of a relayed operation: `body`, or an error of ours or of the upstream. */
export function relayedResponses<T extends z.ZodType>(body: T) {
  return { 200: body, 400: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody };
}

/** The answers of an operation that relays the upstream's body unchanged. */
export const RELAYED_RESPONSES = relayedResponses(RelayedBody);

/** Sends an upstream answer unchanged (a cached one compressed when the client accepts it). */
export function sendUpstream(reply: FastifyReply, answer: UpstreamAnswer): FastifyReply {
  const contentType = answer.contentType || "application/json";
  if (answer.cached) return sendReusedBody(reply, answer.body, contentType);
  return reply.type(contentType).send(answer.body);
}

/**
 * `milestoneIds`: 1–100 ids, as repeated keys (`milestoneIds=a&milestoneIds=b`) or one comma-separated
 * list, or both; no blanks, no repeats.
 */
export const milestoneIdsParam = z
  .union([z.string(), z.array(z.string())], {
    error: "milestoneIds is required: 1 to 100 milestone ids, repeated or comma-separated",
  })
  .transform((value, ctx) => {
    const items = (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(","));
    if (items.length > MAX_MILESTONE_IDS) {
      ctx.addIssue({
        code: "custom",
        message: `milestoneIds takes at most ${MAX_MILESTONE_IDS} ids, got ${items.length}`,
      });
      return z.NEVER;
    }
    const ids: string[] = [];
    for (const raw of items) {
      const id = raw.trim();
      if (!MILESTONE_ID.test(id)) {
        ctx.addIssue({
          code: "custom",
          message:
            id === ""
              ? "milestoneIds must not hold a blank id"
              : `milestoneIds must be ids of letters, digits, '.', '_', ':' or '-', at most 128 characters, got ${JSON.stringify(id.slice(0, 40))}${id.length > 40 ? "..." : ""}`,
        });
        return z.NEVER;
      }
      if (ids.includes(id)) {
        ctx.addIssue({ code: "custom", message: `milestoneIds must not repeat an id, got ${id} twice` });
        return z.NEVER;
      }
      ids.push(id);
    }
    return ids;
  })
  .meta({
    description: `Milestone ids (at most ${MAX_MILESTONE_IDS}), repeated or comma-separated`,
    example: "5f0c1a2e-7b1d-4a57-9c1e-0b8f3e2d9a10",
  });

/** A free-text milestone filter: 1–128 characters, no control characters. */
const milestoneFilterParam = (name: string, description: string) =>
  z
    .string()
    .min(1, { error: `${name} must not be empty` })
    .max(128, { error: `${name} must be at most 128 characters` })
    .refine((value) => !/\p{Cc}/u.test(value), { error: `${name} must not contain control characters` })
    .meta({ description });

/** The reference's filters of an event's milestones (live data by event and by mint). */
export const MilestoneFilterQuery = {
  minimumStartDate: z
    .string()
    .max(40, { error: "minimumStartDate must be an RFC3339 timestamp, e.g. 2026-11-22T00:00:00Z" })
    .transform((value, ctx) => {
      const seconds = rfc3339Seconds(value);
      if (seconds === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `minimumStartDate must be an RFC3339 timestamp, e.g. 2026-11-22T00:00:00Z, got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
    })
    .optional()
    .meta({ description: "Only milestones starting at or after this moment (RFC3339)" }),
  category: milestoneFilterParam("category", "Milestone category, e.g. Sports").optional(),
  competition: milestoneFilterParam("competition", "Competition, e.g. NBA").optional(),
  sourceId: milestoneFilterParam("sourceId", "Source id of the milestone").optional(),
  type: milestoneFilterParam("type", "Milestone type, e.g. basketball_game").optional(),
};
