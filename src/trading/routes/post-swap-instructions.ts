/**
 * POST /swap-instructions — the reference's deprecated imperative swap as instructions (§6.2): the
 * transaction `/swap` issues, in groups (compute budget, setup, swap, cleanup), with the blockhash and
 * the pools' signatures over the message a `@solana/kit` client assembles from them in that order
 * (see `swap-instructions.ts`).
 */
import { ErrorBody } from "../../contract/errors.js";
import { SwapInstructionsResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { clientOf } from "./order-params.js";
import { SwapRequest, swapOrderRequest } from "./swap-request.js";

/** Registers `POST /swap-instructions`. */
export function postSwapInstructions(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.post(
    "/swap-instructions",
    {
      schema: {
        operationId: "swap_instructions_handler",
        tags: ["swap"],
        summary: "Get the instructions of a quote's swap (deprecated: use GET /order)",
        body: SwapRequest,
        response: { 200: SwapInstructionsResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const order = await desk.swap(
        swapOrderRequest(request.body, book.venues()),
        clientOf(request),
        "instructions",
      );
      const set = order.instructionSet;
      if (!set) throw new Error("a swap issued as instructions carries them");
      const response: SwapInstructionsResponse = {
        computeBudgetInstructions: set.computeBudgetInstructions,
        setupInstructions: set.setupInstructions,
        swapInstruction: set.swapInstruction,
        cleanupInstructions: set.cleanupInstructions,
        otherInstructions: [],
        // The venue's transactions load no lookup tables.
        addressLookupTableAddresses: [],
        prioritizationFeeLamports: order.prioritizationFeeLamports,
        computeUnitLimit: order.computeUnitLimit,
        prioritizationType: order.prioritizationType,
        blockhashWithMetadata: { blockhash: set.blockhash, lastValidBlockHeight: order.lastValidBlockHeight },
        venueSignatures: set.venueSignatures,
      };
      return sendJson(reply, JSON.stringify(response));
    },
  );
}
