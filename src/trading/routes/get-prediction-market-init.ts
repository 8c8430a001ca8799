/**
 * GET /prediction-market-init — the transaction initializing a prediction market (its ledger and
 * outcome mints), paid and signed by `payer`; after it lands the venue initializes the market.
 */
import { z } from "zod";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import { type MarketInitDesk, MarketInitRefused } from "../prediction/market-init.js";
import { clientOf } from "./order-params.js";

/** Both required, as the reference has them; missing, each is refused with its own code (routes/errors.ts). */
const PredictionMarketInitQuery = z.object({
  payer: z.string().meta({ description: "Wallet that pays the initialization and signs, base58" }),
  outcomeMint: z.string().meta({ description: "The yes or no mint of the market to initialize, base58" }),
});

const PredictionMarketInitResponse = z
  .object({
    transaction: z.string().meta({ description: "Base64 transaction; the payer signs it and sends it" }),
    lastValidBlockHeight: z
      .number()
      .int()
      .meta({ description: "Last block height its blockhash is valid at" }),
    computeUnitLimit: z.number().int().meta({ description: "Compute units it asks for" }),
  })
  .meta({ id: "PredictionMarketInitResponse" });

/** Registers `GET /prediction-market-init`; without the initialization desk it answers 503 `not_ready`. */
export function getPredictionMarketInit(app: ZodApp, marketInit: MarketInitDesk | undefined): void {
  app.get(
    "/prediction-market-init",
    {
      schema: {
        operationId: "prediction_market_init_handler",
        tags: ["prediction_market"],
        summary: "Transaction initializing a prediction market",
        querystring: PredictionMarketInitQuery,
        response: { 200: PredictionMarketInitResponse, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      if (!marketInit) throw new ApiError("not_ready", "this venue does not initialize prediction markets");
      try {
        return await marketInit.initTransaction(
          request.query.payer,
          request.query.outcomeMint,
          clientOf(request),
        );
      } catch (error) {
        if (error instanceof MarketInitRefused) throw new ApiError(error.reason, error.message);
        throw error;
      }
    },
  );
}
