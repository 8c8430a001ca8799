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
    platformFee: z
      .object({
        amount: z
          .string()
          .meta({ description: "The fee at the quoted output; a fill pays feeBps of its own" }),
        feeBps: z.number().int(),
        feeAccount: z.string(),
        segmenterFeeAmount: z.string().meta({ description: "Always 0: no segmenter takes a share here" }),
        segmenterFeePct: z.number().int(),
      })
      .nullable()
      .optional(),
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

export const QuoteResponse = OrderResponse.omit({ executionMode: true })
  .pick({
    inputMint: true,
    inAmount: true,
    outputMint: true,
    outAmount: true,
    otherAmountThreshold: true,
    minOutAmount: true,
    slippageBps: true,
    priceImpactPct: true,
    contextSlot: true,
    platformFee: true,
    routePlan: true,
  })
  .extend({
    requestId: z.string().meta({ description: "Identifier of this quote" }),
    routingSlot: z.number().int().meta({ description: "Slot of the pool state the quote was priced at" }),
  })
  .meta({ id: "QuoteResponse" });
export type QuoteResponse = z.infer<typeof QuoteResponse>;

const ComputeBudgetFields = OrderResponse.pick({ prioritizationType: true }).extend({
  lastValidBlockHeight: z.number().int(),
  computeUnitLimit: z.number().int(),
  prioritizationFeeLamports: z.number().int(),
});

export const SwapResponse = ComputeBudgetFields.extend({
  swapTransaction: z
    .string()
    .meta({ description: "Base64 v0 transaction signed by the venue's pools; the user signs and sends it" }),
}).meta({ id: "SwapResponse" });
export type SwapResponse = z.infer<typeof SwapResponse>;

export const InstructionResponse = z
  .object({
    programId: z.string(),
    accounts: z.array(z.object({ pubkey: z.string(), isSigner: z.boolean(), isWritable: z.boolean() })),
    data: z.string().meta({ description: "Base64 instruction data" }),
  })
  .meta({ id: "InstructionResponse" });

export const SwapInstructionsResponse = ComputeBudgetFields.omit({ lastValidBlockHeight: true })
  .extend({
    computeBudgetInstructions: z.array(InstructionResponse),
    setupInstructions: z.array(InstructionResponse),
    swapInstruction: InstructionResponse,
    cleanupInstructions: z.array(InstructionResponse),
    otherInstructions: z.array(InstructionResponse),
    addressLookupTableAddresses: z.array(z.string()),
    blockhashWithMetadata: z.object({ blockhash: z.string(), lastValidBlockHeight: z.number().int() }),
    venueSignatures: z.record(z.string(), z.string()).meta({
      description:
        "The pools' base58 signatures over the v0 message a @solana/kit client compiles from these instructions (compute budget, setup, swap, cleanup, other, in that order), the fee payer and blockhashWithMetadata; put them in the transaction before the user signs",
    }),
  })
  .meta({ id: "SwapInstructionsResponse" });
export type SwapInstructionsResponse = z.infer<typeof SwapInstructionsResponse>;
