/**
 * Price-level markets: daily crypto ranges (KXBTC, KXETH, KXSOL), hourly crypto thresholds (KXBTCD,
 * KXETHD), daily index ranges (KXINX, KXNASDAQ100) and weekly oil ranges (KXWTIW). Each underlying
 * follows one seeded random walk, so an hourly event and a daily one at the same moment agree.
 */
import type { CatalogueEvent, Series } from "../contract/markets.js";
import {
  binProbabilities,
  buildEvent,
  type DemoContext,
  dollars,
  type EventPlan,
  type FamilyCatalogue,
  grouped,
  historyLength,
  type MarketTerms,
  makeSeries,
  type OutcomePlan,
  strikeLabel,
} from "./build.js";
import {
  civil,
  clockLabel,
  DAY,
  EASTERN,
  HOUR,
  localTime,
  longDate,
  MINUTE,
  shortDate,
  tickerDate,
  toLocal,
  zoneName,
} from "./calendar.js";
import { normalCdf, type Random } from "./random.js";

/** Settled periods kept per unit of scale. */
const HISTORY_DAYS = 7;
const HISTORY_HOURS = 24;
const HISTORY_WEEKS = 2;
/** Hourly events listed ahead of the current hour. */
const HOURS_AHEAD = 6;

/** An underlying's level over time: a log-normal random walk in hourly steps, pinned at `now`. */
class PricePath {
  private readonly ahead: number[];
  private readonly behind: number[];
  private readonly aheadRng: Random;
  private readonly behindRng: Random;
  private readonly originHour: number;

  constructor(
    rng: Random,
    level: number,
    readonly hourlyVol: number,
    now: number,
  ) {
    this.ahead = [level];
    this.behind = [level];
    this.aheadRng = rng.fork("ahead");
    this.behindRng = rng.fork("behind");
    this.originHour = Math.floor(now / HOUR);
  }

  /** The level at the start of `t`'s hour. Steps are drawn outward from `now`, so history is stable. */
  at(t: number): number {
    const k = Math.floor(t / HOUR) - this.originHour;
    const [steps, rng] = k >= 0 ? [this.ahead, this.aheadRng] : [this.behind, this.behindRng];
    const index = Math.abs(k);
    while (steps.length <= index) {
      steps.push((steps[steps.length - 1] as number) * Math.exp(rng.normal(0, this.hourlyVol)));
    }
    return steps[index] as number;
  }

  /** Belief about the level at `t` as seen at `now`: centred on today's level, widening with time. */
  belief(t: number, now: number): { mean: number; sd: number } {
    if (t <= now) return { mean: this.at(t), sd: this.at(t) * 0.0005 };
    const hours = (t - now) / HOUR;
    return { mean: this.at(now), sd: this.at(now) * this.hourlyVol * Math.sqrt(hours) };
  }
}

interface Underlying {
  /** "Bitcoin price", "S&P 500" */
  name: string;
  path: PricePath;
  /** Formats a level as titles show it: "$91,000", "6,600". */
  format: (level: number, fractionDigits?: number) => string;
  /** How rules say where the settlement value comes from, before "on <date>". */
  source: (when: string) => string;
}

interface RangeFamily {
  series: Series;
  terms: MarketTerms;
  underlying: Underlying;
  width: number;
  buckets: number;
  /** Decimals of a bucket's lower edge in subtitles ("$91,000" vs "$61.00"). */
  edgeDigits: number;
  expectedVolume: number;
}

const CRYPTO_TERMS: MarketTerms = {
  canCloseEarly: false,
  earlyCloseCondition: null,
  rulesSecondary:
    "The settlement value is the simple average of the sixty one-second values of the named CF Benchmarks " +
    "Real-Time Index in the minute before the stated time. If the index is not published, the market " +
    "settles on the first value published afterwards.",
  fractionalTradingEnabled: false,
};
const HOURLY_TERMS: MarketTerms = { ...CRYPTO_TERMS, fractionalTradingEnabled: true };
const INDEX_TERMS: MarketTerms = {
  canCloseEarly: false,
  earlyCloseCondition: null,
  rulesSecondary:
    "If the exchange does not open on the stated date, the market settles on the next official close.",
  fractionalTradingEnabled: false,
};
const OIL_TERMS: MarketTerms = { ...INDEX_TERMS, rulesSecondary: null };

/** The outcomes of a range event: a low tail, `buckets` ranges of `width` from `low`, a high tail. */
function rangeOutcomes(
  family: RangeFamily,
  low: number,
  settlement: number,
  probabilities: readonly number[],
  titleOf: (range: string) => string,
  rulesOf: (clause: string) => string,
): OutcomePlan[] {
  const { format } = family.underlying;
  const { width, buckets, edgeDigits } = family;
  const high = low + width * buckets;
  const outcome = (suffix: string, range: string, clause: string, wins: boolean, i: number): OutcomePlan => ({
    suffix,
    title: titleOf(range),
    yesSubTitle: range,
    rulesPrimary: rulesOf(clause),
    probability: probabilities[i] as number,
    payout: wins ? 1 : 0,
  });
  const belowLow = format(low - 0.01, 2);
  const outcomes = [
    outcome(
      `T${strikeLabel(low - 0.01)}`,
      `${belowLow} or below`,
      `${belowLow} or below`,
      settlement < low,
      0,
    ),
  ];
  for (let i = 0; i < buckets; i++) {
    const from = low + width * i;
    const range = `${format(from, edgeDigits)} to ${format(from + width - 0.01, 2)}`;
    const wins = settlement >= from && settlement < from + width;
    outcomes.push(
      outcome(
        `B${strikeLabel(from + width / 2)}`,
        range,
        `between ${range.replace(" to ", " and ")}`,
        wins,
        i + 1,
      ),
    );
  }
  const aboveHigh = `${format(high, edgeDigits)} or above`;
  outcomes.push(
    outcome(`T${strikeLabel(high - 0.01)}`, aboveHigh, aboveHigh, settlement >= high, buckets + 1),
  );
  return outcomes;
}

/** A range event settling at `closeTime`, listed at `openTime` around the level of that moment. */
function rangePlan(
  ctx: DemoContext,
  family: RangeFamily,
  ticker: string,
  openTime: number,
  closeTime: number,
  when: { date: string; longDate: string; clock: string },
  strikePeriod: string,
): EventPlan {
  const rng = ctx.root.fork(ticker);
  const { path, name } = family.underlying;
  const low = Math.round(path.at(openTime) / family.width - family.buckets / 2) * family.width;
  const settlement = path.at(closeTime);
  const belief = path.belief(closeTime, ctx.now);
  const edges = Array.from({ length: family.buckets + 1 }, (_, i) => low + family.width * i);
  const probabilities = binProbabilities(edges, (x) => normalCdf(x, belief.mean, belief.sd));
  const moment = `${when.clock} on ${when.date}`;
  const outcomes = rangeOutcomes(
    family,
    low,
    settlement,
    probabilities,
    (range) => `Will the ${name} be ${range.replace(" to ", "-")} at ${moment}?`,
    (clause) =>
      `If ${family.underlying.source(`${when.clock} on ${when.longDate}`)} is ${clause}, then the market resolves to Yes.`,
  );
  return {
    series: family.series,
    terms: family.terms,
    ticker,
    title: `${name} range at ${moment}?`,
    subtitle: `At ${moment}`,
    strikeDate: closeTime,
    strikePeriod,
    openTime,
    closeTime,
    expirationTime: closeTime + DAY,
    settledAt: closeTime + rng.between(3 * MINUTE, 30 * MINUTE),
    expectedVolume: family.expectedVolume,
    outcomes,
  };
}

function etMoment(day: number, hours: number) {
  return {
    date: shortDate(day),
    longDate: longDate(day),
    clock: `${clockLabel(hours)} ${zoneName(EASTERN, day)}`,
  };
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * Daily ranges fixed at `hours` ET, listed when the previous day's event settles. Index events skip
 * weekends and carry the exchange's "H1600" close marker in their tickers; crypto trades every day.
 */
function dailyRanges(
  ctx: DemoContext,
  family: RangeFamily,
  hours: number,
  weekdaysOnly: boolean,
): CatalogueEvent[] {
  const tradingDays: number[] = [];
  const isTradingDay = (day: number) => !weekdaysOnly || (civil(day).weekday + 6) % 7 < 5;
  for (let day = ctx.today - historyLength(ctx, HISTORY_DAYS); day <= ctx.today + 1; day++) {
    if (isTradingDay(day)) tradingDays.push(day);
  }
  let previous = ctx.today - historyLength(ctx, HISTORY_DAYS) - 1;
  while (!isTradingDay(previous)) previous--;
  const events: CatalogueEvent[] = [];
  for (const day of tradingDays) {
    const clock = weekdaysOnly ? `H${pad2(hours)}00` : pad2(hours);
    const ticker = `${family.series.ticker}-${tickerDate(day)}${clock}`;
    const plan = rangePlan(
      ctx,
      family,
      ticker,
      localTime(EASTERN, previous, hours),
      localTime(EASTERN, day, hours),
      etMoment(day, hours),
      "day",
    );
    events.push(buildEvent(plan, ctx.now, ctx.root));
    previous = day;
  }
  return events;
}

/** Weekly ranges settling on Fridays at `hours` ET. */
function weeklyRanges(ctx: DemoContext, family: RangeFamily, hours: number): CatalogueEvent[] {
  const nextFriday = ctx.today + ((5 - civil(ctx.today).weekday + 7) % 7);
  const events: CatalogueEvent[] = [];
  for (
    let friday = nextFriday - 7 * historyLength(ctx, HISTORY_WEEKS);
    friday <= nextFriday + 7;
    friday += 7
  ) {
    const ticker = `${family.series.ticker}-${tickerDate(friday)}`;
    const plan = rangePlan(
      ctx,
      family,
      ticker,
      localTime(EASTERN, friday - 7, hours),
      localTime(EASTERN, friday, hours),
      etMoment(friday, hours),
      "week",
    );
    events.push(buildEvent(plan, ctx.now, ctx.root));
  }
  return events;
}

/** Hourly "above" ladders: each ET hour's event lists four hours before it fixes. */
function hourlyThresholds(
  ctx: DemoContext,
  series: Series,
  underlying: Underlying,
  step: number,
  expectedVolume: number,
): CatalogueEvent[] {
  const current = toLocal(EASTERN, ctx.now);
  const currentHour = current.day * 24 + Math.floor(current.hours);
  const events: CatalogueEvent[] = [];
  for (
    let index = currentHour - historyLength(ctx, HISTORY_HOURS);
    index <= currentHour + HOURS_AHEAD;
    index++
  ) {
    const day = Math.floor(index / 24);
    const hour = index - day * 24;
    const ticker = `${series.ticker}-${tickerDate(day)}${pad2(hour)}`;
    const rng = ctx.root.fork(ticker);
    const closeTime = localTime(EASTERN, day, hour);
    const openTime = closeTime - 4 * HOUR;
    const { path, name, format } = underlying;
    const centre = Math.round(path.at(openTime) / step) * step;
    const settlement = path.at(closeTime);
    const belief = path.belief(closeTime, ctx.now);
    const when = etMoment(day, hour);
    const moment = `${when.clock} on ${when.date}`;
    const outcomes: OutcomePlan[] = [];
    for (let i = -4; i <= 4; i++) {
      const strike = centre + i * step;
      const above = `${format(strike)} or above`;
      outcomes.push({
        suffix: `T${strikeLabel(strike - 0.01)}`,
        title: `Will the ${name} be ${format(strike)} or above at ${moment}?`,
        yesSubTitle: above,
        rulesPrimary: `If ${underlying.source(`${when.clock} on ${when.longDate}`)} is above ${format(strike - 0.01, 2)}, then the market resolves to Yes.`,
        probability: 1 - normalCdf(strike, belief.mean, belief.sd),
        payout: settlement >= strike ? 1 : 0,
      });
    }
    const plan: EventPlan = {
      series,
      terms: HOURLY_TERMS,
      ticker,
      title: `${name} at ${moment}?`,
      subtitle: `At ${moment}`,
      strikeDate: closeTime,
      strikePeriod: "hour",
      openTime,
      closeTime,
      expirationTime: closeTime + DAY,
      settledAt: closeTime + rng.between(2 * MINUTE, 15 * MINUTE),
      expectedVolume,
      outcomes,
    };
    events.push(buildEvent(plan, ctx.now, ctx.root));
  }
  return events;
}

function cryptoSeries(
  ticker: string,
  title: string,
  symbol: string,
  index: string,
  frequency: string,
): Series {
  return makeSeries({
    ticker,
    title,
    category: "Crypto",
    tags: [symbol],
    frequency,
    settlementSources: [{ name: "CF Benchmarks", url: `https://www.cfbenchmarks.com/data/indices/${index}` }],
    additionalProhibitions: null,
    productMetadata: { index, underlying: symbol },
    terms: "crypto-price",
  });
}

function crypto(
  ctx: DemoContext,
  symbol: string,
  coin: string,
  index: string,
  level: number,
  hourlyVol: number,
): Underlying {
  return {
    name: `${coin} price`,
    path: new PricePath(ctx.root.fork(`path:${symbol}`), level, hourlyVol, ctx.now),
    format: dollars,
    source: (when) =>
      `the simple average of the sixty seconds of CF Benchmarks' ${coin} Real-Time Index (${index}) before ${when}`,
  };
}

/** The crypto, index and oil families. */
export function assetCatalogue(ctx: DemoContext): FamilyCatalogue {
  const bitcoin = crypto(ctx, "BTC", "Bitcoin", "BRTI", 92_000, 0.005);
  const ether = crypto(ctx, "ETH", "Ethereum", "ETHUSD_RTI", 3_100, 0.007);
  const solana = crypto(ctx, "SOL", "Solana", "SOLUSD_RTI", 140, 0.009);
  const sp500: Underlying = {
    name: "S&P 500",
    path: new PricePath(ctx.root.fork("path:SPX"), 6_650, 0.0022, ctx.now),
    format: grouped,
    source: (when) => `the closing value of the S&P 500 index published by S&P Dow Jones Indices for ${when}`,
  };
  const nasdaq: Underlying = {
    name: "Nasdaq-100",
    path: new PricePath(ctx.root.fork("path:NDX"), 24_500, 0.0028, ctx.now),
    format: grouped,
    source: (when) => `the closing value of the Nasdaq-100 index published by Nasdaq for ${when}`,
  };
  const oil: Underlying = {
    name: "WTI crude oil price",
    path: new PricePath(ctx.root.fork("path:WTI"), 62, 0.004, ctx.now),
    format: dollars,
    source: (when) =>
      `the front-month WTI crude oil futures settlement price published by CME Group at ${when}`,
  };

  const indexSeries = (
    ticker: string,
    title: string,
    tags: string[],
    source: { name: string; url: string },
  ) =>
    makeSeries({
      ticker,
      title,
      category: "Financials",
      tags,
      frequency: "daily",
      settlementSources: [source],
      additionalProhibitions: null,
      productMetadata: null,
      terms: "index-close",
    });

  const ranges: { family: RangeFamily; hours: number; kind: "crypto" | "index" | "weekly" }[] = [
    {
      family: {
        series: cryptoSeries("KXBTC", "Bitcoin price range", "BTC", "BRTI", "daily"),
        terms: CRYPTO_TERMS,
        underlying: bitcoin,
        width: 1_000,
        buckets: 10,
        edgeDigits: 0,
        expectedVolume: 300_000,
      },
      hours: 17,
      kind: "crypto",
    },
    {
      family: {
        series: cryptoSeries("KXETH", "Ethereum price range", "ETH", "ETHUSD_RTI", "daily"),
        terms: CRYPTO_TERMS,
        underlying: ether,
        width: 40,
        buckets: 10,
        edgeDigits: 0,
        expectedVolume: 120_000,
      },
      hours: 17,
      kind: "crypto",
    },
    {
      family: {
        series: cryptoSeries("KXSOL", "Solana price range", "SOL", "SOLUSD_RTI", "daily"),
        terms: CRYPTO_TERMS,
        underlying: solana,
        width: 4,
        buckets: 8,
        edgeDigits: 0,
        expectedVolume: 40_000,
      },
      hours: 17,
      kind: "crypto",
    },
    {
      family: {
        series: indexSeries("KXINX", "S&P 500 daily range", ["S&P 500", "Indices"], {
          name: "S&P Dow Jones Indices",
          url: "https://www.spglobal.com/spdji/en/indices/equity/sp-500/",
        }),
        terms: INDEX_TERMS,
        underlying: sp500,
        width: 25,
        buckets: 10,
        edgeDigits: 0,
        expectedVolume: 150_000,
      },
      hours: 16,
      kind: "index",
    },
    {
      family: {
        series: indexSeries("KXNASDAQ100", "Nasdaq-100 daily range", ["Nasdaq", "Indices"], {
          name: "Nasdaq",
          url: "https://www.nasdaq.com/market-activity/index/ndx",
        }),
        terms: INDEX_TERMS,
        underlying: nasdaq,
        width: 100,
        buckets: 10,
        edgeDigits: 0,
        expectedVolume: 80_000,
      },
      hours: 16,
      kind: "index",
    },
    {
      family: {
        series: makeSeries({
          ticker: "KXWTIW",
          title: "WTI crude oil weekly settlement",
          category: "Financials",
          tags: ["Oil", "Commodities"],
          frequency: "weekly",
          settlementSources: [
            {
              name: "CME Group",
              url: "https://www.cmegroup.com/markets/energy/crude-oil/light-sweet-crude.settlements.html",
            },
          ],
          additionalProhibitions: null,
          productMetadata: { contract: "CL", exchange: "NYMEX" },
          terms: "commodity-settlement",
        }),
        terms: OIL_TERMS,
        underlying: oil,
        width: 1,
        buckets: 8,
        edgeDigits: 2,
        expectedVolume: 60_000,
      },
      hours: 14.5,
      kind: "weekly",
    },
  ];

  const hourlyBitcoin = cryptoSeries("KXBTCD", "Bitcoin price at the hour", "BTC", "BRTI", "hourly");
  const hourlyEther = cryptoSeries("KXETHD", "Ethereum price at the hour", "ETH", "ETHUSD_RTI", "hourly");
  const events: CatalogueEvent[] = [];
  for (const { family, hours, kind } of ranges) {
    if (kind === "weekly") events.push(...weeklyRanges(ctx, family, hours));
    else events.push(...dailyRanges(ctx, family, hours, kind === "index"));
  }
  events.push(...hourlyThresholds(ctx, hourlyBitcoin, bitcoin, 250, 80_000));
  events.push(...hourlyThresholds(ctx, hourlyEther, ether, 10, 30_000));
  return { series: [...ranges.map((r) => r.family.series), hourlyBitcoin, hourlyEther], events };
}
