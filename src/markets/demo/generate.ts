/**
 * The demo catalogue: Kalshi-style series, events and markets (weather, economics, politics, crypto,
 * indices, sports) laid out around an anchor day, generated from a seed so that the same options always
 * give byte-identical output. `scale` lengthens the settled history each series keeps, which multiplies
 * the catalogue's size roughly linearly while the live part around the anchor stays the same.
 */
import { CATALOGUE_FORMAT, type CatalogueFile } from "../../contract/markets.js";
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
