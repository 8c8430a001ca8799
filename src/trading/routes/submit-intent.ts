/**
 * POST /submit-intent — the signed open transaction of an intent, with its quote unchanged; the
 * venue checks both, sends the transaction and settles the order (interface operation 5).
 */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { IntentQuoteResponse, SubmitIntentResponse } from "../../contract/trade.js";
import type { ZodApp } from "../../http/types.js";
import type { IntentDesk, IntentQuoteResponse as IntentQuote } from "../orders/intents.js";

const SubmitIntentBody = z.object({
  quoteResponse: IntentQuoteResponse,
  signedOpenTransaction: z
    .string()
    .min(1)
    .max(4_096)
    .meta({ description: "The open transaction, signed, base64" }),
});

/** Registers `POST /submit-intent`. */
export function submitIntent(app: ZodApp, intents: IntentDesk): void {
  app.post(
    "/submit-intent",
    {
      schema: {
        operationId: "submit_intent",
        tags: ["Intent"],
        summary: "Submit a signed intent",
        body: SubmitIntentBody,
        response: { 200: SubmitIntentResponse, 400: ErrorBody },
      },
    },
    async (request) =>
      intents.submit(request.body.quoteResponse as IntentQuote, request.body.signedOpenTransaction),
  );
}
