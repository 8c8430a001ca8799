/**
 * The body of `POST /swap` and `POST /swap-instructions` (the reference's `SwapRequest`, §6.2): a
 * quote from `GET /quote` and the user's key, with `/order`'s account, fee and compute options in
 * JSON form. It becomes the `/order` request that executes the quote's route: the same venues and
 * length, its input amount, slippage and platform fee, and the quote's `otherAmountThreshold` as the
 * least output the venue may issue. Nothing else of the quote is trusted: the venue prices the route
 * again and pays what it pays now.
 */
import type { Address } from "@solana/kit";
import { z } from "zod";
import { isAddressText } from "../../chain/base58.js";
import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";
import type { OrderRequest } from "../spot/order-terms.js";
import type { OrderQuery } from "./order-params.js";
import { parseOrderRequest } from "./order-request.js";

const Text = (max: number) => z.string().max(max);
const Key = Text(64);
const Amount = Text(20).meta({ description: "An integer amount in the token's smallest unit" });

const QuoteLeg = z.object({
  venue: Text(64),
  marketKey: Key,
  inputMint: Key,
  outputMint: Key,
  inAmount: Amount,
  outAmount: Amount,
  inputMintDecimals: z.number().int().optional(),
  outputMintDecimals: z.number().int().optional(),
});

/** The fields of a `GET /quote` response that `/swap` reads; others are allowed and ignored. */
const SwapQuote = z.object({
  inputMint: Key,
  inAmount: Amount,
  outputMint: Key,
  outAmount: Amount,
  otherAmountThreshold: Amount,
  minOutAmount: Amount.optional(),
  slippageBps: z.number().int().min(0).max(10_000),
  platformFee: z
    .object({
      amount: Amount,
      feeBps: z.number().int().min(0).max(10_000),
      mode: z.enum(["outputMint", "inputMint"]).optional(),
    })
    .nullable()
    .optional(),
  // More legs than any route has is refused by count (route_too_long), not by the schema.
  routePlan: z.array(QuoteLeg).max(16),
});

const U32 = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 1);

const PrioritizationFee = z.union([
  z.enum(["auto", "disabled"]),
  U32,
  z.object({ lamports: U32 }),
  z.object({
    priorityLevelWithMaxLamports: z.object({
      priorityLevel: z.enum(["medium", "high", "veryHigh"]),
      maxLamports: U32,
    }),
  }),
  z.object({ autoMultiplier: U32.min(1).max(1_000) }),
]);

export const SwapRequest = z
  .object({
    userPublicKey: Key.meta({ description: "The user's wallet: it signs the transaction" }),
    quoteResponse: SwapQuote.meta({ description: "A GET /quote response, as returned" }),
    wrapAndUnwrapSol: z.boolean().optional(),
    feeAccount: Key.optional().meta({ description: "Token account that receives the quote's platform fee" }),
    createFeeAccount: z
      .object({ referralAccount: Key })
      .optional()
      .meta({ description: "Refused (invalid_referral_account): the Referral program does not exist here" }),
    positiveSlippage: z
      .object({ limitPct: z.number().int().min(0).max(100), feeAccount: Key.optional() })
      .optional()
      .meta({ description: "Checked; no effect: a firm quote has no positive slippage" }),
    sponsor: Key.optional(),
    sponsorExec: z.boolean().optional(),
    destinationTokenAccount: z
      .union([
        Key,
        z.object({ address: Key }),
        z.object({ associatedTokenAccount: z.object({ owner: Key }) }),
      ])
      .optional(),
    outputCloseAuthority: Key.optional(),
    dynamicComputeUnitLimit: z.boolean().optional(),
    computeUnitPriceMicroLamports: z.number().int().min(0).max(1e15).optional(),
    includeJitoSandwichMitigationAccount: z.union([z.boolean(), Key]).optional(),
    perLegSlippage: z.boolean().optional(),
    prioritizationFeeLamports: PrioritizationFee.optional(),
  })
  .meta({ id: "SwapRequest" });
export type SwapRequest = z.infer<typeof SwapRequest>;

/** The code a body field is refused with when missing or malformed (SwapBadRequestCode). */
export const SWAP_FIELD_CODES = {
  // A body that is no object carries no quote, so no route.
  "": "route_is_empty",
  userPublicKey: "invalid_user_public_key",
  quoteResponse: "invalid_route_plan_leg",
  "quoteResponse.inAmount": "invalid_out_amount",
  "quoteResponse.outAmount": "invalid_out_amount",
  "quoteResponse.otherAmountThreshold": "invalid_out_amount",
  "quoteResponse.minOutAmount": "invalid_out_amount",
  "quoteResponse.platformFee": "invalid_platform_fee_amount",
  wrapAndUnwrapSol: "invalid_route_plan_leg",
  feeAccount: "invalid_fee_account",
  createFeeAccount: "invalid_referral_account",
  positiveSlippage: "invalid_positive_slippage_fee_account",
  sponsor: "invalid_sponsor",
  sponsorExec: "invalid_sponsor",
  destinationTokenAccount: "invalid_destination_token_account",
  outputCloseAuthority: "invalid_output_close_authority",
  dynamicComputeUnitLimit: "both_priority_fee_params_specified",
  computeUnitPriceMicroLamports: "both_priority_fee_params_specified",
  prioritizationFeeLamports: "both_priority_fee_params_specified",
  includeJitoSandwichMitigationAccount: "invalid_jito_sandwich_mitigation_account",
  perLegSlippage: "invalid_route_plan_leg",
} as const satisfies Record<string, ErrorCode>;

/** Most legs a route here has. */
const MAX_ROUTE_LEGS = 2;

/** The `/order` request that executes `body`'s quote for its user; throws an `ApiError` naming what is wrong. */
export function swapOrderRequest(
  body: SwapRequest,
  venues: readonly string[],
): OrderRequest & { userPublicKey: Address } {
  const quote = body.quoteResponse;
  const plan = quote.routePlan;
  if (plan.length === 0) throw new ApiError("route_is_empty", "quoteResponse.routePlan has no legs");
  if (plan.length > MAX_ROUTE_LEGS)
    throw new ApiError(
      "route_too_long",
      `quoteResponse.routePlan has ${plan.length} legs; routes here have at most ${MAX_ROUTE_LEGS}`,
    );
  checkRoutePlan(quote);
  const threshold = amount(quote.otherAmountThreshold, "otherAmountThreshold");
  amount(quote.outAmount, "outAmount");
  const fee = quote.platformFee;
  if (fee && !/^\d{1,20}$/.test(fee.amount))
    throw new ApiError("invalid_platform_fee_amount", "quoteResponse.platformFee.amount must be an integer");
  if (body.createFeeAccount)
    throw new ApiError(
      "invalid_referral_account",
      "createFeeAccount: the Referral program does not exist on this venue; create the fee account yourself",
    );
  if (fee && fee.feeBps > 0 && !body.feeAccount)
    throw new ApiError(
      "invalid_fee_account",
      `the quote takes a platform fee of ${fee.feeBps} bps, so feeAccount (a token account of the ${fee.mode ?? "outputMint"}) is required`,
    );

  const query: OrderQuery = {
    inputMint: quote.inputMint,
    outputMint: quote.outputMint,
    amount: quote.inAmount,
    slippageBps: String(quote.slippageBps),
    userPublicKey: body.userPublicKey,
    // The route the quote priced: its venues and its length.
    dexes: [...new Set(plan.map((leg) => leg.venue))].join(","),
    maxRouteLength: String(plan.length),
    // The quote passed its own price-impact check; what binds now is its otherAmountThreshold.
    priceImpactTolerancePct: "100",
    platformFeeBps: String(fee?.feeBps ?? 0),
    platformFeeMode: fee?.mode,
    feeAccount: body.feeAccount,
    wrapAndUnwrapSol: optionalBool(body.wrapAndUnwrapSol),
    positiveSlippageFeeAccount: body.positiveSlippage?.feeAccount,
    positiveSlippageLimitPct: optionalNumber(body.positiveSlippage?.limitPct),
    sponsor: body.sponsor,
    sponsorExec: optionalBool(body.sponsorExec),
    outputCloseAuthority: body.outputCloseAuthority,
    dynamicComputeUnitLimit: optionalBool(body.dynamicComputeUnitLimit),
    computeUnitPriceMicroLamports: optionalNumber(body.computeUnitPriceMicroLamports),
    includeJitoSandwichMitigationAccount: optionalBool(
      typeof body.includeJitoSandwichMitigationAccount === "string"
        ? undefined
        : body.includeJitoSandwichMitigationAccount,
    ),
    perLegSlippage: optionalBool(body.perLegSlippage),
    ...destination(body.destinationTokenAccount),
    ...priorityQuery(body.prioritizationFeeLamports),
  };
  const destinationOwner =
    typeof body.destinationTokenAccount === "object" &&
    "associatedTokenAccount" in body.destinationTokenAccount;
  if (destinationOwner && quote.outputMint === WRAPPED_SOL_MINT && body.wrapAndUnwrapSol !== false)
    throw new ApiError(
      "invalid_destination_token_account_for_native_sol",
      "destinationTokenAccount: native SOL output has no associated token account; name the wallet as { address }",
    );
  if (typeof body.includeJitoSandwichMitigationAccount === "string")
    throw new ApiError(
      "invalid_jito_sandwich_mitigation_account",
      "includeJitoSandwichMitigationAccount: the venue's chain runs no Jito block engine; send false or nothing",
    );
  const request = parseOrderRequest(query, venues);
  const user = request.userPublicKey;
  if (!user) throw new ApiError("invalid_user_public_key", "userPublicKey is required");
  const multiplier = autoMultiplier(body.prioritizationFeeLamports);
  return {
    ...request,
    userPublicKey: user,
    minOutAmount: threshold,
    ...(request.priorityLevel && multiplier > 1
      ? { priorityLevel: { ...request.priorityLevel, multiplier } }
      : {}),
  };
}

/** The legs chain from the quote's input mint to its output mint, every mint and market a key. */
function checkRoutePlan(quote: z.infer<typeof SwapQuote>): void {
  let mint = quote.inputMint;
  for (const [index, leg] of quote.routePlan.entries()) {
    for (const key of [leg.marketKey, leg.inputMint, leg.outputMint])
      if (!isAddressText(key))
        throw new ApiError("invalid_route_plan_leg", `routePlan[${index}] names ${key}, which is no address`);
    if (leg.inputMint !== mint)
      throw new ApiError(
        "invalid_route_plan_leg",
        `routePlan[${index}] takes ${leg.inputMint}, but the route holds ${mint} there`,
      );
    mint = leg.outputMint;
  }
  if (mint !== quote.outputMint)
    throw new ApiError(
      "invalid_route_plan_leg",
      `routePlan ends in ${mint}, not the quote's outputMint ${quote.outputMint}`,
    );
}

function amount(text: string, name: string): bigint {
  if (!/^\d{1,20}$/.test(text) || BigInt(text) >= 2n ** 64n)
    throw new ApiError("invalid_out_amount", `quoteResponse.${name} must be an integer from 0 to 2^64-1`);
  return BigInt(text);
}

/** `destinationTokenAccount` in `/order`'s terms: an owner's associated account is `destinationWallet`. */
function destination(
  value: SwapRequest["destinationTokenAccount"],
): Pick<OrderQuery, "destinationWallet" | "destinationTokenAccount"> {
  if (value === undefined) return {};
  if (typeof value === "string") return { destinationTokenAccount: value };
  if ("address" in value) return { destinationTokenAccount: value.address };
  return { destinationWallet: value.associatedTokenAccount.owner };
}

/** `prioritizationFeeLamports` in `/order`'s terms (an auto multiplier is applied to the parsed level). */
function priorityQuery(
  value: SwapRequest["prioritizationFeeLamports"],
): Pick<OrderQuery, "prioritizationFeeLamports" | "prioritizationFeeMaxLamports"> {
  if (value === undefined) return {};
  if (typeof value === "string" || typeof value === "number")
    return { prioritizationFeeLamports: String(value) };
  if ("lamports" in value) return { prioritizationFeeLamports: String(value.lamports) };
  if ("priorityLevelWithMaxLamports" in value) {
    const { priorityLevel, maxLamports } = value.priorityLevelWithMaxLamports;
    return { prioritizationFeeLamports: priorityLevel, prioritizationFeeMaxLamports: String(maxLamports) };
  }
  return { prioritizationFeeLamports: "auto" };
}

function autoMultiplier(value: SwapRequest["prioritizationFeeLamports"]): number {
  return typeof value === "object" && "autoMultiplier" in value ? value.autoMultiplier : 1;
}

function optionalBool(value: boolean | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}

function optionalNumber(value: number | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}
