/** Query schemas of the relayed operations (forecast history, candlesticks, trades) and their reply. */
import type { FastifyReply } from "fastify";
import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import type { UpstreamAnswer } from "../../upstream/client.js";
import { MAX_CANDLES } from "../../upstream/relay.js";
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
  cursor: z.string().min(1).max(128).optional().meta({ description: "Trade id to continue from" }),
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

/** Sends an upstream answer unchanged. */
export function sendUpstream(reply: FastifyReply, answer: UpstreamAnswer): FastifyReply {
  return reply.type(answer.contentType || "application/json").send(answer.body);
}
