/** GET /venues — the names of this deployment's venues, as `dexes` and `excludeDexes` take them. */
import { z } from "zod";
import type { ZodApp } from "../../http/types.js";
import type { TradingBook } from "../spot/trading-book.js";

/** Registers `GET /venues`. */
export function listVenues(app: ZodApp, book: TradingBook): void {
  app.get(
    "/venues",
    {
      schema: {
        operationId: "venues_handler",
        tags: ["venues"],
        summary: "Venue names",
        response: { 200: z.array(z.string()) },
      },
    },
    async () => book.venues(),
  );
}
