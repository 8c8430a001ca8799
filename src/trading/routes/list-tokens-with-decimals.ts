/** GET /tokens-with-decimals — `[mint, decimals]` of every mint that had a pool (interface operation 2). */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { Mint } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { TradingBook } from "../spot/trading-book.js";
import { registry } from "./list-tokens.js";

/** Registers `GET /tokens-with-decimals`. */
export function listTokensWithDecimals(app: ZodApp, book: TradingBook): void {
  app.get(
    "/tokens-with-decimals",
    {
      schema: {
        operationId: "tokens_with_decimals_handler",
        tags: ["tokens"],
        summary: "Every mint that had a pool at least once, with its decimals",
        response: { 200: z.array(z.tuple([Mint, z.number().int()])), 503: ErrorBody },
      },
    },
    async (_request, reply) => sendJson(reply, registry(book).tokensWithDecimalsJson),
  );
}
