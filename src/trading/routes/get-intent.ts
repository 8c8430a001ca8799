/** GET /intent — a declarative trade's quote and, with `userPublicKey`, its open transaction to sign. */

import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { IntentQuoteResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { TradingBook } from "../book.js";
import { type IntentDesk, MIN_FEE_BUDGET } from "../orders/intents.js";
import { parseOrderRequest } from "./order-params.js";

const text = (description: string) => z.string().optional().meta({ description });

const IntentQuery = z.object({
  inputMint: z.string().meta({ description: "Mint of the token given" }),
  outputMint: z.string().meta({ description: "Mint of the token received" }),
  amount: z.string().meta({ description: "Input amount in the input token's smallest unit" }),
  userPublicKey: text("The user's wallet; the response then carries the open transaction to sign"),
  slippageBps: text('Allowed slippage in basis points (0–10000) or "auto"'),
  priceImpactTolerancePct: text("Largest price impact accepted, in whole percent (default 25)"),
  feeBudget: text(
    `Lamports the user puts up for settling the order (at least ${MIN_FEE_BUDGET}, the default); all but the fees come back`,
  ),
});

/** Registers `GET /intent`. */
export function getIntent(app: ZodApp, book: TradingBook, intents: IntentDesk): void {
  app.get(
    "/intent",
    {
      schema: {
        operationId: "intent",
        tags: ["Intent"],
        summary: "Quote a declarative trade and get its open transaction",
        querystring: IntentQuery,
        response: { 200: IntentQuoteResponse, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const order = parseOrderRequest(request.query, book.venues());
      const intent = await intents.intent({ ...order, feeBudget: feeBudget(request.query.feeBudget) });
      return sendJson(reply, JSON.stringify(intent));
    },
  );
}

const U64_MAX = 2n ** 64n - 1n;

function feeBudget(value: string | undefined): bigint {
  if (value === undefined) return MIN_FEE_BUDGET;
  if (!/^\d{1,20}$/.test(value) || BigInt(value) > U64_MAX) {
    throw new ApiError(
      "bad_request",
      `feeBudget must be an integer number of lamports from ${MIN_FEE_BUDGET} to ${U64_MAX}, got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  const lamports = BigInt(value);
  if (lamports < MIN_FEE_BUDGET) {
    throw new ApiError(
      "requested_fee_budget_too_low",
      `feeBudget must be at least ${MIN_FEE_BUDGET} lamports, got ${lamports}`,
    );
  }
  return lamports;
}
