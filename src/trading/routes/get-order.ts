/**
 * GET /order — a quote for swapping `amount` of `inputMint` into `outputMint` and, with
 * `userPublicKey`, the venue-signed transaction that executes it (interface operation 4).
 */

import { z } from "zod";
import { ErrorBody } from "../../contract/errors.js";
import { OrderResponse } from "../../contract/trade.js";
import { sendJson, type ZodApp } from "../../http/types.js";
import type { TradingBook } from "../book.js";
import type { OrderDesk } from "../order.js";
import { parseOrderRequest } from "./order-params.js";
import { checkOtherOrderParams } from "./order-reference-params.js";

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

/** The rest of the reference's parameters, each decided by `checkOtherOrderParams` (no effect, or refused). */
const FullOrderQuery = OrderQuery.extend({
  perLegSlippage: text("true or false; no effect: every leg of a firm quote pays an exact amount"),
  onlyJitRoutes: text("true is refused (route_not_found): this venue has no JIT router"),
  forJitoBundle: text("true is refused (route_not_found): the chain runs no Jito block engine"),
  restrictRevertMint: text("true or false; no effect: an async order here always reverts to its input mint"),
  platformFeeMode: text("outputMint (the default); inputMint with a nonzero fee is refused"),
  platformFeeScale: text(
    "0 only: the prediction-market builder fee is not offered (invalid_platform_fee_scale)",
  ),
  positiveSlippageFeeAccount: text("Checked; no effect: a firm quote has no positive slippage"),
  positiveSlippageLimitPct: text("0 to 100; no effect: a firm quote has no positive slippage"),
  sponsor: text("Refused (invalid_sponsor): sponsored transactions are not built yet"),
  sponsorExec: text("true or false; no effect without a sponsor"),
  destinationTokenAccount: text("Refused (destination_token_account_not_supported)"),

  outputCloseAuthority: text("Refused (invalid_output_close_authority)"),
  revertWallet: text("Refused (invalid_revert_wallet): reverts go back to the user"),
  dynamicComputeUnitLimit: text("false only: transactions ask for a fixed 200,000-unit limit"),
  includeJitoSandwichMitigationAccount: text("false only (invalid_jito_sandwich_mitigation_account)"),
  predictionMarketInitPayer: text("Refused (invalid_prediction_market_init_payer)"),
  outcomeAccountRentRecipient: text("Refused (invalid_outcome_account_rent_recipient)"),
  skipPumpfunCashbackClaim: text("true needs sponsorExec=false; no effect: no Pump.fun venue here"),
  allowBondingCurveUnderconsumption: text("true needs sponsorExec=false; no effect: no Pump.fun venue here"),
  includeAddressLookupTables: text("true or false; the venue's transactions use no lookup tables"),
  maxAccounts: text("64 (the chain's limit) or more; smaller is max_accounts_too_small"),
  reserveAccounts: text("0 only (reserve_accounts_too_large)"),
  maxTransactionSize: text("1232 (the chain's limit) or more; smaller is max_transaction_size_too_small"),
  reserveTransactionSize: text("0 only (reserve_transaction_size_too_large)"),
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
      // Firm quotes are bounded per client: its key when it has one, else its address.
      const client = request.grant ? `key:${request.grant.id}` : `ip:${request.ip}`;
      const parsed = parseOrderRequest(request.query, book.venues());
      checkOtherOrderParams(request.query, (address) => book.isVenueAccount(address));
      const order = await desk.order(parsed, client);
      return sendJson(reply, JSON.stringify(order));
    },
  );
}
