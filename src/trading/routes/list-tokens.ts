/** GET /tokens — every mint that had a pool at least once, as a list of addresses. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { Mint } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { TradingBook } from "../spot/trading-book.js";

/** Registers `GET /tokens`. */
export function listTokens(app: ZodApp, book: TradingBook): void {
  app.get(
    "/tokens",
    {
      schema: {
        operationId: "tokens_handler",
        tags: ["tokens"],
        summary: "Every mint that had a pool at least once",
        response: { 200: z.array(Mint), 503: ErrorBody },
      },
    },
    async (_request, reply) => sendJson(reply, registry(book).tokensJson),
  );
}

/** The book, once its token registry has loaded; 503 `mint_info_not_initialized` before. */
export function registry(book: TradingBook): TradingBook {
  if (!book.loaded)
    throw new ApiError("mint_info_not_initialized", "the token registry is still loading; retry shortly");
  return book;
}
