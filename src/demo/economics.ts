/**
 * Macro releases: FOMC decisions (KXFEDDECISION) and the rate they leave (KXFED), monthly CPI, jobs and
 * unemployment ladders, quarterly GDP, and a scalar unemployment market that settles with a payout
 * fraction instead of yes/no.
 */
import type { CatalogueEvent, Series } from "../contract/markets.js";
import {
  buildEvent,
  type DemoContext,
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
  addMonths,
  civil,
  DAY,
  dayNumber,
  EASTERN,
  HOUR,
  localTime,
  longDate,
  MINUTE,
  monthAbbrev,
  monthName,
  nthWeekday,
  shortDate,
  tickerDate,
  tickerMonth,
} from "./calendar.js";
import { clamp, normalCdf, type Random } from "./random.js";

/** Settled meetings / releases kept per unit of scale, and how many are listed ahead. */
const HISTORY_MEETINGS = 3;
const MEETINGS_AHEAD = 6;
const HISTORY_MONTHS = 3;
const RELEASES_AHEAD = 2;
const HISTORY_QUARTERS = 1;

/** The upper bound of the federal funds target range at the catalogue's moment, percent. */
const CURRENT_UPPER_BOUND = 3.75;

const TERMS: MarketTerms = {
  canCloseEarly: false,
  earlyCloseCondition: null,
  rulesSecondary:
    "The market settles on the first official release. Later revisions do not change the outcome. If the " +
    "release is delayed, the market stays closed until the data is published.",
  fractionalTradingEnabled: false,
};

/** Scalar payouts wait out a review window, so a scalar market stays determined for a month. */
const SCALAR_REVIEW_DAYS = 30;
const SCALAR_TERMS: MarketTerms = {
  ...TERMS,
  rulesSecondary:
    `The payout becomes final ${SCALAR_REVIEW_DAYS} days after the release. If the Bureau of Labor Statistics ` +
    "corrects the release within that window, the corrected value is used.",
};

const FED_SOURCE = {
  name: "Federal Reserve",
  url: "https://www.federalreserve.gov/monetarypolicy/openmarket.htm",
};
const CPI_SOURCE = { name: "Bureau of Labor Statistics", url: "https://www.bls.gov/cpi/" };
const JOBS_SOURCE = {
  name: "Bureau of Labor Statistics",
  url: "https://www.bls.gov/news.release/empsit.toc.htm",
};
const GDP_SOURCE = {
  name: "Bureau of Economic Analysis",
  url: "https://www.bea.gov/data/gdp/gross-domestic-product",
};

function economicsSeries(
  ticker: string,
  title: string,
  tags: string[],
  frequency: string,
  source: { name: string; url: string },
): Series {
  return makeSeries({
    ticker,
    title,
    category: "Economics",
    tags,
    frequency,
    settlementSources: [source],
    additionalProhibitions: null,
    productMetadata: null,
    terms: "economic-data",
  });
}

// ---------------------------------------------------------------- FOMC

/** Decision months and which Wednesday of the month the meeting ends on (-1 = the last). */
const FOMC_SCHEDULE: readonly (readonly [number, number])[] = [
  [1, -1],
  [3, 3],
  [4, -1],
  [6, 3],
  [7, -1],
  [9, 3],
  [10, -1],
  [12, 2],
];

const DECISIONS = [
  {
    suffix: "C26",
    change: -0.5,
    label: "Cut >25bps",
    verb: "cuts the upper bound of the federal funds target range by more than 25 basis points",
  },
  {
    suffix: "C25",
    change: -0.25,
    label: "Cut 25bps",
    verb: "cuts the upper bound of the federal funds target range by exactly 25 basis points",
  },
  { suffix: "H0", change: 0, label: "Hold", verb: "leaves the federal funds target range unchanged" },
  {
    suffix: "H25",
    change: 0.25,
    label: "Hike 25bps",
    verb: "raises the upper bound of the federal funds target range by exactly 25 basis points",
  },
  {
    suffix: "H26",
    change: 0.5,
    label: "Hike >25bps",
    verb: "raises the upper bound of the federal funds target range by more than 25 basis points",
  },
] as const;

/** The change in percentage points of a decision index drawn from DECISIONS. */
const changeOf = (decision: number) => DECISIONS[decision]?.change ?? 0;

/** Market-implied odds of each decision at one meeting: mostly holds, with a lean towards cuts. */
function decisionOdds(rng: Random): number[] {
  const raw = [0.03, 0.3, 0.62, 0.04, 0.01].map((p) => p * rng.logNormal(1, 0.5));
  const total = raw.reduce((sum, p) => sum + p, 0);
  return raw.map((p) => p / total);
}

interface Meeting {
  day: number;
  decisionOdds: number[];
  /** Index into DECISIONS of what the committee decides. */
  decision: number;
  rateBefore: number;
  rateAfter: number;
  /** Belief about the upper bound after the meeting, as seen at the catalogue's moment. */
  belief: { mean: number; sd: number };
}

/** Past and upcoming meetings with a consistent rate path through the current upper bound. */
function meetings(ctx: DemoContext): Meeting[] {
  const { year } = civil(ctx.today);
  const history = historyLength(ctx, HISTORY_MEETINGS);
  const days: number[] = [];
  for (let y = year - Math.ceil(history / 8) - 1; y <= year + 2; y++) {
    for (const [month, week] of FOMC_SCHEDULE) days.push(nthWeekday(y, month, 3, week));
  }
  const decidedBy = (day: number) => localTime(EASTERN, day, 14) <= ctx.now;
  const past = days.filter(decidedBy).slice(-history);
  const ahead = days.filter((d) => !decidedBy(d)).slice(0, MEETINGS_AHEAD);

  const result: Meeting[] = [];
  // Walk back from today's rate so a longer history never changes the recent path.
  let rateAfter = CURRENT_UPPER_BOUND;
  for (const day of [...past].reverse()) {
    const rng = ctx.root.fork(`fomc:${day}`);
    const odds = decisionOdds(rng);
    const decision = rng.weighted(odds);
    const rateBefore = rateAfter - changeOf(decision);
    result.unshift({
      day,
      decisionOdds: odds,
      decision,
      rateBefore,
      rateAfter,
      belief: { mean: rateAfter, sd: 0.01 },
    });
    rateAfter = rateBefore;
  }
  let rate = CURRENT_UPPER_BOUND;
  let expected = CURRENT_UPPER_BOUND;
  let variance = 0;
  for (const day of ahead) {
    const rng = ctx.root.fork(`fomc:${day}`);
    const odds = decisionOdds(rng);
    const decision = rng.weighted(odds);
    const mean = DECISIONS.reduce((sum, d, i) => sum + d.change * (odds[i] as number), 0);
    expected += mean;
    variance += DECISIONS.reduce((sum, d, i) => sum + (d.change - mean) ** 2 * (odds[i] as number), 0);
    const rateBefore = rate;
    rate += changeOf(decision);
    result.push({
      day,
      decisionOdds: odds,
      decision,
      rateBefore,
      rateAfter: rate,
      belief: { mean: expected, sd: Math.sqrt(variance) },
    });
  }
  return result;
}

function meetingTimes(day: number, rng: Random) {
  const announcement = localTime(EASTERN, day, 14);
  return {
    strikeDate: announcement,
    openTime: announcement - 200 * DAY,
    closeTime: announcement - 5 * MINUTE,
    expirationTime: announcement + 7 * DAY,
    settledAt: announcement + rng.between(5 * MINUTE, 60 * MINUTE),
  };
}

function fedCatalogue(ctx: DemoContext): FamilyCatalogue {
  const decisionSeries = economicsSeries(
    "KXFEDDECISION",
    "Fed meeting decision",
    ["Fed", "Interest rates"],
    "custom",
    FED_SOURCE,
  );
  const rateSeries = economicsSeries(
    "KXFED",
    "Fed funds rate",
    ["Fed", "Interest rates"],
    "custom",
    FED_SOURCE,
  );
  const events: CatalogueEvent[] = [];
  for (const meeting of meetings(ctx)) {
    const { year, month } = civil(meeting.day);
    const monthLabel = `${monthName(month)} ${year}`;
    const concluding = `the FOMC meeting concluding on ${longDate(meeting.day)}`;
    const subtitle = `FOMC meeting ending ${shortDate(meeting.day)}`;

    const decisionTicker = `KXFEDDECISION-${tickerMonth(year, month)}`;
    const decisionPlan: EventPlan = {
      series: decisionSeries,
      terms: TERMS,
      ticker: decisionTicker,
      title: `Fed decision in ${monthAbbrev(month)} ${year}?`,
      subtitle,
      strikePeriod: null,
      ...meetingTimes(meeting.day, ctx.root.fork(decisionTicker)),
      expectedVolume: 3_000_000,
      outcomes: DECISIONS.map((d, i) => ({
        suffix: d.suffix,
        title: `Will the Fed ${d.label.toLowerCase().replace("bps", " bps")} at its ${monthLabel} meeting?`,
        yesSubTitle: d.label,
        rulesPrimary: `If the Federal Reserve ${d.verb} at ${concluding}, then the market resolves to Yes.`,
        probability: meeting.decisionOdds[i] as number,
        payout: i === meeting.decision ? 1 : 0,
      })),
    };
    events.push(buildEvent(decisionPlan, ctx.now, ctx.root));

    const rateTicker = `KXFED-${tickerMonth(year, month)}`;
    // Strikes sit around the rate the market expects, on the 25 bp grid the committee moves on.
    const centre = Math.round(meeting.belief.mean * 4) / 4;
    const strikes = Array.from({ length: 7 }, (_, i) => centre + (i - 4) * 0.25);
    const sd = Math.max(meeting.belief.sd, 0.05);
    const ratePlan: EventPlan = {
      series: rateSeries,
      terms: TERMS,
      ticker: rateTicker,
      title: `Fed funds rate after the ${monthAbbrev(month)} ${year} meeting?`,
      subtitle,
      strikePeriod: null,
      ...meetingTimes(meeting.day, ctx.root.fork(rateTicker)),
      expectedVolume: 1_000_000,
      outcomes: strikes.map((strike) => ({
        suffix: `T${strike.toFixed(2)}`,
        title: `Will the upper bound of the federal funds rate be above ${strike.toFixed(2)}% after the ${monthLabel} meeting?`,
        yesSubTitle: `Above ${strike.toFixed(2)}%`,
        rulesPrimary:
          `If the upper bound of the federal funds target range is above ${strike.toFixed(2)}% following ` +
          `${concluding}, then the market resolves to Yes.`,
        probability: 1 - normalCdf(strike + 0.125, meeting.belief.mean, sd),
        payout: meeting.rateAfter > strike + 0.01 ? 1 : 0,
      })),
    };
    events.push(buildEvent(ratePlan, ctx.now, ctx.root));
  }
  return { series: [decisionSeries, rateSeries], events };
}

// ---------------------------------------------------------------- scheduled releases

interface Release {
  /** Ticker label of the reference period: "26OCT" (monthly) or the release date (quarterly). */
  label: string;
  /** "October 2026", "Q3 2026" */
  period: string;
  /** Index of the reference period, for slowly varying series. */
  index: number;
  releaseDay: number;
}

/** Reference months and their release days, `HISTORY_MONTHS`×scale released ones plus the next few. */
function monthlyReleases(ctx: DemoContext, releaseDayOf: (year: number, month: number) => number): Release[] {
  const { year, month } = civil(ctx.today);
  const history = historyLength(ctx, HISTORY_MONTHS);
  const all: Release[] = [];
  for (let delta = -history - 3; delta <= RELEASES_AHEAD + 1; delta++) {
    const ref = addMonths(year, month, delta);
    const release = addMonths(ref.year, ref.month, 1);
    all.push({
      label: tickerMonth(ref.year, ref.month),
      period: `${monthName(ref.month)} ${ref.year}`,
      index: ref.year * 12 + ref.month,
      releaseDay: releaseDayOf(release.year, release.month),
    });
  }
  return pickReleases(ctx, all, history);
}

/** Keeps the last `history` published releases and the next `RELEASES_AHEAD` ones. */
function pickReleases(ctx: DemoContext, all: Release[], history: number): Release[] {
  const published = (r: Release) => localTime(EASTERN, r.releaseDay, 8.5) <= ctx.now;
  return [
    ...all.filter(published).slice(-history),
    ...all.filter((r) => !published(r)).slice(0, RELEASES_AHEAD),
  ];
}

/** CPI comes out on the first Tuesday to Thursday from the 10th of the following month. */
function cpiReleaseDay(year: number, month: number): number {
  let day = dayNumber(year, month, 10);
  while (![2, 3, 4].includes(civil(day).weekday)) day++;
  return day;
}

/** The jobs report comes out on the first Friday of the following month. */
function jobsReleaseDay(year: number, month: number): number {
  return nthWeekday(year, month, 5, 1);
}

interface Ladder {
  series: Series;
  /** Reads "CPI change in October 2026" etc. */
  subject: string;
  strikes: number[];
  format: (value: number) => string;
  /** Step the published value is rounded to; YES needs the value to clear the strike. */
  resolution: number;
  /** The published value for a release. */
  value: (release: Release, rng: Random) => number;
  /** How far the consensus strays from the eventual print. */
  beliefSd: number;
  rules: (strike: string, period: string) => string;
  strikePeriod: string;
  expectedVolume: number;
  openDays: number;
}

function ladderEvent(ctx: DemoContext, ladder: Ladder, release: Release): CatalogueEvent {
  const ticker = `${ladder.series.ticker}-${release.label}`;
  const rng = ctx.root.fork(ticker);
  const value = ladder.value(release, ctx.root.fork(`${ladder.series.ticker}:value:${release.label}`));
  const consensus = value + rng.normal(0, ladder.beliefSd * 0.7);
  const published = localTime(EASTERN, release.releaseDay, 8.5);
  const outcomes: OutcomePlan[] = ladder.strikes.map((strike) => ({
    suffix: `T${strikeLabel(strike)}`,
    title: `Will the ${ladder.subject} in ${release.period} be above ${ladder.format(strike)}?`,
    yesSubTitle: `Above ${ladder.format(strike)}`,
    rulesPrimary: ladder.rules(ladder.format(strike), release.period),
    probability: 1 - normalCdf(strike + ladder.resolution / 2, consensus, ladder.beliefSd),
    payout: value > strike + ladder.resolution / 2 ? 1 : 0,
  }));
  const plan: EventPlan = {
    series: ladder.series,
    terms: TERMS,
    ticker,
    title: `${capitalize(ladder.subject)} in ${release.period}?`,
    subtitle: `Released ${shortDate(release.releaseDay)}`,
    strikeDate: published,
    strikePeriod: ladder.strikePeriod,
    openTime: published - ladder.openDays * DAY,
    closeTime: published - 5 * MINUTE,
    expirationTime: published + 7 * DAY,
    settledAt: published + rng.between(5 * MINUTE, 45 * MINUTE),
    expectedVolume: ladder.expectedVolume,
    outcomes,
  };
  return buildEvent(plan, ctx.now, ctx.root);
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const percent = (digits: number) => (value: number) => `${value.toFixed(digits)}%`;
const range = (from: number, count: number, step: number) =>
  Array.from({ length: count }, (_, i) => Math.round((from + i * step) * 100) / 100);
const roundTo = (value: number, step: number) => Math.round(value / step) * step;

/** The unemployment rate of a month, shared by the ladder and the scalar market. */
function unemploymentRate(ctx: DemoContext, release: Release): number {
  const rng = ctx.root.fork(`u3:${release.label}`);
  return roundTo(4.3 + 0.3 * Math.sin(release.index / 7) + rng.normal(0, 0.12), 0.1);
}

function releaseCatalogue(ctx: DemoContext): FamilyCatalogue {
  const cpiSeries = economicsSeries(
    "KXCPI",
    "CPI month over month",
    ["Inflation", "CPI"],
    "monthly",
    CPI_SOURCE,
  );
  const cpiYoySeries = economicsSeries(
    "KXCPIYOY",
    "CPI year over year",
    ["Inflation", "CPI"],
    "monthly",
    CPI_SOURCE,
  );
  const payrollSeries = economicsSeries(
    "KXPAYROLLS",
    "Nonfarm payrolls",
    ["Jobs", "Employment"],
    "monthly",
    JOBS_SOURCE,
  );
  const u3Series = economicsSeries(
    "KXU3",
    "Unemployment rate",
    ["Jobs", "Employment"],
    "monthly",
    JOBS_SOURCE,
  );
  const scalarSeries = economicsSeries(
    "KXU3SCALAR",
    "Unemployment rate (scalar)",
    ["Jobs", "Employment"],
    "monthly",
    JOBS_SOURCE,
  );
  const gdpSeries = economicsSeries("KXGDP", "GDP growth", ["GDP", "Growth"], "quarterly", GDP_SOURCE);

  const cpiRules = (measure: string) => (strike: string, period: string) =>
    `If the ${measure} of the seasonally adjusted Consumer Price Index for All Urban Consumers (CPI-U) for ` +
    `${period}, as first reported by the Bureau of Labor Statistics, is above ${strike}, then the market resolves to Yes.`;
  const ladders: { ladder: Ladder; releaseDayOf: (year: number, month: number) => number }[] = [
    {
      ladder: {
        series: cpiSeries,
        subject: "CPI change",
        strikes: range(-0.1, 7, 0.1),
        format: percent(1),
        resolution: 0.1,
        value: (_, rng) => roundTo(rng.normal(0.25, 0.15), 0.1),
        beliefSd: 0.1,
        rules: cpiRules("one-month percent change"),
        strikePeriod: "month",
        expectedVolume: 400_000,
        openDays: 35,
      },
      releaseDayOf: cpiReleaseDay,
    },
    {
      ladder: {
        series: cpiYoySeries,
        subject: "CPI year-over-year change",
        strikes: range(2.5, 7, 0.1),
        format: percent(1),
        resolution: 0.1,
        value: (release, rng) => roundTo(2.8 + 0.3 * Math.sin(release.index / 8) + rng.normal(0, 0.1), 0.1),
        beliefSd: 0.1,
        rules: cpiRules("twelve-month percent change"),
        strikePeriod: "month",
        expectedVolume: 200_000,
        openDays: 35,
      },
      releaseDayOf: cpiReleaseDay,
    },
    {
      ladder: {
        series: payrollSeries,
        subject: "nonfarm payrolls change",
        strikes: range(0, 6, 50_000),
        format: (value) => grouped(value),
        resolution: 1_000,
        value: (_, rng) => roundTo(rng.normal(110_000, 80_000), 1_000),
        beliefSd: 60_000,
        rules: (strike, period) =>
          `If total nonfarm payroll employment rises by more than ${strike} in ${period}, as first reported by ` +
          "the Bureau of Labor Statistics in the Employment Situation report, then the market resolves to Yes.",
        strikePeriod: "month",
        expectedVolume: 250_000,
        openDays: 30,
      },
      releaseDayOf: jobsReleaseDay,
    },
    {
      ladder: {
        series: u3Series,
        subject: "unemployment rate",
        strikes: range(4.0, 7, 0.1),
        format: percent(1),
        resolution: 0.1,
        value: (release) => unemploymentRate(ctx, release),
        beliefSd: 0.1,
        rules: (strike, period) =>
          `If the seasonally adjusted unemployment rate (U-3) for ${period}, as first reported by the Bureau ` +
          `of Labor Statistics, is above ${strike}, then the market resolves to Yes.`,
        strikePeriod: "month",
        expectedVolume: 150_000,
        openDays: 30,
      },
      releaseDayOf: jobsReleaseDay,
    },
  ];

  const events: CatalogueEvent[] = [];
  for (const { ladder, releaseDayOf } of ladders) {
    for (const release of monthlyReleases(ctx, releaseDayOf)) events.push(ladderEvent(ctx, ladder, release));
  }
  for (const release of monthlyReleases(ctx, jobsReleaseDay))
    events.push(scalarUnemploymentEvent(ctx, scalarSeries, release));
  for (const release of gdpReleases(ctx)) {
    events.push(
      ladderEvent(
        ctx,
        {
          series: gdpSeries,
          subject: "GDP growth",
          strikes: range(0, 9, 0.5),
          format: percent(1),
          resolution: 0.1,
          value: (_, rng) => roundTo(rng.normal(2.0, 1.3), 0.1),
          beliefSd: 0.6,
          rules: (strike, period) =>
            `If the advance estimate of real GDP growth for ${period} (seasonally adjusted annual rate), as ` +
            `first reported by the Bureau of Economic Analysis, is above ${strike}, then the market resolves to Yes.`,
          strikePeriod: "quarter",
          expectedVolume: 150_000,
          openDays: 95,
        },
        release,
      ),
    );
  }
  return { series: [cpiSeries, cpiYoySeries, payrollSeries, u3Series, scalarSeries, gdpSeries], events };
}

/** Advance GDP estimates: the last Thursday of the month after each quarter; tickers carry the date. */
function gdpReleases(ctx: DemoContext): Release[] {
  const { year } = civil(ctx.today);
  const history = historyLength(ctx, HISTORY_QUARTERS);
  const all: Release[] = [];
  for (let y = year - Math.ceil(history / 4) - 1; y <= year + 1; y++) {
    for (let quarter = 1; quarter <= 4; quarter++) {
      const release = addMonths(y, quarter * 3, 1);
      const releaseDay = nthWeekday(release.year, release.month, 4, -1);
      all.push({
        label: tickerDate(releaseDay),
        period: `Q${quarter} ${y}`,
        index: y * 4 + quarter,
        releaseDay,
      });
    }
  }
  return pickReleases(ctx, all, history);
}

/** A scalar market: YES is paid (rate − 3.5%) / 2%, bounded to [0, 1]; it never resolves yes or no. */
function scalarUnemploymentEvent(ctx: DemoContext, series: Series, release: Release): CatalogueEvent {
  const ticker = `${series.ticker}-${release.label}`;
  const rng = ctx.root.fork(ticker);
  const rate = unemploymentRate(ctx, release);
  const consensus = rate + rng.normal(0, 0.07);
  const payoutOf = (r: number) => clamp((r - 3.5) / 2, 0, 1);
  const published = localTime(EASTERN, release.releaseDay, 8.5);
  const plan: EventPlan = {
    series,
    terms: SCALAR_TERMS,
    ticker,
    title: `Unemployment rate in ${release.period} (scalar)?`,
    subtitle: `Released ${shortDate(release.releaseDay)}`,
    strikeDate: published,
    strikePeriod: "month",
    openTime: published - 30 * DAY,
    closeTime: published - 5 * MINUTE,
    expirationTime: published + 7 * DAY,
    settledAt: published + rng.between(5 * MINUTE, 45 * MINUTE),
    finalizationDelay: [SCALAR_REVIEW_DAYS * DAY, SCALAR_REVIEW_DAYS * DAY + HOUR],
    expectedVolume: 20_000,
    outcomes: [
      {
        suffix: "SCALAR",
        title: `Unemployment rate in ${release.period}, paid on a 3.5% to 5.5% scale`,
        yesSubTitle: "Pays (rate - 3.5%) / 2%",
        rulesPrimary:
          `Each YES contract pays $1 × (R − 3.5%) / 2%, bounded between $0 and $1, where R is the seasonally ` +
          `adjusted unemployment rate (U-3) for ${release.period} as first reported by the Bureau of Labor ` +
          "Statistics; each NO contract pays the remainder of $1.",
        probability: payoutOf(consensus),
        payout: payoutOf(rate),
        scalar: true,
      },
    ],
  };
  return buildEvent(plan, ctx.now, ctx.root);
}

/** Fed, inflation, jobs and growth series. */
export function economicsCatalogue(ctx: DemoContext): FamilyCatalogue {
  const fed = fedCatalogue(ctx);
  const releases = releaseCatalogue(ctx);
  return { series: [...fed.series, ...releases.series], events: [...fed.events, ...releases.events] };
}
