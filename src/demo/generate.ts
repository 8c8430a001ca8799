/**
 * The demo catalogue: Kalshi-style series, events and markets (weather, economics, politics, crypto,
 * indices, sports) laid out around an anchor day, generated from a seed so that the same options always
 * give byte-identical output. `scale` lengthens the settled history each series keeps, which multiplies
 * the catalogue's size roughly linearly while the live part around the anchor stays the same.
 */
import { CATALOGUE_FORMAT, type CatalogueEvent, type CatalogueFile } from "../contract/markets.js";
import { assetCatalogue } from "./assets.js";
import type { DemoContext, FamilyCatalogue } from "./build.js";
import { DAY, HOUR } from "./calendar.js";
import { economicsCatalogue } from "./economics.js";
import { politicsCatalogue } from "./politics.js";
import { Random } from "./random.js";
import { sportsCatalogue } from "./sports.js";
import { weatherCatalogue } from "./weather.js";

export const DEFAULT_DEMO_SEED = "oddsgate-demo";

const FAMILIES: readonly ((ctx: DemoContext) => FamilyCatalogue)[] = [
  weatherCatalogue,
  economicsCatalogue,
  politicsCatalogue,
  assetCatalogue,
  sportsCatalogue,
];

/** Generates the demo catalogue as it stands at noon UTC on the anchor's day (anchor in Unix seconds). */
export function generateDemoCatalogue(options: {
  anchor: number;
  seed?: string;
  scale?: number;
}): CatalogueFile {
  const { anchor, seed = DEFAULT_DEMO_SEED, scale = 1 } = options;
  if (!Number.isFinite(anchor) || anchor < 0 || anchor > 99_999_999_999) {
    throw new RangeError(`anchor must be Unix seconds, got ${anchor}`);
  }
  if (!Number.isFinite(scale) || scale <= 0)
    throw new RangeError(`scale must be a positive number, got ${scale}`);
  const today = Math.floor(anchor / DAY);
  // Midday, so the anchor day shows yesterday's events settling and today's still trading.
  const ctx: DemoContext = { root: new Random(seed), now: today * DAY + 12 * HOUR, today, scale };
  const families = FAMILIES.map((family) => family(ctx));
  return {
    format: CATALOGUE_FORMAT,
    series: families.flatMap((f) => f.series),
    events: families.flatMap((f) => f.events),
  };
}

/** How many markets a catalogue's events hold. */
function countMarkets(events: readonly CatalogueEvent[]): number {
  return events.reduce((n, event) => n + event.markets.length, 0);
}

/** The catalogue with only `events`, each keeping the same share of its markets, so that about `markets` remain. */
function keepShare(file: CatalogueFile, events: CatalogueEvent[], markets: number): CatalogueFile {
  const share = Math.min(1, markets / countMarkets(events));
  return {
    ...file,
    events: events.map((event) => ({
      ...event,
      markets: event.markets.slice(0, Math.max(1, Math.round(event.markets.length * share))),
    })),
  };
}

/**
 * The first `events` events of a catalogue, each keeping the same share of its markets, so that about
 * `markets` markets remain (each event keeps at least one).
 */
export function sizedCatalogue(file: CatalogueFile, events: number, markets: number): CatalogueFile {
  return keepShare(file, file.events.slice(0, events), markets);
}

/** Scales tried before a stress catalogue's events are found unable to hold its markets. */
const MAX_STRESS_ROUNDS = 8;
/** The largest stress catalogue: ~10 times the 250,000, about 3 GB of catalogue JSON. */
const MAX_STRESS_MARKETS = 2_500_000;

/**
 * A stress catalogue (`npm run demo -- --markets N [--events N]`): about `markets` markets in
 * `events` events spread evenly over every family and day (by default all the events of the scale
 * that holds them), from the demo at the smallest scale found that holds enough. Deterministic like
 * the demo itself.
 */
export function generateStressCatalogue(options: {
  anchor: number;
  seed?: string;
  markets: number;
  events?: number;
}): CatalogueFile {
  const { markets, events } = options;
  if (!Number.isSafeInteger(markets) || markets < 1 || markets > MAX_STRESS_MARKETS)
    throw new RangeError(`markets must be an integer from 1 to ${MAX_STRESS_MARKETS}, got ${markets}`);
  if (events !== undefined && (!Number.isSafeInteger(events) || events < 1 || events > markets))
    throw new RangeError(`events must be a positive integer no larger than markets, got ${events}`);
  let scale = 1;
  let perEvent = 0;
  for (let round = 0; round < MAX_STRESS_ROUNDS; round += 1) {
    const file = generateDemoCatalogue({ anchor: options.anchor, seed: options.seed, scale });
    const total = file.events.length;
    const wanted = events ?? total;
    // Every step-th event: the first of each run of `step` (step >= 1), `wanted` of them.
    const step = total / wanted;
    const chosen =
      wanted >= total
        ? file.events
        : file.events.filter((_, j) => Math.floor(j / step) !== Math.floor((j - 1) / step));
    const available = countMarkets(chosen);
    perEvent = available / chosen.length;
    if (total >= wanted && available >= markets) return keepShare(file, chosen, markets);
    // A larger scale adds events, not markets per event: too few markets in enough events stays so.
    if (total > wanted) break;
    // The catalogue grows about linearly with the scale: aim a tenth past what is missing.
    scale = Math.ceil(scale * Math.max(markets / available, wanted / total) * 1.1);
  }
  throw new RangeError(
    `${events} events cannot hold ${markets} markets: the demo's events hold about ${perEvent.toFixed(1)} markets each`,
  );
}
