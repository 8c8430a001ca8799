/**
 * GET /order — a quote for swapping `amount` of `inputMint` into `outputMint` and, with
 * `userPublicKey`, the venue-signed transaction that executes it (interface operation 4).
 */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { OrderResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { OrderDesk } from "../spot/desk.js";
import type { TradingBook } from "../spot/trading-book.js";
import { clientOf, parseOrderRequest } from "./order-params.js";

const text = (description: string) => z.string().optional().meta({ description });

const OrderQuery = z.object({
  inputMint: z.string().meta({ description: "Mint of the token given" }),
  outputMint: z.string().meta({ description: "Mint of the token received" }),
  amount: z
    .string()
    .meta({ description: "Input amount in the input token's smallest unit", example: "1000000" }),
  slippageBps: text('Allowed slippage in basis points (0–10000) or "auto" (the default, 50)'),
  userPublicKey: text("The user's wallet; the response then carries the transaction to sign"),
  destinationWallet: text(
    "Wallet whose token account receives the output (created if missing); spot orders, not native SOL",
  ),
  predictionMarketSlippageBps: text(
    'Prediction-market orders: slippage in basis points or "auto"; at least slippageBps',
  ),
  priceImpactTolerancePct: text("Largest price impact accepted, in whole percent (default 25)"),
  dexes: text("Comma-separated venues a route may use (see GET /venues)"),
  excludeDexes: text("Comma-separated venues a route must not use"),
  onlyDirectRoutes: text("true for single-leg routes only"),
  maxRouteLength: text("Most legs a route may have (1 or more; routes have at most 2)"),
  platformFeeBps: text("Integrator fee in basis points, taken from the output; needs feeAccount"),
  feeAccount: text("Token account of the output mint that receives the platform fee"),
  prioritizationFeeLamports: text(
    "Priority fee in lamports, or auto, medium, high, veryHigh, disabled; not with computeUnitPriceMicroLamports",
  ),
  prioritizationFeeMaxLamports: text(
    "Cap on a priority fee level the venue picks (default 5000000, 0.005 SOL)",
  ),
  computeUnitPriceMicroLamports: text(
    "Price per compute unit in micro-lamports, instead of prioritizationFeeLamports",
  ),
  allowSyncExec: text("false to refuse routes executed in this transaction (default true)"),
  allowAsyncExec: text("false to refuse routes settled after it, prediction-market orders (default true)"),
  wrapAndUnwrapSol: text("With wrapped SOL as input or output, wrap and unwrap native SOL (default true)"),
});

/** The rest of the reference's parameters: each honoured, refused with its code, or without effect by its meaning. */
const FullOrderQuery = OrderQuery.extend({
  perLegSlippage: text("true or false; no effect: every leg of a firm quote pays an exact amount"),
  onlyJitRoutes: text("true is refused (route_not_found): this venue has no JIT router"),
  forJitoBundle: text("true is refused (route_not_found): the chain runs no Jito block engine"),
  restrictRevertMint: text("true or false; an async order here always reverts to its input mint"),
  platformFeeMode: text(
    "outputMint (the default) or inputMint: the fee is taken off the input before routing",
  ),
  platformFeeScale: text(
    "Prediction-market builder fee k in thousandths (0–999): k·p·(1−p) per contract, in USDC; needs feeAccount",
  ),
  positiveSlippageFeeAccount: text("Checked; no effect: a firm quote has no positive slippage"),
  positiveSlippageLimitPct: text("0 to 100; no effect: a firm quote has no positive slippage"),
  sponsor: text(
    "Pays the transaction fee and the rent of created accounts, and signs; the user signs for its tokens",
  ),
  sponsorExec: text("true (the default) or false; the sponsor is the fee payer either way"),
  destinationTokenAccount: text(
    "An existing token account of the output mint that receives the output; for native SOL output, a wallet",
  ),
  outputCloseAuthority: text("Creates the user's output account with this close authority"),
  revertWallet: text("Async orders: receives the input if the order reverts; no effect on spot orders"),
  dynamicComputeUnitLimit: text("true: simulate the transaction and ask for the units it uses plus a tenth"),
  includeJitoSandwichMitigationAccount: text("false only (invalid_jito_sandwich_mitigation_account)"),
  predictionMarketInitPayer: text("Pays (and signs for) an uninitialized market's initialization"),
  outcomeAccountRentRecipient: text(
    "No effect on spot orders; prediction-market orders refuse it (invalid_outcome_account_rent_recipient): outcome accounts are not closed by orders here",
  ),
  skipPumpfunCashbackClaim: text("true needs sponsorExec=false; no effect: no Pump.fun venue here"),
  allowBondingCurveUnderconsumption: text("true needs sponsorExec=false; no effect: no Pump.fun venue here"),
  includeAddressLookupTables: text("true returns addressLookupTables: those the transaction uses (none)"),
  maxAccounts: text("Most accounts the transaction may name; a two-leg route falls back to a direct one"),
  reserveAccounts: text("Accounts to leave free under the chain's 64"),
  maxTransactionSize: text("Most bytes the transaction may take on the wire"),
  reserveTransactionSize: text("Bytes to leave free under the chain's 1232"),
});

export type OrderQuery = z.infer<typeof FullOrderQuery>;

/** Registers `GET /order`. */
export function getOrder(app: ZodApp, book: TradingBook, desk: OrderDesk): void {
  app.get(
    "/order",
    {
      schema: {
        operationId: "order",
        tags: ["Order"],
        summary: "Quote an order and get its transaction",
        querystring: FullOrderQuery,
        response: { 200: OrderResponse, 400: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const parsed = parseOrderRequest(request.query, book.venues());
      const order = await desk.order(parsed, clientOf(request));
      return sendJson(reply, JSON.stringify(order));
    },
  );
}
