/**
 * The prediction-market resources: their wire shapes (contract §5, interface.md "Resources") and the
 * records of our own catalogue format, which storage, import and the demo generator share.
 */
import { address } from "@solana/kit";
import { z } from "zod";

export const MARKET_STATUSES = [
  "initialized",
  "active",
  "inactive",
  "closed",
  "determined",
  "finalized",
] as const;
export const MarketStatus = z.enum(MARKET_STATUSES);
export type MarketStatus = z.infer<typeof MarketStatus>;

export const MarketResult = z.enum(["", "yes", "no"]);
export type MarketResult = z.infer<typeof MarketResult>;
export const SORT_KEYS = ["volume", "volume24h", "liquidity", "openInterest", "startDate"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

const unixSeconds = z.number().int().nonnegative().max(99_999_999_999);
const count = z.number().int().nonnegative();
/** Fixed-point contract count: a decimal string with exactly two fraction digits, e.g. "1250.00". */
export const FixedPoint = z
  .string()
  .regex(/^\d+\.\d{2}$/, "must be a decimal string with two fraction digits");
/** Dollar price with four fraction digits in [0,1], e.g. "0.4200". */
export const Price = z.string().regex(/^(0\.\d{4}|1\.0000)$/, "must be a dollar price like 0.4200 in [0,1]");

export const SettlementSource = z.object({ name: z.string(), url: z.string() });
export type SettlementSource = z.infer<typeof SettlementSource>;

export const Series = z.object({
  ticker: z.string().min(1),
  title: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  frequency: z.string(),
  feeType: z.string(),
  feeMultiplier: z.number(),
  contractUrl: z.string(),
  contractTermsUrl: z.string(),
  settlementSources: z.array(SettlementSource),
  additionalProhibitions: z.array(z.string()).nullable(),
  productMetadata: z.record(z.string(), z.unknown()).nullable(),
});
export type Series = z.infer<typeof Series>;

export const MarketAccount = z.object({
  marketLedger: z.string(),
  yesMint: z.string(),
  noMint: z.string(),
  isInitialized: z.boolean(),
  redemptionStatus: z.enum(["open", "pending"]).nullable(),
  scalarOutcomePct: z.number().int().min(0).max(10_000).nullable(),
});
export type MarketAccount = z.infer<typeof MarketAccount>;

/** Fields a market record and the wire Market share (everything but `accounts`). */
const marketFields = {
  ticker: z.string().min(1),
  eventTicker: z.string().min(1),
  marketType: z.string(),
  title: z.string(),
  subtitle: z.string(),
  yesSubTitle: z.string(),
  noSubTitle: z.string(),
  openTime: unixSeconds,
  closeTime: unixSeconds,
  expirationTime: unixSeconds,
  status: MarketStatus,
  result: MarketResult,
  volume: count,
  openInterest: count,
  canCloseEarly: z.boolean(),
  fractionalTradingEnabled: z.boolean(),
  rulesPrimary: z.string(),
  earlyCloseCondition: z.string().nullable(),
  rulesSecondary: z.string().nullable(),
  yesBid: Price.nullable(),
  yesAsk: Price.nullable(),
  noBid: Price.nullable(),
  noAsk: Price.nullable(),
  volumeFp: FixedPoint.nullable(),
  volume24hFp: FixedPoint.nullable(),
  openInterestFp: FixedPoint.nullable(),
};

export const Market = z.object({
  ...marketFields,
  accounts: z.record(z.string(), MarketAccount),
});
export type Market = z.infer<typeof Market>;

/** A market as our catalogue format stores it: the wire fields, minus the derived `accounts`. */
export const MarketRecord = z.object({
  ...marketFields,
  /** Whether the market's outcome tokens exist (the `isInitialized` of its USDC account). */
  tokenized: z.boolean(),
  /** Scalar payout in basis points to YES, set once a scalar market is determined with result "". */
  scalarOutcomePct: z.number().int().min(0).max(10_000).nullable(),
});
export type MarketRecord = z.infer<typeof MarketRecord>;

const eventFields = {
  ticker: z.string().min(1),
  seriesTicker: z.string().min(1),
  title: z.string(),
  subtitle: z.string(),
  competition: z.string().nullable(),
  competitionScope: z.string().nullable(),
  imageUrl: z.string().nullable(),
  liquidity: count.nullable(),
  openInterest: count.nullable(),
  openInterestFp: FixedPoint.nullable(),
  settlementSources: z.array(SettlementSource).nullable(),
  strikeDate: unixSeconds.nullable(),
  strikePeriod: z.string().nullable(),
  volume: count.nullable(),
  volume24h: count.nullable(),
  volume24hFp: FixedPoint.nullable(),
  volumeFp: FixedPoint.nullable(),
};

export const Event = z.object({ ...eventFields, markets: z.array(Market).nullable() });
export type Event = z.infer<typeof Event>;

/** An event without its markets, as storage keeps it. */
export const EventRecord = z.object(eventFields);
export type EventRecord = z.infer<typeof EventRecord>;

export const CATALOGUE_FORMAT = "oddsgate-catalogue/1";

/** Our import/export format: series, and events with their markets nested. */
export const CatalogueFile = z.object({
  format: z.literal(CATALOGUE_FORMAT),
  series: z.array(Series),
  events: z.array(EventRecord.extend({ markets: z.array(MarketRecord) })),
});
export type CatalogueFile = z.infer<typeof CatalogueFile>;
export type CatalogueEvent = CatalogueFile["events"][number];

/** Circle's USDC mint: the settlement mint of every market; the sandbox chain creates it at this address. */
export const USDC_MINT = address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");

/** Phantom's CASH mint: every market's second settlement mint; the sandbox chain creates it here. */
export const CASH_MINT = address("CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH");

/** Formats a whole contract count as a fixed-point string ("1250.00"). */
export function toFixedPoint(contracts: number): string {
  return `${Math.trunc(contracts)}.00`;
}

/** The upstream exchange's forecast history body (Kalshi's snake_case, relayed unchanged). */
export interface ForecastHistory {
  forecast_history: {
    event_ticker: string;
    end_period_ts: number;
    period_interval: number;
    percentile_points: {
      percentile: number;
      raw_numerical_forecast: number;
      numerical_forecast: number;
      formatted_forecast: string;
    }[];
  }[];
}
