/**
 * GET /api/v1/onchain-trades — the prediction-market fills this venue settled on its chain, newest
 * first unless asked otherwise; filtered by wallet and size, paged by trade-id cursor.
 */
import { z } from "zod";
import { isAddressText } from "../../chain/base58.js";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import type { ZodApp } from "../../http/types.js";
import type { CatalogHolder } from "../catalog-holder.js";
import {
  ONCHAIN_TRADE_SORTS,
  type OnchainTradePage,
  type OnchainTradeQuery,
  type OnchainTrades,
  UnknownTradeCursorError,
} from "../onchain-trades.js";
import { integerParam } from "./params.js";

/** The reference's bounds on a page of on-chain trades. */
const MAX_LIMIT = 250;

/** The query every `/onchain-trades` route takes. */
export const OnchainTradesQuery = z.object({
  limit: integerParam("limit", 1, MAX_LIMIT)
    .optional()
    .default(100)
    .meta({ description: `Trades per page, 1–${MAX_LIMIT} (default 100)` }),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, { error: "cursor must be a trade id: the cursor an earlier page returned" })
    .transform(Number)
    .optional()
    .meta({ description: "The id of the trade the page starts with: the cursor the page before returned" }),
  wallet: z
    .string()
    .max(64, { error: "wallet must be a wallet address (base58 of 32 bytes)" })
    .refine(isAddressText, { error: "wallet must be a wallet address (base58 of 32 bytes)" })
    .optional()
    .meta({ description: "Only the trades of this wallet" }),
  minAmount: integerParam("minAmount", 0, Number.MAX_SAFE_INTEGER).optional().meta({
    description:
      "Only trades worth at least this much: contracts × price in the settlement mint's smallest unit (micro-USDC), the fee aside",
  }),
  sortBy: z
    .enum(ONCHAIN_TRADE_SORTS, { error: `sortBy must be one of ${ONCHAIN_TRADE_SORTS.join(", ")}` })
    .optional()
    .default("createdAt")
    .meta({
      description:
        "createdAt (default), amount (the trade's worth, as minAmount reads it) or contracts; ties go by id",
    }),
  sortOrder: z
    .enum(["asc", "desc"], { error: "sortOrder must be asc or desc" })
    .optional()
    .default("desc")
    .meta({ description: "desc (default) or asc" }),
});
export type OnchainTradesQuery = z.infer<typeof OnchainTradesQuery>;

export const OnchainTrade = z
  .object({
    id: z.number().int(),
    wallet: z.string(),
    transactionSignature: z.string(),
    inputMint: z.string(),
    outputMint: z.string(),
    inputAmount: z.number().int(),
    outputAmount: z.number().int(),
    createdAt: z.number().int(),
    marketTicker: z.string().nullable(),
    side: z.enum(["yes", "no"]).nullable(),
    contracts: z.number(),
    usdPricePerContract: z.number(),
    feeAmount: z.number().int(),
    feeMint: z.string(),
    orderAccount: z.string(),
  })
  .meta({ id: "OnchainTrade" });
export const OnchainTradePageSchema = z.object({
  trades: z.array(OnchainTrade),
  cursor: z.string().nullable(),
});

/**
 * A page of trades for `query` (narrowed to `outcomeMints` when given); a cursor naming no trade is
 * the caller's mistake.
 */
export async function onchainTradePage(
  trades: OnchainTrades,
  catalog: CatalogHolder,
  query: OnchainTradesQuery,
  outcomeMints?: readonly string[],
): Promise<OnchainTradePage> {
  const { cursor, wallet, minAmount, ...rest } = query;
  const wanted: OnchainTradeQuery = {
    ...rest,
    ...(cursor !== undefined ? { cursor } : {}),
    ...(wallet !== undefined ? { wallet } : {}),
    ...(minAmount !== undefined ? { minAmount } : {}),
    ...(outcomeMints ? { outcomeMints } : {}),
  };
  try {
    return await trades.page(catalog.require(), wanted);
  } catch (error) {
    if (error instanceof UnknownTradeCursorError) throw new ApiError("bad_request", error.message);
    throw error;
  }
}

export function listOnchainTrades(app: ZodApp, catalog: CatalogHolder, trades: OnchainTrades): void {
  app.get(
    "/onchain-trades",
    {
      schema: {
        operationId: "onchain_trades",
        tags: ["Trades"],
        summary: "Get list of onchain fills",
        description:
          "The prediction-market fills this venue settled on its chain: buys and sales of outcome tokens against their settlement mint.",
        querystring: OnchainTradesQuery,
        response: { 200: OnchainTradePageSchema, 400: ErrorBody },
      },
    },
    async (request) => onchainTradePage(trades, catalog, request.query),
  );
}
