/**
 * What the trading tools share: a market's outcome mint, a prediction-market order quoted through
 * the venue's /order, its preview (every cost and the expected fill), and the wallet that signs:
 * a sandbox wallet by name in development (the venue signs and sends), else an address that signs
 * elsewhere.
 */
import { isAddress } from "@solana/kit";
import type { Keypair } from "../../chain/ed25519.js";
import { uiAmountString } from "../../chain/ui-amount.js";
import { parseUiAmount } from "../../chain/wallet.js";
import { signOrderTransaction } from "../../client/trade.js";
import { type Market, USDC_MINT } from "../../contract/markets.js";
import type { OrderResponse } from "../../contract/trade.js";
import { ToolRefusal } from "../error-hints.js";
import type { OrderPreview } from "../schemas.js";
import type { VenueAccess } from "../venue-access.js";

/** Outcome tokens and USDC both have 6 decimals: a contract is 1,000,000 base units. */
export const DECIMALS = 6;

export interface OrderSpec {
  ticker: string;
  side: "yes" | "no";
  action: "buy" | "sell";
  /** USDC to spend (buy) or contracts to sell, as a decimal string. */
  amount: string;
  slippageBps?: number | undefined;
}

/** The wallet an order is for: its address, and its keypair when it is a sandbox wallet. */
export interface OrderWallet {
  address: string;
  keypair?: Keypair;
}

/** The outcome mint of `side` on the market's USDC rail. */
export function outcomeMint(market: Market, side: "yes" | "no"): string {
  const rail = market.accounts[USDC_MINT];
  if (!rail)
    throw new ToolRefusal(
      "route_not_found",
      `market ${market.ticker} has no USDC rail on this venue`,
      "pick another market with search_markets",
    );
  return side === "yes" ? rail.yesMint : rail.noMint;
}

/** The wallet `nameOrAddress` names: an address as it is, a name only in development. */
export function orderWallet(venue: VenueAccess, nameOrAddress: string): OrderWallet {
  if (isAddress(nameOrAddress)) return { address: nameOrAddress };
  if (!venue.sandbox)
    throw new ToolRefusal(
      "invalid_user_public_key",
      `${nameOrAddress} is not a wallet address; this venue signs for no one`,
      "give the base58 address of the wallet that will sign the returned transaction",
    );
  const keypair = venue.sandbox.wallet(nameOrAddress);
  if (!keypair)
    throw new ToolRefusal(
      "not_found",
      `no sandbox wallet named ${nameOrAddress}`,
      "create and fund it with sandbox_fund_wallet, or give a wallet address",
    );
  return { address: keypair.address, keypair };
}

/** Quotes `spec` on the venue's /order; with `userPublicKey`, the response carries the transaction. */
export async function quoteOrder(
  venue: VenueAccess,
  spec: OrderSpec,
  userPublicKey?: string,
): Promise<{ market: Market; order: OrderResponse; preview: OrderPreview }> {
  const market = await venue.markets.getMarket(spec.ticker);
  const mint = outcomeMint(market, spec.side);
  const buying = spec.action === "buy";
  const order = await venue.trade.order({
    inputMint: buying ? USDC_MINT : mint,
    outputMint: buying ? mint : USDC_MINT,
    amount: parseUiAmount(spec.amount, DECIMALS),
    ...(spec.slippageBps !== undefined ? { slippageBps: spec.slippageBps } : {}),
    ...(userPublicKey ? { userPublicKey } : {}),
  });
  return { market, order, preview: previewOf(spec, order) };
}

/** What an order costs and is expected to fill, in whole tokens. */
function previewOf(spec: OrderSpec, order: OrderResponse): OrderPreview {
  const buying = spec.action === "buy";
  const outcome = `${spec.ticker} ${spec.side.toUpperCase()}`;
  const ui = (amount: string | bigint) => uiAmountString(BigInt(amount), DECIMALS);
  const usdc = BigInt(buying ? order.inAmount : order.outAmount);
  const contracts = BigInt(buying ? order.outAmount : order.inAmount);
  return {
    ticker: spec.ticker,
    side: spec.side,
    action: spec.action,
    pay: { amount: ui(order.inAmount), token: buying ? "USDC" : outcome, mint: order.inputMint },
    receive: {
      amount: ui(order.outAmount),
      minimum: ui(order.otherAmountThreshold),
      token: buying ? outcome : "USDC",
      mint: order.outputMint,
    },
    averagePrice: contracts > 0n ? ui((usdc * 1_000_000n) / contracts) : null,
    priceImpactPct: order.priceImpactPct,
    slippageBps: order.slippageBps,
    costs: {
      platformFeeUsdc: ui(order.platformFee?.amount ?? "0"),
      prioritizationFeeLamports: order.prioritizationFeeLamports ?? null,
      initPredictionMarketLamports: order.initPredictionMarketCost ?? null,
    },
    executionMode: order.executionMode,
  };
}

/** One line describing a preview. */
export function describePreview(preview: OrderPreview): string {
  const { pay, receive } = preview;
  return `${preview.action} ${preview.ticker} ${preview.side.toUpperCase()}: pay up to ${pay.amount} ${pay.token}, receive ~${receive.amount} (at least ${receive.minimum}) ${receive.token}; average price ${preview.averagePrice ?? "-"}, price impact ${(Number(preview.priceImpactPct) * 100).toFixed(2)}%, fee ${preview.costs.platformFeeUsdc} USDC`;
}

/**
 * Executes a quoted order for `wallet`: a sandbox wallet signs it here and it is sent to the chain;
 * any other wallet gets the transaction to sign and send itself.
 */
export async function executeOrder(
  venue: VenueAccess,
  wallet: OrderWallet,
  order: OrderResponse,
): Promise<
  | { status: "submitted"; signature: string }
  | { status: "to_sign"; transaction: string; lastValidBlockHeight?: number }
> {
  if (!order.transaction)
    throw new ToolRefusal("failed_to_construct_order", "the venue returned no transaction", "quote again");
  if (!wallet.keypair)
    return {
      status: "to_sign",
      transaction: order.transaction,
      ...(order.lastValidBlockHeight !== undefined
        ? { lastValidBlockHeight: order.lastValidBlockHeight }
        : {}),
    };
  const signature = await venue.chain.sendTransaction(
    signOrderTransaction(order.transaction, wallet.keypair),
  );
  return { status: "submitted", signature };
}
