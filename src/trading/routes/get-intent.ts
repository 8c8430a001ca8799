/** GET /intent — a declarative trade's quote and, with `userPublicKey`, its open transaction to sign. */

import { z } from "zod";
import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { ApiError, ErrorBody, type ErrorCode } from "../../contract/errors.js";
import { IntentQuoteResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import { type IntentDesk, MIN_FEE_BUDGET } from "../prediction/intents.js";
import type { TradingBook } from "../spot/trading-book.js";
import { ORDER_PARAM_CODES, parseOrderRequest, parseUnsigned } from "./order-params.js";

const text = (description: string) => z.string().optional().meta({ description });

/** The reference's cap on an automatically chosen fee budget: 0.002 SOL. */
export const DEFAULT_MAX_AUTO_FEE_BUDGET = 2_000_000n;
/**
 * The most lamports a fee budget may be: 10 SOL, ten thousand times what settling needs. The budget is
 * a u64 SOL transfer in the open transaction and a JSON number in the quote: this keeps it exact in
 * both (far below 2^53) and keeps a typo from escrowing a fortune.
 */
export const MAX_FEE_BUDGET = 10_000_000_000n;

const IntentQuery = z.object({
  inputMint: z.string().meta({ description: "Mint of the token given" }),
  outputMint: z.string().meta({ description: "Mint of the token received" }),
  amount: z.string().meta({ description: "Input amount in the input token's smallest unit" }),
  userPublicKey: text("The user's wallet; the response then carries the open transaction to sign"),
  slippageBps: text('Allowed slippage in basis points (0–10000) or "auto"'),
  priceImpactTolerancePct: text("Largest price impact accepted, in whole percent (default 25)"),
  platformFeeBps: text(
    "Integrator fee in basis points; this venue takes none on intents (only 0 is accepted)",
  ),
  feeAccount: text("Token account of the output mint for the platform fee (checked; no fee is taken)"),
  referralAccount: text(
    "A Referral-program account; the program does not exist on this venue, so it is refused",
  ),
  wrapAndUnwrapSol: text(
    "Fund wrapped-SOL input from native SOL (default true); false is refused when SOL is traded",
  ),
  feeBudget: text(
    `Lamports the user puts up for settling the order (at least ${MIN_FEE_BUDGET}, at most ${MAX_FEE_BUDGET}); all but the fees come back`,
  ),
  maxAutoFeeBudget: text(
    `Cap on the fee budget the venue picks when feeBudget is unset (default ${DEFAULT_MAX_AUTO_FEE_BUDGET}); the venue's pick is ${MIN_FEE_BUDGET}`,
  ),
});

type IntentQuery = z.infer<typeof IntentQuery>;

/**
 * The reference code each parameter is refused with when it is missing or malformed: the order's for
 * the ones `/order` shares, else the intent's own (a malformed `feeBudget` is no budget, so too low;
 * one above `MAX_FEE_BUDGET` is past the most a budget may be, `invalid_max_auto_fee_budget`).
 */
export const INTENT_PARAM_CODES = {
  inputMint: ORDER_PARAM_CODES.inputMint,
  outputMint: ORDER_PARAM_CODES.outputMint,
  amount: ORDER_PARAM_CODES.amount,
  userPublicKey: ORDER_PARAM_CODES.userPublicKey,
  slippageBps: ORDER_PARAM_CODES.slippageBps,
  priceImpactTolerancePct: ORDER_PARAM_CODES.priceImpactTolerancePct,
  platformFeeBps: ORDER_PARAM_CODES.platformFeeBps,
  feeAccount: ORDER_PARAM_CODES.feeAccount,
  wrapAndUnwrapSol: ORDER_PARAM_CODES.wrapAndUnwrapSol,
  referralAccount: "invalid_referral_account",
  feeBudget: "requested_fee_budget_too_low",
  maxAutoFeeBudget: "invalid_max_auto_fee_budget",
} as const satisfies Record<keyof IntentQuery, ErrorCode>;

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
      const query = request.query;
      refuseUnsupported(query);
      const order = parseOrderRequest(query, book.venues());
      if (!order.wrapAndUnwrapSol && [order.inputMint, order.outputMint].includes(WRAPPED_SOL_MINT)) {
        const side = order.inputMint === WRAPPED_SOL_MINT ? "input" : "output";
        throw new ApiError(
          side === "input" ? "invalid_input_mint" : "invalid_output_mint",
          `wrapAndUnwrapSol=false: intents on this venue settle wrapped SOL as native SOL only; send wrapAndUnwrapSol=true (the default) or trade another ${side} mint`,
        );
      }
      const budget = feeBudget(query.feeBudget, maxAutoFeeBudget(query.maxAutoFeeBudget));
      const intent = await intents.intent({ ...order, feeBudget: budget });
      return sendJson(reply, JSON.stringify(intent));
    },
  );
}

const U64_MAX = 2n ** 64n - 1n;

/**
 * Refuses, with the reference's codes, the intent parameters this venue cannot honour: a platform fee
 * (intents take none here) and a referral account (its program does not exist on this chain).
 */
function refuseUnsupported(query: IntentQuery): void {
  if (query.platformFeeBps !== undefined && query.platformFeeBps !== "0") {
    throw new ApiError(
      "invalid_platform_fee_bps",
      `intents take no platform fee on this venue: platformFeeBps must be 0, got ${JSON.stringify(query.platformFeeBps.slice(0, 32))}`,
    );
  }
  if (query.referralAccount !== undefined) {
    throw new ApiError(
      "invalid_referral_account",
      "referral accounts belong to the Referral program, which this venue's chain does not run; send no referralAccount",
    );
  }
}

/**
 * `maxAutoFeeBudget`: lamports, at least what an intent needs to settle. Only a cap on the venue's own
 * pick (which is `MIN_FEE_BUDGET`), so any u64 is taken.
 */
function maxAutoFeeBudget(value: string | undefined): bigint {
  if (value === undefined) return DEFAULT_MAX_AUTO_FEE_BUDGET;
  const lamports = parseUnsigned(value);
  if (lamports === undefined || lamports > U64_MAX || lamports < MIN_FEE_BUDGET) {
    throw new ApiError(
      INTENT_PARAM_CODES.maxAutoFeeBudget,
      `maxAutoFeeBudget must be an integer number of lamports from ${MIN_FEE_BUDGET} (what an intent needs to settle) to ${U64_MAX}, got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  return lamports;
}

/**
 * The fee budget: `feeBudget` as asked, else the venue's pick capped by `maxAutoFeeBudget`. Compared
 * as a bigint, never rounded: one above `MAX_FEE_BUDGET` is refused as it was sent.
 */
function feeBudget(value: string | undefined, autoCap: bigint): bigint {
  if (value === undefined) return MIN_FEE_BUDGET < autoCap ? MIN_FEE_BUDGET : autoCap;
  const lamports = parseUnsigned(value);
  if (lamports === undefined) {
    throw new ApiError(
      INTENT_PARAM_CODES.feeBudget,
      `feeBudget must be an integer number of lamports from ${MIN_FEE_BUDGET} to ${MAX_FEE_BUDGET}, got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  if (lamports > MAX_FEE_BUDGET) {
    // The intent's enum has no code for a budget too high; this is the one for a budget past its maximum.
    throw new ApiError(
      "invalid_max_auto_fee_budget",
      `feeBudget is past its bound: at most ${MAX_FEE_BUDGET} lamports (10 SOL), got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  if (lamports < MIN_FEE_BUDGET) {
    throw new ApiError(
      "requested_fee_budget_too_low",
      `feeBudget must be at least ${MIN_FEE_BUDGET} lamports, got ${lamports}`,
    );
  }
  return lamports;
}
