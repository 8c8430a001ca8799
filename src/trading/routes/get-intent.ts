/** GET /intent — a declarative trade's quote and, with `userPublicKey`, its open transaction to sign. */

import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { ApiError, ErrorBody } from "../../contract/errors.js";
import { IntentQuoteResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import { type IntentDesk, MIN_FEE_BUDGET } from "../prediction/intents.js";
import type { TradingBook } from "../spot/trading-book.js";
import { ORDER_PARAMS } from "./order-params.js";
import { parseOrderRequest } from "./order-request.js";
import {
  like,
  type Params,
  PUBLISHED,
  paramCodes,
  parseParams,
  parseUnsigned,
  querySchema,
  type Refuse,
  U64_MAX,
} from "./query-params.js";

/** The reference's cap on an automatically chosen fee budget: 0.002 SOL. */
export const DEFAULT_MAX_AUTO_FEE_BUDGET = 2_000_000n;
/**
 * The most lamports a fee budget may be: 10 SOL, ten thousand times what settling needs. The budget is
 * a u64 SOL transfer in the open transaction and a JSON number in the quote: this keeps it exact in
 * both (far below 2^53) and keeps a typo from escrowing a fortune.
 */
export const MAX_FEE_BUDGET = 10_000_000_000n;

/**
 * The intent's own parameters: a referral account (its program does not exist on this chain) is
 * refused with the reference's code; the fee budget is the escrow settling draws on.
 */
const INTENT_OWN_PARAMS = {
  referralAccount: {
    code: "invalid_referral_account",
    description: "A Referral-program account; the program does not exist on this venue, so it is refused",
    read: (text, _name, refuse) => {
      if (text !== undefined)
        return refuse(
          "referral accounts belong to the Referral program, which this venue's chain does not run; send no referralAccount",
        );
    },
  },
  feeBudget: {
    code: "requested_fee_budget_too_low",
    description: `Lamports the user puts up for settling the order (at least ${MIN_FEE_BUDGET}, at most ${MAX_FEE_BUDGET}); all but the fees come back`,
    published: PUBLISHED.int64,
    read: (text) => (text === undefined ? undefined : feeBudget(text)),
  },
  maxAutoFeeBudget: {
    code: "invalid_max_auto_fee_budget",
    description: `Cap on the fee budget the venue picks when feeBudget is unset (default ${DEFAULT_MAX_AUTO_FEE_BUDGET}); the venue's pick is ${MIN_FEE_BUDGET}`,
    published: PUBLISHED.int64,
    read: (text, name, refuse) =>
      text === undefined ? DEFAULT_MAX_AUTO_FEE_BUDGET : maxAutoFeeBudget(text, name, refuse),
  },
} satisfies Params;

/** The parameters of `GET /intent`: `/order`'s where they mean the same, and its own. */
const INTENT_PARAMS = {
  inputMint: ORDER_PARAMS.inputMint,
  outputMint: ORDER_PARAMS.outputMint,
  amount: ORDER_PARAMS.amount,
  userPublicKey: like(ORDER_PARAMS.userPublicKey, {
    description: "The user's wallet; the response then carries the open transaction to sign",
  }),
  slippageBps: like(ORDER_PARAMS.slippageBps, {
    description: 'Allowed slippage in basis points (0–10000) or "auto"',
  }),
  priceImpactTolerancePct: ORDER_PARAMS.priceImpactTolerancePct,
  platformFeeBps: like(ORDER_PARAMS.platformFeeBps, {
    description: "Integrator fee in basis points (0–10000), taken out of the output when the intent fills",
  }),
  feeAccount: like(ORDER_PARAMS.feeAccount, {
    description: "Token account of the output mint that receives the platform fee",
  }),
  referralAccount: INTENT_OWN_PARAMS.referralAccount,
  wrapAndUnwrapSol: like(ORDER_PARAMS.wrapAndUnwrapSol, {
    description: "Fund wrapped-SOL input from native SOL (default true); false is refused when SOL is traded",
  }),
  feeBudget: INTENT_OWN_PARAMS.feeBudget,
  maxAutoFeeBudget: INTENT_OWN_PARAMS.maxAutoFeeBudget,
};

const IntentQuery = querySchema(INTENT_PARAMS);

/** The code each parameter is refused with when it is missing or malformed. */
export const INTENT_PARAM_CODES = paramCodes(INTENT_PARAMS);

/** Registers `GET /intent`. */
export function getIntent(app: ZodApp, book: TradingBook, intents: IntentDesk): void {
  app.get(
    "/intent",
    {
      schema: {
        operationId: "intent_handler",
        tags: ["intent"],
        summary: "Quote a declarative trade and get its open transaction",
        querystring: IntentQuery,
        response: { 200: IntentQuoteResponse, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const own = parseParams(INTENT_OWN_PARAMS, query);
      const order = parseOrderRequest(query, book.venues());
      if (!order.wrapAndUnwrapSol && [order.inputMint, order.outputMint].includes(WRAPPED_SOL_MINT)) {
        const side = order.inputMint === WRAPPED_SOL_MINT ? "input" : "output";
        throw new ApiError(
          side === "input" ? "invalid_input_mint" : "invalid_output_mint",
          `wrapAndUnwrapSol=false: intents on this venue settle wrapped SOL as native SOL only; send wrapAndUnwrapSol=true (the default) or trade another ${side} mint`,
        );
      }
      // The venue's pick, within the caller's cap, unless the caller names the budget.
      const budget = own.feeBudget ?? minimum(MIN_FEE_BUDGET, own.maxAutoFeeBudget);
      const intent = await intents.intent(order, budget);
      return sendJson(reply, JSON.stringify(intent));
    },
  );
}

function minimum(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/**
 * `maxAutoFeeBudget`: lamports, at least what an intent needs to settle. Only a cap on the venue's own
 * pick (which is `MIN_FEE_BUDGET`), so any u64 is taken.
 */
function maxAutoFeeBudget(text: string, name: string, refuse: Refuse): bigint {
  const lamports = parseUnsigned(text);
  if (lamports === undefined || lamports > U64_MAX || lamports < MIN_FEE_BUDGET)
    return refuse(
      `${name} must be an integer number of lamports from ${MIN_FEE_BUDGET} (what an intent needs to settle) to ${U64_MAX}, got ${JSON.stringify(text.slice(0, 32))}`,
    );
  return lamports as bigint;
}

/**
 * `feeBudget`, as asked: compared as a bigint, never rounded, so one above `MAX_FEE_BUDGET` is
 * refused as it was sent.
 */
function feeBudget(text: string): bigint {
  const lamports = parseUnsigned(text);
  if (lamports === undefined) {
    throw new ApiError(
      "requested_fee_budget_too_low",
      `feeBudget must be an integer number of lamports from ${MIN_FEE_BUDGET} to ${MAX_FEE_BUDGET}, got ${JSON.stringify(text.slice(0, 32))}`,
    );
  }
  if (lamports > MAX_FEE_BUDGET) {
    // The intent's enum has no code for a budget too high; this is the one for a budget past its maximum.
    throw new ApiError(
      "invalid_max_auto_fee_budget",
      `feeBudget is past its bound: at most ${MAX_FEE_BUDGET} lamports (10 SOL), got ${JSON.stringify(text.slice(0, 32))}`,
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
