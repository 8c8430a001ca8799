/**
 * Forecast percentiles from an event's strike markets: the market-implied distribution of the
 * quantity the event settles on (a temperature, a CPI print, a price), read off the markets' beliefs
 * and interpolated linearly between strikes, then formatted in the event's unit.
 */

import type { MarketRecord } from "../contract/markets.js";
import { grouped } from "../demo/build.js";

/** What one market says about the quantity: its share of it below, above or between strikes. */
export type Strike =
  | { type: "less"; cap: number }
  | { type: "greater"; floor: number }
  | { type: "between"; floor: number; cap: number };

const STRIKE_SUFFIX = /^([TB])(\d+(?:\.\d+)?)$/;
const BELOW = /\b(below|less|under|lower)\b|</i;

/** The strike written in a market's ticker ("…-T52", "…-B47.5"), or null for a non-numeric outcome. */
function parseSuffix(market: MarketRecord): { kind: "T" | "B"; value: number; text: string } | null {
  const { ticker, eventTicker } = market;
  const match = STRIKE_SUFFIX.exec(ticker.slice(eventTicker.length + 1));
  if (!match) return null;
  return { kind: match[1] as "T" | "B", value: Number(match[2]), text: match[2] as string };
}

export interface EventStrikes {
  /** Strikes by market ticker, for every market of the event that has one. */
  byTicker: Map<string, Strike>;
  /** Fraction digits a forecast is written with: the strikes', one more for percentages. */
  digits: number;
  unit: "$" | "°" | "%" | "";
}

/** The strikes of an event's markets; null when fewer than two of its markets have a numeric strike. */
export function eventStrikes(markets: readonly MarketRecord[]): EventStrikes | null {
  const parsed = markets.flatMap((market) => {
    const suffix = parseSuffix(market);
    return suffix ? [{ market, ...suffix }] : [];
  });
  if (parsed.length < 2) return null;
  const centres = parsed.filter((p) => p.kind === "B").map((p) => p.value);
  const width = smallestGap(centres) ?? 1;
  const byTicker = new Map<string, Strike>();
  for (const { market, kind, value } of parsed) {
    const strike: Strike =
      kind === "B"
        ? { type: "between", floor: value - width / 2, cap: value + width / 2 }
        : BELOW.test(market.yesSubTitle)
          ? { type: "less", cap: value }
          : { type: "greater", floor: value };
    byTicker.set(market.ticker, strike);
  }
  const decimals = Math.max(...parsed.map((p) => p.text.split(".")[1]?.length ?? 0));
  const subtitles = markets.map((m) => m.yesSubTitle).join(" ");
  const unit = subtitles.includes("$")
    ? "$"
    : subtitles.includes("°")
      ? "°"
      : subtitles.includes("%")
        ? "%"
        : "";
  return { byTicker, digits: unit === "%" ? decimals + 1 : decimals, unit };
}

function smallestGap(values: readonly number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  let gap: number | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const d = (sorted[i] as number) - (sorted[i - 1] as number);
    if (d > 0 && (gap === undefined || d < gap)) gap = d;
  }
  return gap;
}

/** Knots (x, cumulative probability) of the market-implied distribution, increasing in both. */
export function impliedCdf(strikes: EventStrikes, beliefs: Map<string, number>): [number, number][] {
  const items = [...strikes.byTicker].map(([ticker, strike]) => ({ strike, p: beliefs.get(ticker) ?? 0 }));
  const buckets = items.filter((i) => i.strike.type === "between");
  if (buckets.length > 0) return partitionCdf(items);
  // Threshold ladders: each "above s" market says 1 − CDF(s); each "below s" market says CDF(s).
  const points = items
    .map(({ strike, p }) =>
      strike.type === "less"
        ? ([strike.cap, p] as [number, number])
        : ([(strike as { floor: number }).floor, 1 - p] as [number, number]),
    )
    .sort((a, b) => a[0] - b[0]);
  const step = smallestGap(points.map(([x]) => x)) ?? 1;
  let running = 0;
  const knots: [number, number][] = [[(points[0] as [number, number])[0] - step, 0]];
  for (const [x, cdf] of points) {
    running = Math.min(1, Math.max(running, cdf));
    knots.push([x, running]);
  }
  knots.push([(points[points.length - 1] as [number, number])[0] + step, 1]);
  return knots;
}

/** Buckets with optional tails partition the line: their beliefs, normalised, are its probability mass. */
function partitionCdf(items: { strike: Strike; p: number }[]): [number, number][] {
  const buckets = items
    .filter((i) => i.strike.type === "between")
    .sort((a, b) => (a.strike as { floor: number }).floor - (b.strike as { floor: number }).floor);
  const lowTail = items.filter((i) => i.strike.type === "less").reduce((sum, i) => sum + i.p, 0);
  const highTail = items.filter((i) => i.strike.type === "greater").reduce((sum, i) => sum + i.p, 0);
  const total = lowTail + highTail + buckets.reduce((sum, i) => sum + i.p, 0) || 1;
  const first = buckets[0]?.strike as { floor: number; cap: number };
  const width = first.cap - first.floor;
  const knots: [number, number][] = [];
  if (lowTail > 0) knots.push([first.floor - width, 0]);
  let cumulative = lowTail / total;
  knots.push([first.floor, cumulative]);
  for (const bucket of buckets) {
    cumulative += bucket.p / total;
    knots.push([(bucket.strike as { cap: number }).cap, Math.min(1, cumulative)]);
  }
  const last = knots[knots.length - 1] as [number, number];
  if (highTail > 0) knots.push([last[0] + width, 1]);
  else last[1] = 1;
  return knots;
}

/** The value below which `quantile` (0–1) of the distribution lies, interpolated between knots. */
export function quantileOf(knots: readonly [number, number][], quantile: number): number {
  const first = knots[0] as [number, number];
  if (quantile <= first[1]) return first[0];
  for (let i = 1; i < knots.length; i++) {
    const [x1, c1] = knots[i] as [number, number];
    const [x0, c0] = knots[i - 1] as [number, number];
    if (quantile <= c1) return c1 === c0 ? x0 : x0 + ((quantile - c0) / (c1 - c0)) * (x1 - x0);
  }
  return (knots[knots.length - 1] as [number, number])[0];
}

/** A forecast value written as the event writes its strikes: "$91,612.37", "52.3°", "2.63%". */
export function formatForecast(value: number, strikes: EventStrikes): string {
  const { digits } = strikes;
  switch (strikes.unit) {
    case "$":
      return `${value < 0 ? "-" : ""}$${grouped(Math.abs(value), digits)}`;
    case "°":
      return `${value.toFixed(digits)}°`;
    case "%":
      return `${value.toFixed(digits)}%`;
    default:
      return value.toFixed(digits);
  }
}
