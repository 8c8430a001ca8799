/**
 * Zod schemas shared by the trade API's operations (documentation of their responses), and the types
 * the trading code builds those responses as.
 */
import { z } from "zod";

export const Mint = z
  .string()
  .meta({ description: "Base58 mint address", example: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" });

export const RoutePlanLeg = z
  .object({
    venue: z.string(),
    marketKey: z.string(),
    inputMint: Mint,
    outputMint: Mint,
    inAmount: z.string(),
    outAmount: z.string(),
    inputMintDecimals: z.number().int(),
    outputMintDecimals: z.number().int(),
  })
  .meta({ id: "RoutePlanLeg" });
export type RoutePlanLeg = z.infer<typeof RoutePlanLeg>;

export const OrderResponse = z
  .object({
    inputMint: Mint,
    inAmount: z.string().meta({ description: "Maximum input, in the input token's smallest unit" }),
    outputMint: Mint,
    outAmount: z.string().meta({ description: "Expected output after all fees" }),
    otherAmountThreshold: z
      .string()
      .meta({ description: "Minimum output after fees, enforced by the transaction" }),
    minOutAmount: z.string(),
    slippageBps: z.number().int(),
    priceImpactPct: z.string().meta({ description: 'A fraction: "0.01" is 1%' }),
    contextSlot: z.number().int(),
    executionMode: z.enum(["sync", "async"]),
    platformFee: z
      .object({ amount: z.string(), feeBps: z.number().int(), mode: z.enum(["outputMint", "inputMint"]) })
      .nullable(),
    routePlan: z.array(RoutePlanLeg),
    revertMint: Mint.optional().meta({
      description: "Async orders: the mint returned if the order cannot fill",
    }),
    predictionMarketSlippageBps: z.number().int().optional(),
    transaction: z
      .string()
      .optional()
      .meta({ description: "Base64 v0 transaction signed by the venue's pools; with userPublicKey" }),
    lastValidBlockHeight: z.number().int().optional(),
    computeUnitLimit: z.number().int().optional(),
    prioritizationFeeLamports: z.number().int().optional(),
    prioritizationType: z
      .object({
        computeBudget: z.object({
          microLamports: z.number().int(),
          estimatedMicroLamports: z.number().int().nullable(),
        }),
      })
      .optional(),
    addressLookupTables: z
      .array(z.object({ address: Mint, addresses: z.record(z.string(), Mint) }))
      .optional()
      .meta({
        description:
          "With includeAddressLookupTables: the tables the transaction loads, and the entries it uses",
      }),
    initPredictionMarketCost: z
      .number()
      .int()
      .optional()
      .meta({ description: "Lamports the transaction pays to initialize the market" }),
    predictionMarketInitPayerMustSign: z.boolean().optional(),
    isNativePredictionMarketOutput: z.boolean().optional(),
  })
  .meta({ id: "OrderResponse" });
export type OrderResponse = z.infer<typeof OrderResponse>;

export const IntentQuoteResponse = z
  .object({
    inputMint: Mint,
    inAmount: z.string(),
    outputMint: Mint,
    outAmount: z.string(),
    otherAmountThreshold: z.string(),
    minOutAmount: z.string(),
    slippageBps: z.number().int(),
    feeBudget: z.number().int().meta({ description: "Lamports put up for settling the order" }),
    priceImpactPct: z.string(),
    openTransaction: z
      .string()
      .optional()
      .meta({ description: "Base64 open transaction for the user to sign" }),
    lastValidBlockHeight: z.number().int().optional(),
    expiry: z.object({ slotsAfterOpen: z.number().int() }).optional(),
  })
  .meta({ id: "IntentQuoteResponse" });
export type IntentQuoteResponse = z.infer<typeof IntentQuoteResponse>;

export const SubmitIntentResponse = z
  .object({ programId: z.string(), orderAddress: z.string(), openTransactionSignature: z.string() })
  .meta({ id: "IntentSwapResponse" });
export type SubmitIntentResponse = z.infer<typeof SubmitIntentResponse>;

export const OrderStatusResponse = z
  .object({
    status: z.enum(["pending", "expired", "failed", "open", "pendingClose", "closed"]),
    inAmount: z.string(),
    outAmount: z.string(),
    fills: z
      .array(
        z.object({
          signature: z.string(),
          inputMint: z.string(),
          inAmount: z.string(),
          outputMint: z.string(),
          outAmount: z.string(),
        }),
      )
      .optional(),
    reverts: z.array(z.object({ signature: z.string(), mint: z.string(), amount: z.string() })).optional(),
  })
  .meta({ id: "OrderStatusResponse" });
export type OrderStatusResponse = z.infer<typeof OrderStatusResponse>;
