/** Daily high-temperature events per city (KXHIGHNY-26NOV23 …), settled on the NWS Climatological Report. */
import type { CatalogueEvent, Series } from "../contract/markets.js";
import {
  binProbabilities,
  buildEvent,
  type DemoContext,
  type EventPlan,
  type FamilyCatalogue,
  historyLength,
  type MarketTerms,
  makeSeries,
  type OutcomePlan,
} from "./build.js";
import {
  addMonths,
  civil,
  DAY,
  dayNumber,
  HOUR,
  longDate,
  MINUTE,
  shortDate,
  tickerDate,
} from "./calendar.js";
import { CITIES, type City } from "./cities.js";
import { normalCdf, type Random } from "./random.js";

/** Settled days kept per unit of scale; events are listed two days ahead. */
const HISTORY_DAYS = 14;
const DAYS_AHEAD = 2;

const TERMS: MarketTerms = {
  canCloseEarly: false,
  earlyCloseCondition: null,
  rulesSecondary:
    "Not all weather data is the same. While a phone weather app may give a general idea of the day's " +
    "temperature, the official and final value used to determine this market is the highest temperature " +
    "reported by the corresponding NWS Climatological Report (Daily). Preliminary NWS reports and " +
    "measurement methods may be subject to rounding and unit-conversion nuances.",
  fractionalTradingEnabled: false,
};

function reportUrl(city: City): string {
  return `https://forecast.weather.gov/product.php?site=${city.office}&product=CLI&issuedby=${city.cliCode}`;
}

function citySeries(city: City): Series {
  return makeSeries({
    ticker: city.series,
    title: `Highest temperature in ${city.name}`,
    category: "Climate and Weather",
    tags: ["Weather", "Daily temperature"],
    frequency: "daily",
    settlementSources: [{ name: "National Weather Service", url: reportUrl(city) }],
    additionalProhibitions: null,
    productMetadata: { station: city.stationId, office: city.office, unit: "°F" },
    terms: "daily-high-temperature",
  });
}

/** The normal high on a date, interpolated between the mid-month normals. */
function normalHigh(city: City, day: number): number {
  const { year, month } = civil(day);
  const mid = dayNumber(year, month, 15);
  const neighbour = addMonths(year, month, day >= mid ? 1 : -1);
  const neighbourMid = dayNumber(neighbour.year, neighbour.month, 15);
  const weight = (day - mid) / (neighbourMid - mid);
  const here = city.normalHighs[month - 1] as number;
  const there = city.normalHighs[neighbour.month - 1] as number;
  return here + (there - here) * weight;
}

/**
 * The day's true high: normal plus an anomaly that comes in multi-day warm and cold spells (two slow
 * waves with per-city phases) and daily noise. Winters swing more than summers.
 */
function trueHigh(city: City, day: number, phases: readonly [number, number], rng: Random): number {
  const { month } = civil(day);
  const spread = city.variability * (1 + 0.3 * Math.cos((2 * Math.PI * (month - 1)) / 12));
  const spells =
    0.55 * Math.sin((2 * Math.PI * day) / 11.3 + phases[0]) +
    0.45 * Math.sin((2 * Math.PI * day) / 27.1 + phases[1]);
  return normalHigh(city, day) + spread * (spells + 0.6 * rng.normal());
}

function highTempPlan(
  ctx: DemoContext,
  city: City,
  series: Series,
  day: number,
  phases: readonly [number, number],
): EventPlan {
  const ticker = `${city.series}-${tickerDate(day)}`;
  const rng = ctx.root.fork(ticker);
  const truth = trueHigh(city, day, phases, rng);
  const observed = Math.round(truth);
  const offset = city.utcOffset * HOUR;
  // The climate day runs midnight to midnight local standard time; markets list at 10am two days before.
  const openTime = (day - 2) * DAY + 10 * HOUR - offset;
  const closeTime = (day + 1) * DAY - MINUTE - offset;

  // Strikes were laid out around the forecast when the event listed, so the outcome can land in a tail.
  const buckets = rng.int(4, 8);
  const low = Math.round(truth + rng.normal(0, 3) - buckets + 0.5);
  const top = low + 2 * buckets - 1;
  const hoursLeft = Math.max(0, (closeTime - ctx.now) / HOUR);
  const beliefSd = 1.2 + hoursLeft / 20;
  const beliefMean = truth + rng.normal(0, beliefSd * 0.8);
  const edges = Array.from({ length: buckets + 1 }, (_, i) => low - 0.5 + 2 * i);
  const probabilities = binProbabilities(edges, (x) => normalCdf(x, beliefMean, beliefSd));

  const date = shortDate(day);
  const rules = (clause: string) =>
    `If the highest temperature recorded in ${city.station} for ${longDate(day)} as reported by the National ` +
    `Weather Service's Climatological Report (Daily), is ${clause}, then the market resolves to Yes.`;
  const outcome = (
    suffix: string,
    range: string,
    yesSubTitle: string,
    clause: string,
    wins: boolean,
    i: number,
  ): OutcomePlan => ({
    suffix,
    title: `Will the high temp in ${city.name} be ${range} on ${date}?`,
    yesSubTitle,
    rulesPrimary: rules(clause),
    probability: probabilities[i] as number,
    payout: wins ? 1 : 0,
  });
  const outcomes = [
    outcome(`T${low}`, `<${low}°`, `${low - 1}° or below`, `less than ${low}°`, observed < low, 0),
  ];
  for (let i = 0; i < buckets; i++) {
    const from = low + 2 * i;
    const to = from + 1;
    const wins = observed === from || observed === to;
    outcomes.push(
      outcome(
        `B${from + 0.5}`,
        `${from}-${to}°`,
        `${from}° to ${to}°`,
        `between ${from}-${to}°`,
        wins,
        i + 1,
      ),
    );
  }
  outcomes.push(
    outcome(
      `T${top}`,
      `>${top}°`,
      `${top + 1}° or above`,
      `greater than ${top}°`,
      observed > top,
      buckets + 1,
    ),
  );

  return {
    series,
    terms: TERMS,
    ticker,
    title: `Highest temperature in ${city.name} on ${date}?`,
    subtitle: `On ${date}`,
    strikeDate: closeTime,
    strikePeriod: "day",
    openTime,
    closeTime,
    // The final report is out the next morning; the exchange allows itself a week.
    expirationTime: closeTime + 7 * DAY,
    settledAt: closeTime + 9 * HOUR + rng.between(0, 3 * HOUR),
    expectedVolume: 40_000 * city.demand,
    outcomes,
  };
}

/** Every city's high-temperature series and its daily events around the anchor. */
export function weatherCatalogue(ctx: DemoContext): FamilyCatalogue {
  const series: Series[] = [];
  const events: CatalogueEvent[] = [];
  const firstDay = ctx.today - historyLength(ctx, HISTORY_DAYS);
  for (const city of CITIES) {
    const citySeriesRecord = citySeries(city);
    series.push(citySeriesRecord);
    const cityRng = ctx.root.fork(city.series);
    const phases = [cityRng.between(0, 2 * Math.PI), cityRng.between(0, 2 * Math.PI)] as const;
    for (let day = firstDay; day <= ctx.today + DAYS_AHEAD; day++) {
      events.push(buildEvent(highTempPlan(ctx, city, citySeriesRecord, day, phases), ctx.now, ctx.root));
    }
  }
  return { series, events };
}
