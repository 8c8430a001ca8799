/**
 * Our records in Kalshi trade-api v2's JSON, as of a moment: the exact inverse of the import mapping
 * (`markets/import/kalshi.ts`), so a sync of an unchanged exchange finds nothing to change. Both the
 * current dollar/fixed-point fields and their legacy integer twins are sent, as Kalshi does.
 */
import type { Series } from "../contract/markets.js";
import { ONE_DOLLAR, type Quote, type SimulatedTrade } from "./dynamics.js";
import type { SimulatedEvent, SimulatedMarket } from "./exchange.js";
import type { Strike } from "./forecast.js";

/** Unix seconds as Kalshi's RFC 3339 timestamps (whole seconds, Z). */
export const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
/** Basis points as Kalshi's dollar string ("0.4200"). */
export const dollars = (basisPoints: number) => (basisPoints / ONE_DOLLAR).toFixed(4);
/** Whole contracts as a fixed-point count ("125.00"). */
export const contracts = (count: number) => `${count}.00`;
const cents = (basisPoints: number | null) => (basisPoints === null ? null : Math.round(basisPoints / 100));

/** GetSeries' `series`. */
export function kalshiSeries(series: Series): Record<string, unknown> {
  return {
    ticker: series.ticker,
    title: series.title,
    category: series.category,
    tags: series.tags,
    frequency: series.frequency,
    fee_type: series.feeType,
    fee_multiplier: series.feeMultiplier,
    contract_url: series.contractUrl,
    contract_terms_url: series.contractTermsUrl,
    settlement_sources: series.settlementSources,
    additional_prohibitions: series.additionalProhibitions,
    product_metadata: series.productMetadata,
  };
}

/** A market as GetMarket sends it at `now`; `quote`, when takers moved its book, replaces the dynamics' one. */
export function kalshiMarket(
  market: SimulatedMarket,
  now: number,
  strike?: Strike,
  quote: Quote | null = market.dynamics.quoteAt(now, market.lifecycle.status),
): Record<string, unknown> {
  const { record, lifecycle } = market;
  const yesBid = quote?.yesBid ?? null;
  const yesAsk = quote?.yesAsk ?? null;
  const noBid = yesAsk === null ? null : ONE_DOLLAR - yesAsk;
  const noAsk = yesBid === null ? null : ONE_DOLLAR - yesBid;
  const price = (bp: number | null) => (bp === null ? null : dollars(bp));
  const settled = lifecycle.status === "determined" || lifecycle.status === "finalized";
  const settlement = !settled
    ? null
    : lifecycle.result === "yes"
      ? ONE_DOLLAR
      : lifecycle.result === "no"
        ? 0
        : lifecycle.scalarOutcomePct;
  const count = (fp: string | null, whole: number) => fp ?? contracts(whole);
  return {
    ticker: record.ticker,
    event_ticker: record.eventTicker,
    market_type: record.marketType,
    title: record.title,
    subtitle: record.subtitle,
    yes_sub_title: record.yesSubTitle,
    no_sub_title: record.noSubTitle,
    open_time: iso(record.openTime),
    close_time: iso(record.closeTime),
    expiration_time: iso(record.expirationTime),
    latest_expiration_time: iso(record.expirationTime),
    status: lifecycle.status,
    result: lifecycle.result,
    can_close_early: record.canCloseEarly,
    early_close_condition: record.earlyCloseCondition,
    fractional_trading_enabled: record.fractionalTradingEnabled,
    rules_primary: record.rulesPrimary,
    rules_secondary: record.rulesSecondary,
    response_price_units: "usd_cent",
    notional_value: 100,
    notional_value_dollars: "1.0000",
    tick_size: 1,
    yes_bid: cents(yesBid),
    yes_ask: cents(yesAsk),
    no_bid: cents(noBid),
    no_ask: cents(noAsk),
    yes_bid_dollars: price(yesBid),
    yes_ask_dollars: price(yesAsk),
    no_bid_dollars: price(noBid),
    no_ask_dollars: price(noAsk),
    last_price: cents(yesBid),
    last_price_dollars: price(yesBid),
    volume: record.volume,
    volume_fp: count(record.volumeFp, record.volume),
    volume_24h: record.volume24hFp === null ? null : Number.parseInt(record.volume24hFp, 10),
    volume_24h_fp: record.volume24hFp,
    open_interest: record.openInterest,
    open_interest_fp: count(record.openInterestFp, record.openInterest),
    settlement_value: cents(settlement),
    settlement_value_dollars: price(settlement),
    strike_type: strike?.type ?? null,
    floor_strike: strike && strike.type !== "less" ? strike.floor : null,
    cap_strike: strike && strike.type !== "greater" ? strike.cap : null,
  };
}

/** An event as GetEvents sends it; `markets` only when nested markets were asked for. */
export function kalshiEvent(
  event: SimulatedEvent,
  category: string | null,
  markets?: Record<string, unknown>[],
): Record<string, unknown> {
  const { record } = event;
  const metadata: Record<string, string> = {};
  if (record.competition !== null) metadata.competition = record.competition;
  if (record.competitionScope !== null) metadata.competition_scope = record.competitionScope;
  return {
    event_ticker: record.ticker,
    series_ticker: record.seriesTicker,
    title: record.title,
    sub_title: record.subtitle,
    category,
    mutually_exclusive: event.markets.length > 1,
    strike_date: record.strikeDate === null ? null : iso(record.strikeDate),
    strike_period: record.strikePeriod,
    image_url: record.imageUrl,
    settlement_sources: record.settlementSources,
    product_metadata: Object.keys(metadata).length > 0 ? metadata : null,
    volume: record.volume,
    volume_fp: record.volumeFp,
    volume_24h: record.volume24h,
    volume_24h_fp: record.volume24hFp,
    open_interest: record.openInterest,
    open_interest_fp: record.openInterestFp,
    liquidity: record.liquidity,
    ...(markets ? { markets } : {}),
  };
}

/** Colours a market is drawn in, as Kalshi's apps tell an event's outcomes apart: by position. */
const MARKET_COLORS = [
  "#1E88E5",
  "#D81B60",
  "#43A047",
  "#FB8C00",
  "#8E24AA",
  "#00ACC1",
  "#6D4C41",
  "#546E7A",
];

/** GetEventMetadata's answer: the event's image, its markets' images and colours, its settlement sources. */
export function kalshiEventMetadata(
  event: SimulatedEvent,
  series: Series | undefined,
): Record<string, unknown> {
  const { record } = event;
  const image = record.imageUrl ?? "";
  return {
    image_url: image,
    market_details: event.markets.map((market, i) => ({
      market_ticker: market.record.ticker,
      image_url: image,
      color_code: MARKET_COLORS[i % MARKET_COLORS.length],
    })),
    settlement_sources: record.settlementSources ?? series?.settlementSources ?? [],
    competition: record.competition,
    competition_scope: record.competitionScope,
  };
}

/** A trade as GetTrades sends it. */
export function kalshiTrade(trade: SimulatedTrade): Record<string, unknown> {
  const noPrice = ONE_DOLLAR - trade.yesPrice;
  return {
    trade_id: trade.tradeId,
    ticker: trade.ticker,
    count: trade.count,
    count_fp: contracts(trade.count),
    price: cents(trade.yesPrice),
    yes_price: cents(trade.yesPrice),
    no_price: cents(noPrice),
    yes_price_dollars: dollars(trade.yesPrice),
    no_price_dollars: dollars(noPrice),
    taker_side: trade.takerSide,
    taker_outcome_side: trade.takerSide,
    // The taker's side of the YES book: a YES buyer bids, a NO buyer sells YES (asks).
    taker_book_side: trade.takerSide === "yes" ? "bid" : "ask",
    is_block_trade: false,
    created_time: iso(trade.time),
  };
}
