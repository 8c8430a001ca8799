/**
 * What a client sends for the trade API's query parameters that their routes take as text and parse
 * themselves (`trading/routes/order-params.ts`), so that they can refuse each with its reference code:
 * the types the reference's published document gives them (dflow-trade-openapi.json), which the
 * venue's documents publish in their place. A route's own zod schema decides for every other parameter.
 */

const integer = (format: "int32" | "int64") => ({ type: "integer", format, minimum: 0 }) as const;
const boolean = { type: "boolean" } as const;
const slippage = {
  oneOf: [
    { type: "integer", format: "int32", minimum: 0, description: "Basis points" },
    { type: "string", enum: ["auto"], description: "Chosen by the venue" },
  ],
} as const;

/** By parameter name: `/order`, `/quote`, `/intent` and `/order-status` give each name one meaning. */
export const TEXT_QUERY_TYPES: Readonly<Partial<Record<string, Readonly<Record<string, unknown>>>>> = {
  amount: integer("int64"),
  slippageBps: slippage,
  predictionMarketSlippageBps: slippage,
  perLegSlippage: boolean,
  priceImpactTolerancePct: integer("int32"),
  onlyDirectRoutes: boolean,
  maxRouteLength: integer("int32"),
  onlyJitRoutes: boolean,
  forJitoBundle: boolean,
  allowSyncExec: boolean,
  allowAsyncExec: boolean,
  restrictRevertMint: boolean,
  platformFeeMode: { type: "string", enum: ["outputMint", "inputMint"] },
  platformFeeBps: integer("int32"),
  platformFeeScale: integer("int32"),
  positiveSlippageLimitPct: integer("int32"),
  sponsorExec: boolean,
  sponsoredSwap: boolean,
  destinationSwap: boolean,
  wrapAndUnwrapSol: boolean,
  prioritizationFeeLamports: {
    oneOf: [
      { type: "string", enum: ["auto", "medium", "high", "veryHigh", "disabled"] },
      { type: "integer", format: "int32", minimum: 0 },
    ],
  },
  prioritizationFeeMaxLamports: integer("int32"),
  computeUnitPriceMicroLamports: integer("int64"),
  dynamicComputeUnitLimit: boolean,
  includeJitoSandwichMitigationAccount: boolean,
  skipPumpfunCashbackClaim: boolean,
  allowBondingCurveUnderconsumption: boolean,
  includeAddressLookupTables: boolean,
  maxAccounts: integer("int32"),
  maxTransactionSize: integer("int32"),
  reserveAccounts: integer("int32"),
  reserveTransactionSize: integer("int32"),
  feeBudget: integer("int64"),
  maxAutoFeeBudget: integer("int64"),
  lastValidBlockHeight: integer("int64"),
};
