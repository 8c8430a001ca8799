/**
 * Turns a family's plan of an event (its times, outcomes, beliefs and realized payouts) into catalogue
 * records. Status, book, volumes and results all follow from the plan and the catalogue's moment, so
 * every family gets the same lifecycle and the same price and count invariants.
 */
import {
  type CatalogueEvent,
  type MarketRecord,
  type MarketStatus,
  type Series,
  toFixedPoint,
} from "../contract/markets.js";
import { DAY, HOUR } from "./calendar.js";
import { clamp, type Random } from "./random.js";

/** Share of tradable events paused (`inactive`) at the catalogue's moment. */
const PAUSED_SHARE = 0.03;
/** Share of markets past `initialized` whose outcome tokens exist on chain. */
const TOKENIZED_SHARE = 0.72;

export interface MarketTerms {
  canCloseEarly: boolean;
  earlyCloseCondition: string | null;
  rulesSecondary: string | null;
  fractionalTradingEnabled: boolean;
}

export interface OutcomePlan {
  /** Appended to the event ticker after a dash: "B47.5", "T52", "BOS". */
  suffix: string;
  title: string;
  yesSubTitle: string;
  rulesPrimary: string;
  /** The market's belief in YES at the catalogue's moment; sets the book of a tradable market. */
  probability: number;
  /** What YES pays once settled, 0–1: 1 or 0 for a binary market, a fraction for a scalar one. */
  payout: number;
  /** Scalar markets settle with result "" and a payout in basis points instead of yes/no. */
  scalar?: boolean;
}

export interface EventPlan {
  series: Series;
  terms: MarketTerms;
  ticker: string;
  title: string;
  subtitle: string;
  competition?: string;
  competitionScope?: string;
  strikeDate: number | null;
  strikePeriod: string | null;
  openTime: number;
  closeTime: number;
  expirationTime: number;
  /** When the outcome is known; the event is `closed` between its close time and this moment. */
  settledAt: number;
  /** How long after `settledAt` the result becomes final, as a [min, max] range of seconds. */
  finalizationDelay?: readonly [number, number];
  /** Contracts the whole event trades over its life (before random variation). */
  expectedVolume: number;
  outcomes: OutcomePlan[];
}

/** What every family generator works from: the seeded root stream, the catalogue's moment and scale. */
export interface DemoContext {
  root: Random;
  /** The moment the catalogue describes, Unix seconds (noon UTC on the anchor day). */
  now: number;
  /** Day number of the anchor day. */
  today: number;
  scale: number;
}

export interface FamilyCatalogue {
  series: Series[];
  events: CatalogueEvent[];
}

/** How many periods (days, hours, months…) of settled history a family keeps at the context's scale. */
export function historyLength(ctx: DemoContext, periodsAtScaleOne: number): number {
  return Math.max(1, Math.round(periodsAtScaleOne * ctx.scale));
}

/** The https image shown for a series' events. */
function seriesImageUrl(seriesTicker: string): string {
  return `https://assets.oddsgate.example/series/${seriesTicker}.png`;
}

/** A series with the venue-wide fee schedule and document locations filled in. */
export function makeSeries(
  fields: Omit<Series, "feeType" | "feeMultiplier" | "contractUrl" | "contractTermsUrl"> & { terms: string },
): Series {
  const { terms, ...rest } = fields;
  return {
    ticker: rest.ticker,
    title: rest.title,
    category: rest.category,
    tags: rest.tags,
    frequency: rest.frequency,
    feeType: "quadratic",
    feeMultiplier: 1,
    contractUrl: `https://docs.oddsgate.example/contracts/${rest.ticker}.pdf`,
    contractTermsUrl: `https://docs.oddsgate.example/contract-terms/${terms}.pdf`,
    settlementSources: rest.settlementSources,
    additionalProhibitions: rest.additionalProhibitions,
    productMetadata: rest.productMetadata,
  };
}

/** Where an event stands at `now`: every market of an event shares its status. */
function lifecycle(plan: EventPlan, now: number, rng: Random): MarketStatus {
  if (now < plan.openTime) return "initialized";
  if (now < plan.closeTime) return rng.chance(PAUSED_SHARE) ? "inactive" : "active";
  if (now < plan.settledAt) return "closed";
  // Settlement is usually confirmed (finalized) some hours to two days after the outcome is determined.
  const [min, max] = plan.finalizationDelay ?? [2 * HOUR, 2 * DAY];
  return now < plan.settledAt + rng.between(min, max) ? "determined" : "finalized";
}

/** Fraction of an event's lifetime volume traded by time `t`; trading picks up towards the close. */
function tradedShare(plan: EventPlan, t: number): number {
  if (t <= plan.openTime) return 0;
  if (t >= plan.closeTime) return 1;
  const elapsed = (t - plan.openTime) / (plan.closeTime - plan.openTime);
  return elapsed * elapsed;
}

const price = (cents: number) => (cents / 100).toFixed(4);

interface Book {
  yesBid: string | null;
  yesAsk: string | null;
  noBid: string | null;
  noAsk: string | null;
}

const NO_BOOK: Book = { yesBid: null, yesAsk: null, noBid: null, noAsk: null };

/** Top of book around a probability, in whole cents as the exchange quotes; NO mirrors YES. */
function quote(probability: number, maxSpread: number, rng: Random): Book {
  const mid = clamp(Math.round(probability * 100), 1, 99);
  const spread = rng.int(1, maxSpread);
  const yesBid = clamp(mid - Math.floor(spread / 2), 1, 98);
  const yesAsk = clamp(yesBid + spread, yesBid + 1, 99);
  return {
    yesBid: price(yesBid),
    yesAsk: price(yesAsk),
    noBid: price(100 - yesAsk),
    noAsk: price(100 - yesBid),
  };
}

/** Builds an event and its markets from a plan, as they stand at `now`. */
export function buildEvent(plan: EventPlan, now: number, root: Random): CatalogueEvent {
  const rng = root.fork(`${plan.ticker}:book`);
  const status = lifecycle(plan, now, rng);
  const tradable = status === "active" || status === "inactive";
  const settled = status === "determined" || status === "finalized";
  const share = tradedShare(plan, now);
  const shareLastDay = share - tradedShare(plan, now - DAY);
  const lifetimeVolume = plan.expectedVolume * rng.logNormal(1, 0.35);
  // Heavy books trade at one or two cents wide; thin ones up to five.
  const maxSpread = plan.expectedVolume >= 200_000 ? 2 : plan.expectedVolume >= 30_000 ? 3 : 5;
  // Traders crowd the outcomes still in doubt.
  const weights = plan.outcomes.map(
    (o) => (o.probability * (1 - o.probability) + 0.02) * rng.logNormal(1, 0.5),
  );
  const totalWeight = weights.reduce((sum, w) => sum + w, 0);

  let volume24h = 0;
  const markets = plan.outcomes.map((outcome, i): MarketRecord => {
    const lifetime = (lifetimeVolume * (weights[i] as number)) / totalWeight;
    const volume = Math.round(lifetime * share);
    const lastDay = Math.min(volume, Math.round(lifetime * shareLastDay));
    volume24h += lastDay;
    const openInterest = status === "initialized" ? 0 : Math.round(volume * rng.between(0.2, 0.6));
    // A closed market's last quotes already lean hard towards the outcome everyone can see.
    const book = tradable
      ? quote(outcome.probability, maxSpread, rng)
      : status === "closed"
        ? quote(0.9 * outcome.payout + 0.1 * outcome.probability, maxSpread, rng)
        : NO_BOOK;
    const scalarOutcomePct = settled && outcome.scalar ? Math.round(outcome.payout * 10_000) : null;
    const result = !settled || outcome.scalar ? "" : outcome.payout >= 0.5 ? "yes" : "no";
    return {
      ticker: `${plan.ticker}-${outcome.suffix}`,
      eventTicker: plan.ticker,
      marketType: outcome.scalar ? "scalar" : "binary",
      title: outcome.title,
      subtitle: "",
      yesSubTitle: outcome.yesSubTitle,
      noSubTitle: outcome.yesSubTitle,
      openTime: plan.openTime,
      closeTime: plan.closeTime,
      expirationTime: plan.expirationTime,
      status,
      result,
      volume,
      openInterest,
      canCloseEarly: plan.terms.canCloseEarly,
      fractionalTradingEnabled: plan.terms.fractionalTradingEnabled,
      rulesPrimary: outcome.rulesPrimary,
      earlyCloseCondition: plan.terms.earlyCloseCondition,
      rulesSecondary: plan.terms.rulesSecondary,
      ...book,
      volumeFp: toFixedPoint(volume),
      volume24hFp: toFixedPoint(lastDay),
      openInterestFp: toFixedPoint(openInterest),
      tokenized: status !== "initialized" && rng.chance(TOKENIZED_SHARE),
      scalarOutcomePct,
    };
  });

  const volume = markets.reduce((total, m) => total + m.volume, 0);
  const openInterest = markets.reduce((total, m) => total + m.openInterest, 0);
  // Resting depth in dollars; only a tradable event has a book to measure.
  const liquidity = tradable ? Math.round(lifetimeVolume * rng.between(0.01, 0.05)) + rng.int(200, 2_000) : 0;
  return {
    ticker: plan.ticker,
    seriesTicker: plan.series.ticker,
    title: plan.title,
    subtitle: plan.subtitle,
    competition: plan.competition ?? null,
    competitionScope: plan.competitionScope ?? null,
    imageUrl: seriesImageUrl(plan.series.ticker),
    liquidity,
    openInterest,
    openInterestFp: toFixedPoint(openInterest),
    settlementSources: plan.series.settlementSources,
    strikeDate: plan.strikeDate,
    strikePeriod: plan.strikePeriod,
    volume,
    volume24h,
    volume24hFp: toFixedPoint(volume24h),
    volumeFp: toFixedPoint(volume),
    markets,
  };
}

/** Probabilities for consecutive bins of a normal belief, given the bins' inner edges. */
export function binProbabilities(edges: readonly number[], cdf: (x: number) => number): number[] {
  const probabilities: number[] = [];
  let below = 0;
  for (const edge of edges) {
    const upTo = cdf(edge);
    probabilities.push(upTo - below);
    below = upTo;
  }
  probabilities.push(1 - below);
  return probabilities;
}

/** "92,250" or "3,105.50": grouped by hand, as locale data differs between Node builds. */
export function grouped(amount: number, fractionDigits = 0): string {
  const [whole, fraction] = amount.toFixed(fractionDigits).split(".");
  const digits = (whole as string).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return fraction === undefined ? digits : `${digits}.${fraction}`;
}

/** "$92,250" or "$3,105.50" */
export function dollars(amount: number, fractionDigits = 0): string {
  return amount < 0 ? `-$${grouped(-amount, fractionDigits)}` : `$${grouped(amount, fractionDigits)}`;
}

/** A strike as it appears in a ticker: no trailing zeros, "47.5", "92249.99", "3.25". */
export function strikeLabel(value: number): string {
  return String(Number(value.toFixed(2)));
}
