/** GET /priority-fees — the current priority fee levels, from what recent transactions paid (reference §7). */
import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { PriorityFeeEstimator } from "../streams/priority-fees.js";

const level = (name: string) =>
  z
    .number()
    .int()
    .min(0)
    .meta({ description: `Micro-lamports per compute unit for the ${name} priority level` });

/** The levels, as `GET /priority-fees` and every `/priority-fees/stream` frame carry them. */
export const PriorityFeesResponse = z
  .object({
    mediumMicroLamports: level("medium"),
    highMicroLamports: level("high"),
    veryHighMicroLamports: level("very high"),
  })
  .meta({
    id: "PriorityFeesResponse",
    description:
      "Priority fee estimates per level: the 50th, 75th and 95th percentiles of the compute-unit prices recent transactions paid, each at least a small floor",
  });

/** Registers `GET /priority-fees`; until the chain has been read once it answers 503 `not_ready`. */
export function getPriorityFees(app: ZodApp, fees: PriorityFeeEstimator): void {
  app.get(
    "/priority-fees",
    {
      schema: {
        operationId: "priority_fees_handler",
        tags: ["swap"],
        summary: "Priority fee levels from what recent transactions paid",
        response: { 200: PriorityFeesResponse, 503: ErrorBody },
      },
    },
    async () => {
      if (!fees.ready)
        throw new ApiError("not_ready", "the priority fee levels are still being read; retry shortly");
      return fees.levels();
    },
  );
}
