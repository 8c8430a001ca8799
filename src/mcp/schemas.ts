/**
 * The tools' input and output shapes, declared once, from the contract's schemas where the venue has
 * them: a market summary is the contract's Market cut to what choosing a market needs.
 */
import { z } from "zod";
import { EventRecord, Market, MarketStatus } from "../contract/markets.js";
import { OrderStatusResponse } from "../contract/trade.js";

/** At most this many items in one list result: an agent pages with the cursor for more. */
export const MAX_ITEMS = 50;

export const Ticker = z.string().min(1).max(128);
export const Side = z.enum(["yes", "no"]).describe("the outcome: yes or no");
export const Action = z.enum(["buy", "sell"]);
export const Wallet = z
  .string()
  .min(1)
  .max(64)
  .describe(
    "a base58 wallet address; in development also a sandbox wallet's name (made by sandbox_fund_wallet), which the venue signs with",
  );
/** A whole-token decimal amount, e.g. "5" or "2.5" (6 decimals at most). */
export const UiAmount = z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, 'a decimal amount such as "5" or "2.5"');
export const Limit = z.number().int().min(1).max(MAX_ITEMS);

export const MarketSummary = Market.pick({
  ticker: true,
  eventTicker: true,
  title: true,
  yesSubTitle: true,
  status: true,
  result: true,
  yesBid: true,
  yesAsk: true,
  noBid: true,
  noAsk: true,
  volume: true,
  openInterest: true,
  closeTime: true,
});
export type MarketSummary = z.infer<typeof MarketSummary>;

export const EventSummary = EventRecord.pick({
  ticker: true,
  seriesTicker: true,
  title: true,
  subtitle: true,
  strikeDate: true,
  volume: true,
  openInterest: true,
  settlementSources: true,
});

export const SearchOutput = {
  markets: z.array(MarketSummary),
  cursor: z.number().int().nullable().describe("pass it back as cursor for the next page; null: no more"),
};

export const EventOutput = { event: EventSummary, markets: z.array(MarketSummary) };
export const MarketOutput = { market: Market };

export const ForecastPoint = z.object({
  endPeriodTs: z.number().int(),
  percentiles: z.array(z.object({ percentile: z.number(), forecast: z.number(), formatted: z.string() })),
});
export const ForecastOutput = {
  eventTicker: z.string(),
  seriesTicker: z.string(),
  periodInterval: z.number().int(),
  points: z.array(ForecastPoint),
  truncated: z.boolean().describe("true when older points were left out: ask for a narrower range"),
};

const BookLevel = z.object({ price: z.string(), contracts: z.number() });
export const OrderbookOutput = {
  ticker: z.string(),
  yesBids: z.array(BookLevel),
  noBids: z.array(BookLevel),
  sequence: z.number().int(),
  truncated: z.boolean().describe("true when levels past depth were left out"),
};

export const TradePrint = z.object({
  tradeId: z.string(),
  ticker: z.string(),
  yesPriceDollars: z.string(),
  noPriceDollars: z.string(),
  count: z.number(),
  takerSide: Side,
  createdTime: z.number(),
});
export const TradesOutput = { trades: z.array(TradePrint), cursor: z.string().nullable() };

const TokenAmount = z.object({ amount: z.string(), token: z.string(), mint: z.string() });
export const OrderPreview = z.object({
  ticker: z.string(),
  side: Side,
  action: Action,
  pay: TokenAmount.describe("the most the order spends"),
  receive: TokenAmount.extend({ minimum: z.string() }).describe(
    "the expected fill, and the least it accepts",
  ),
  averagePrice: z.string().nullable().describe("USDC per contract at the expected fill"),
  priceImpactPct: z.string(),
  slippageBps: z.number().int(),
  costs: z.object({
    platformFeeUsdc: z.string(),
    prioritizationFeeLamports: z.number().int().nullable(),
    initPredictionMarketLamports: z.number().int().nullable(),
  }),
  executionMode: z.enum(["sync", "async"]),
});
export type OrderPreview = z.infer<typeof OrderPreview>;
export const QuoteOutput = { preview: OrderPreview };

export const PlacedOutput = {
  status: z
    .enum(["preview", "submitted", "to_sign"])
    .describe(
      "preview: nothing sent, call again with confirm: true; submitted: signed and sent, follow it with get_order_status; to_sign: sign `transaction` with the wallet and send it",
    ),
  preview: OrderPreview,
  wallet: z.string(),
  signature: z.string().optional(),
  transaction: z
    .string()
    .optional()
    .describe("base64 v0 transaction, signed by the venue; the wallet signs it"),
  lastValidBlockHeight: z.number().int().optional(),
};

export const OrderStatusOutput = {
  ...OrderStatusResponse.shape,
  done: z.boolean().describe("closed, expired or failed: nothing more will happen to it"),
  seenByVenue: z.boolean().describe("false until the venue has seen the transaction land"),
};

export const Position = z.object({
  ticker: z.string(),
  side: Side,
  contracts: z.string(),
  mint: z.string(),
  marketStatus: MarketStatus,
  result: z.string(),
  redeemable: z.boolean(),
});
export const PositionsOutput = {
  wallet: z.string(),
  sol: z.string(),
  usdc: z.string(),
  positions: z.array(Position),
  truncated: z.boolean(),
};

export const RedeemOutput = {
  status: z.enum(["submitted", "to_sign"]),
  ticker: z.string(),
  side: Side,
  contracts: z.string(),
  expectedUsdc: z.string(),
  wallet: z.string(),
  signature: z.string().optional(),
  transaction: z.string().optional(),
};
