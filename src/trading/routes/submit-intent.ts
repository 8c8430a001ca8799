/**
 * POST /submit-intent — the signed open transaction of an intent, with its quote unchanged; the
 * venue checks both, sends the transaction and settles the order (interface operation 5).
 */

import { z } from "zod";
import { ErrorBody, type ErrorCode } from "../../contract/errors.js";
import { IntentQuoteResponse, SubmitIntentResponse } from "../../contract/trade.js";
import type { ZodApp } from "../../http/types.js";
import type { IntentDesk, IntentQuoteResponse as IntentQuote } from "../prediction/intents.js";

const SubmitIntentBody = z.object({
  quoteResponse: IntentQuoteResponse,
  signedOpenTransaction: z
    .string()
    .min(1)
    .max(4_096)
    .meta({ description: "The open transaction, signed, base64" }),
});

/**
 * The reference code a body field is refused with when it is missing or malformed, by its path (the
 * most specific one listed applies; "" is the body itself). The quote's terms are what the open
 * instruction carries, so a field without a code of its own is `invalid_open_instruction_data`.
 */
export const SUBMIT_INTENT_FIELD_CODES: Readonly<Record<string, ErrorCode>> = {
  "": "invalid_open_transaction",
  signedOpenTransaction: "invalid_open_transaction",
  quoteResponse: "invalid_open_instruction_data",
  "quoteResponse.inputMint": "invalid_input_mint",
  "quoteResponse.outputMint": "invalid_output_mint",
  "quoteResponse.inAmount": "invalid_in_amount",
  "quoteResponse.outAmount": "invalid_out_amount",
  "quoteResponse.otherAmountThreshold": "invalid_out_amount",
  "quoteResponse.minOutAmount": "invalid_out_amount",
  "quoteResponse.openTransaction": "invalid_open_transaction",
};

/** Registers `POST /submit-intent`. */
export function submitIntent(app: ZodApp, intents: IntentDesk): void {
  app.post(
    "/submit-intent",
    {
      schema: {
        operationId: "submit_intent_handler",
        tags: ["intent"],
        summary: "Submit a signed intent",
        body: SubmitIntentBody,
        response: { 200: SubmitIntentResponse, 400: ErrorBody },
      },
    },
    async (request) =>
      intents.submit(request.body.quoteResponse as IntentQuote, request.body.signedOpenTransaction),
  );
}
