/**
 * Kalshi trade-api v2 JSON → our catalogue records. The `Kalshi*` schemas validate Kalshi's snake_case
 * objects and normalise their values (ISO or epoch times, cents or dollar strings, integer or `*_fp`
 * counts); the `kalshi*ToRecord` functions then only rename and derive. The file import and the upstream
 * sync share both: `kalshiMarketToRecord(KalshiMarket.parse(json), options)`.
 */
import { z } from "zod";
import type { EventRecord, MarketRecord, MarketStatus, Series } from "../../contract/markets.js";

export const TOKENIZE_POLICIES = ["none", "tradable", "all"] as const;
/** Which imported Kalshi markets get outcome tokens: none, those that have opened, or all of them. */
export type TokenizePolicy = (typeof TOKENIZE_POLICIES)[number];

export interface KalshiImportOptions {
  /** Default "none": Kalshi data says nothing about tokens, so tokenizing is the operator's choice. */
  tokenize?: TokenizePolicy;
}

// ---------------------------------------------------------------------------------------------------
// Value conversions. Each returns undefined for input it cannot read, and `kalshiField` turns that
// into a validation issue naming what was expected.

/** The largest Unix time our records hold (model.ts): 10^11 − 1 seconds. */
const MAX_UNIX_SECONDS = 99_999_999_999;
/** An epoch number above this (in seconds, the year 5138) can only be milliseconds. */
const MILLISECONDS_ABOVE = 100_000_000_000;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;
const DECIMAL = /^(\d+)(?:\.(\d*))?$/;
const PRICE_DIGITS = 4;
const FIXED_POINT_DIGITS = 2;
/** $1 in ten-thousandths of a dollar: a price's unit is also a basis point of payout. */
const ONE_DOLLAR = 10_000;

/** Unix seconds from an ISO 8601 string or an epoch number (seconds, or milliseconds above 10^11). */
function toUnixSeconds(value: unknown): number | undefined {
  let seconds: number;
  if (typeof value === "number") {
    seconds = value > MILLISECONDS_ABOVE ? value / 1000 : value;
  } else if (typeof value === "string") {
    const match = ISO_TIME.exec(value);
    if (!match) return undefined;
    // Date.parse reads a date-time without an offset as local time; Kalshi's times are UTC.
    const zoned = value.includes("T") && match[1] === undefined ? `${value}Z` : value;
    seconds = Date.parse(zoned) / 1000;
  } else {
    return undefined;
  }
  seconds = Math.floor(seconds);
  // NaN fails both comparisons.
  return seconds >= 0 && seconds <= MAX_UNIX_SECONDS ? seconds : undefined;
}

/**
 * A non-negative decimal ("1250.5", 0.42) as a whole number of 10^-digits units. Digits beyond `digits`
 * are cut toward zero; the digits are read as text so that no binary rounding creeps in.
 */
function toUnits(value: unknown, digits: number): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string") return undefined;
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const units = Number((match[1] ?? "") + (match[2] ?? "").slice(0, digits).padEnd(digits, "0"));
  return Number.isSafeInteger(units) ? units : undefined;
}

/** Formats a whole number of 10^-digits units as a decimal string with exactly `digits` fraction digits. */
function formatUnits(units: number, digits: number): string {
  const scale = 10 ** digits;
  return `${Math.trunc(units / scale)}.${String(units % scale).padStart(digits, "0")}`;
}

/** A dollar price ("0.42", "0.4200") in basis points, if it lies in [0, 1]. */
function dollarsToBasisPoints(value: unknown): number | undefined {
  const units = toUnits(value, PRICE_DIGITS);
  return units !== undefined && units <= ONE_DOLLAR ? units : undefined;
}

/** A legacy price in cents (0–100) in basis points. */
function centsToBasisPoints(value: unknown): number | undefined {
  return typeof value === "number" && value >= 0 && value <= 100 ? Math.round(value * 100) : undefined;
}

function toCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

const MARKET_STATUSES = new Map<string, MarketStatus>([
  ["initialized", "initialized"],
  ["active", "active"],
  ["inactive", "inactive"],
  ["closed", "closed"],
  ["determined", "determined"],
  ["finalized", "finalized"],
  // Kalshi's names before its current lifecycle, still found in older exports.
  ["unopened", "initialized"],
  ["open", "active"],
  ["paused", "inactive"],
  ["settled", "finalized"],
  ["disputed", "determined"],
  ["amended", "determined"],
]);

function toMarketStatus(value: unknown): MarketStatus | undefined {
  return typeof value === "string" ? MARKET_STATUSES.get(value.toLowerCase()) : undefined;
}

/** "yes"/"no" pass; every other outcome ("", "void", "all_no", "scalar", ...) pays by other means: "". */
function toMarketResult(value: unknown): MarketRecord["result"] | undefined {
  if (typeof value !== "string") return undefined;
  const result = value.toLowerCase();
  return result === "yes" || result === "no" ? result : "";
}

// ---------------------------------------------------------------------------------------------------
// Field schemas.

/** Reads one field with `convert`, or records an issue whose message completes "expected ...". */
function readField<T>(
  value: unknown,
  ctx: z.RefinementCtx,
  expected: string,
  convert: (value: unknown) => T | undefined,
): T {
  const converted = value === undefined ? undefined : convert(value);
  if (converted === undefined) {
    ctx.addIssue({ code: "custom", message: `expected ${expected}`, input: value });
    return z.NEVER;
  }
  return converted;
}

/** A required field read by `convert`; `expected` describes what it accepts. */
function kalshiField<T>(expected: string, convert: (value: unknown) => T | undefined) {
  return z.unknown().transform((value, ctx) => readField(value, ctx, expected, convert));
}

/** Like `kalshiField`, but absent or null reads as null. */
function optionalKalshiField<T>(expected: string, convert: (value: unknown) => T | undefined) {
  // Only an optional schema lets its key be absent; the transform then sees undefined.
  return z
    .unknown()
    .optional()
    .transform((value, ctx) => (value == null ? null : readField(value, ctx, expected, convert)));
}

const ticker = z.string().min(1, "expected a non-empty ticker");
/** Kalshi sends "" or omits text it has none of; our records always carry a string. */
const text = z
  .string()
  .nullish()
  .transform((v) => v ?? "");
const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? null);
const flag = z
  .boolean()
  .nullish()
  .transform((v) => v ?? false);
const time = kalshiField("an ISO time or Unix seconds", toUnixSeconds);
const optionalTime = optionalKalshiField("an ISO time or Unix seconds", toUnixSeconds);
const count = optionalKalshiField("a non-negative whole number", toCount);
/** A `*_fp` count, in hundredths of a contract. */
const fixedPoint = optionalKalshiField("a non-negative decimal contract count", (v) =>
  toUnits(v, FIXED_POINT_DIGITS),
);
/** A `*_dollars` price, in basis points. */
const dollarPrice = optionalKalshiField("a dollar price from 0 to 1", dollarsToBasisPoints);
/** A legacy integer-cent price, in basis points. */
const centPrice = optionalKalshiField("a price in cents from 0 to 100", centsToBasisPoints);
/** A `*_dollars` amount that may exceed $1, in cents. */
const dollarAmount = optionalKalshiField("a non-negative dollar amount", (v) => toUnits(v, 2));
const metadata = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((v) => v ?? null);
const KalshiSettlementSource = z.object({ name: text, url: text });
const settlementSources = z
  .array(KalshiSettlementSource)
  .nullish()
  .transform((v) => v ?? null);

// ---------------------------------------------------------------------------------------------------
// Record schemas. Unknown fields are dropped. Output values are normalised: times in Unix seconds,
// prices in basis points, `*_fp` counts in hundredths of a contract, liquidity in cents.

/** Trading activity, which Kalshi reports alike on markets and events. */
const activityFields = {
  volume: count,
  volume_fp: fixedPoint,
  volume_24h: count,
  volume_24h_fp: fixedPoint,
  open_interest: count,
  open_interest_fp: fixedPoint,
  liquidity: count,
  liquidity_dollars: dollarAmount,
};

/** A Kalshi market (GetMarket's `market`, an element of `markets` or of an event's nested `markets`). */
export const KalshiMarket = z.object({
  ticker,
  event_ticker: ticker,
  market_type: z
    .string()
    .nullish()
    .transform((v) => v ?? "binary"),
  title: text,
  subtitle: text,
  yes_sub_title: text,
  no_sub_title: text,
  open_time: time,
  close_time: time,
  expiration_time: optionalTime,
  latest_expiration_time: optionalTime,
  status: kalshiField(`a market status (${[...MARKET_STATUSES.keys()].join(", ")})`, toMarketStatus),
  result: optionalKalshiField('a result such as "yes", "no" or ""', toMarketResult),
  can_close_early: flag,
  early_close_condition: optionalText,
  fractional_trading_enabled: flag,
  rules_primary: text,
  rules_secondary: optionalText,
  ...activityFields,
  yes_bid: centPrice,
  yes_ask: centPrice,
  no_bid: centPrice,
  no_ask: centPrice,
  yes_bid_dollars: dollarPrice,
  yes_ask_dollars: dollarPrice,
  no_bid_dollars: dollarPrice,
  no_ask_dollars: dollarPrice,
  settlement_value: centPrice,
  settlement_value_dollars: dollarPrice,
});
export type KalshiMarket = z.output<typeof KalshiMarket>;

/** A Kalshi event (GetEvent's `event`, an element of GetEvents' `events`), markets nested or not. */
export const KalshiEvent = z.object({
  event_ticker: ticker,
  series_ticker: ticker,
  title: text,
  sub_title: text,
  category: optionalText,
  strike_date: optionalTime,
  strike_period: optionalText,
  image_url: optionalText,
  settlement_sources: settlementSources,
  product_metadata: metadata,
  ...activityFields,
  markets: z
    .array(KalshiMarket)
    .nullish()
    .transform((v) => v ?? null),
});
export type KalshiEvent = z.output<typeof KalshiEvent>;

/** A Kalshi series (GetSeries' `series`, an element of GetSeriesList's `series`). */
export const KalshiSeries = z.object({
  ticker,
  title: optionalText,
  category: optionalText,
  tags: z.array(z.string()).nullish(),
  frequency: optionalText,
  fee_type: optionalText,
  fee_multiplier: z.number().nullish(),
  contract_url: text,
  contract_terms_url: text,
  settlement_sources: settlementSources,
  additional_prohibitions: z.array(z.string()).nullish(),
  product_metadata: metadata,
});
export type KalshiSeries = z.output<typeof KalshiSeries>;

/**
 * A Kalshi export: GetEvents' `{events, cursor}` or GetEvent's `{event, markets}`, optionally with
 * GetSeriesList's `series` and GetMarkets' `markets` merged in.
 */
export const KalshiFile = z.object({
  events: z.array(KalshiEvent).optional(),
  event: KalshiEvent.optional(),
  markets: z.array(KalshiMarket).optional(),
  series: z.array(KalshiSeries).optional(),
});
export type KalshiFile = z.output<typeof KalshiFile>;

// ---------------------------------------------------------------------------------------------------
// Mapping.

/** A contract count as Kalshi reports it, in whole contracts and in hundredths (its `*_fp` twin). */
interface ContractCount {
  whole: number;
  hundredths: number;
}

/** Reconciles an integer count and its `*_fp` twin, either of which newer or older payloads may lack. */
function contractCount(whole: number | null, hundredths: number | null): ContractCount | null {
  if (hundredths !== null) return { whole: whole ?? Math.trunc(hundredths / 100), hundredths };
  return whole === null ? null : { whole, hundredths: whole * 100 };
}

function sumCounts(counts: readonly (ContractCount | null)[]): ContractCount {
  return counts.reduce<ContractCount>(
    (sum, c) => ({ whole: sum.whole + (c?.whole ?? 0), hundredths: sum.hundredths + (c?.hundredths ?? 0) }),
    { whole: 0, hundredths: 0 },
  );
}

function fixedPointOf(count: ContractCount | null): string | null {
  return count === null ? null : formatUnits(count.hundredths, FIXED_POINT_DIGITS);
}

/** The quoted price, preferring the `*_dollars` field (sub-cent precision) over legacy cents. */
function priceOf(dollars: number | null, cents: number | null): string | null {
  const basisPoints = dollars ?? cents;
  return basisPoints === null ? null : formatUnits(basisPoints, PRICE_DIGITS);
}

/** Kalshi's liquidity in cents, from the deprecated integer or its dollar twin. */
function liquidityOf(item: { liquidity: number | null; liquidity_dollars: number | null }): number | null {
  return item.liquidity ?? item.liquidity_dollars;
}

const TRADABLE_STATUSES: ReadonlySet<MarketStatus> = new Set([
  "active",
  "inactive",
  "closed",
  "determined",
  "finalized",
]);
const SETTLED_STATUSES: ReadonlySet<MarketStatus> = new Set(["determined", "finalized"]);

function isTokenized(status: MarketStatus, policy: TokenizePolicy): boolean {
  if (policy === "all") return true;
  return policy === "tradable" && TRADABLE_STATUSES.has(status);
}

/** Converts a validated Kalshi market to our market record. */
export function kalshiMarketToRecord(m: KalshiMarket, options: KalshiImportOptions = {}): MarketRecord {
  const volume = contractCount(m.volume, m.volume_fp);
  const openInterest = contractCount(m.open_interest, m.open_interest_fp);
  const result = m.result ?? "";
  // A settlement value only means a scalar payout when neither side simply won.
  const settlementValue = m.settlement_value_dollars ?? m.settlement_value;
  const isScalarPayout = result === "" && SETTLED_STATUSES.has(m.status);
  return {
    ticker: m.ticker,
    eventTicker: m.event_ticker,
    marketType: m.market_type,
    title: m.title,
    subtitle: m.subtitle,
    yesSubTitle: m.yes_sub_title,
    noSubTitle: m.no_sub_title,
    openTime: m.open_time,
    closeTime: m.close_time,
    // Newer payloads may carry only `latest_expiration_time`; failing both, the close time is the
    // earliest the market can expire.
    expirationTime: m.expiration_time ?? m.latest_expiration_time ?? m.close_time,
    status: m.status,
    result,
    volume: volume?.whole ?? 0,
    openInterest: openInterest?.whole ?? 0,
    canCloseEarly: m.can_close_early,
    fractionalTradingEnabled: m.fractional_trading_enabled,
    rulesPrimary: m.rules_primary,
    earlyCloseCondition: m.early_close_condition,
    rulesSecondary: m.rules_secondary,
    yesBid: priceOf(m.yes_bid_dollars, m.yes_bid),
    yesAsk: priceOf(m.yes_ask_dollars, m.yes_ask),
    noBid: priceOf(m.no_bid_dollars, m.no_bid),
    noAsk: priceOf(m.no_ask_dollars, m.no_ask),
    volumeFp: fixedPointOf(volume),
    volume24hFp: fixedPointOf(contractCount(m.volume_24h, m.volume_24h_fp)),
    openInterestFp: fixedPointOf(openInterest),
    tokenized: isTokenized(m.status, options.tokenize ?? "none"),
    scalarOutcomePct: isScalarPayout ? settlementValue : null,
  };
}

function metadataString(metadata: Record<string, unknown> | null, key: string): string | null {
  const value = metadata?.[key];
  return typeof value === "string" ? value : null;
}

/**
 * Converts a validated Kalshi event to our event record. Totals Kalshi leaves out are summed over the
 * nested markets, or null when the event carries none.
 */
export function kalshiEventToRecord(e: KalshiEvent): EventRecord {
  const markets = e.markets;
  /** The event's own count if Kalshi gives one, else the sum over its markets. */
  const total = (own: ContractCount | null, ofMarket: (m: KalshiMarket) => ContractCount | null) =>
    own ?? (markets === null ? null : sumCounts(markets.map(ofMarket)));
  const volume = total(contractCount(e.volume, e.volume_fp), (m) => contractCount(m.volume, m.volume_fp));
  const volume24h = total(contractCount(e.volume_24h, e.volume_24h_fp), (m) =>
    contractCount(m.volume_24h, m.volume_24h_fp),
  );
  const openInterest = total(contractCount(e.open_interest, e.open_interest_fp), (m) =>
    contractCount(m.open_interest, m.open_interest_fp),
  );
  const marketLiquidity = markets?.reduce((sum, m) => sum + (liquidityOf(m) ?? 0), 0) ?? null;
  return {
    ticker: e.event_ticker,
    seriesTicker: e.series_ticker,
    title: e.title,
    subtitle: e.sub_title,
    competition: metadataString(e.product_metadata, "competition"),
    competitionScope: metadataString(e.product_metadata, "competition_scope"),
    imageUrl: e.image_url,
    liquidity: liquidityOf(e) ?? marketLiquidity,
    openInterest: openInterest?.whole ?? null,
    openInterestFp: fixedPointOf(openInterest),
    settlementSources: e.settlement_sources,
    strikeDate: e.strike_date,
    strikePeriod: e.strike_period,
    volume: volume?.whole ?? null,
    volume24h: volume24h?.whole ?? null,
    volume24hFp: fixedPointOf(volume24h),
    volumeFp: fixedPointOf(volume),
  };
}

/** Converts a validated Kalshi series to our series; fields it lacks get the defaults of a synthesized one. */
export function kalshiSeriesToRecord(s: KalshiSeries): Series {
  return {
    ticker: s.ticker,
    title: s.title ?? s.ticker,
    category: s.category ?? "Other",
    tags: s.tags ?? [],
    frequency: s.frequency ?? "custom",
    feeType: s.fee_type ?? "quadratic",
    feeMultiplier: s.fee_multiplier ?? 1,
    contractUrl: s.contract_url,
    contractTermsUrl: s.contract_terms_url,
    settlementSources: s.settlement_sources ?? [],
    additionalProhibitions: s.additional_prohibitions ?? null,
    productMetadata: s.product_metadata,
  };
}

/** A minimal series for an event whose series the input does not include. */
export function seriesForKalshiEvent(e: KalshiEvent): Series {
  return kalshiSeriesToRecord(KalshiSeries.parse({ ticker: e.series_ticker, category: e.category }));
}
