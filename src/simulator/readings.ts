/**
 * Live data of the milestones that end in one published number: a day's high temperature (hourly
 * readings through the climate day, the high final at its end) and an economic release (the figure,
 * once out). The number is seeded from the event's market-implied distribution and always agrees with
 * its settled strike markets: the bucket that resolved Yes holds it, those that resolved No do not.
 */
import { Random } from "../demo/random.js";
import type { SimulatedEvent, SimulatedMarket } from "./exchange.js";
import { formatForecast, impliedCdf, quantileOf, type Strike } from "./forecast.js";
import type { Milestone, ReadingSubject } from "./milestones.js";

const HOUR = 3_600;
/** The hour of the climate day the temperature peaks at. */
const PEAK_HOUR = 15;

/** Outcome values by event, redrawn only when one of its markets settles differently. */
const values = new WeakMap<SimulatedEvent, { signature: string; value: number }>();

/** Kalshi-style live data `details` of a day's high temperature at `now`. */
export function weatherDetails(
  milestone: Milestone,
  subject: ReadingSubject,
  now: number,
): Record<string, unknown> {
  const high = outcomeValue(milestone, subject.event, 1);
  const rng = new Random(`oddsgate-simulator/weather/${milestone.id}`);
  const low = high - rng.between(7, 16);
  const readings: { ts: number; temperature: number }[] = [];
  for (let hour = 0; hour < 24; hour++) {
    const ts = milestone.start + hour * HOUR;
    // A day's curve peaking mid-afternoon; the peak reading is the high itself, every other one below it.
    const shape = 0.5 + 0.5 * Math.cos((2 * Math.PI * (hour - PEAK_HOUR)) / 24);
    const dip = hour === PEAK_HOUR ? 0 : rng.between(0.2, 1.5) * (1 - shape) + 0.1;
    if (ts > now) continue;
    readings.push({ ts, temperature: round(Math.min(high - 0.1, low + (high - low) * shape - dip), 1) });
    if (hour === PEAK_HOUR) (readings.at(-1) as { temperature: number }).temperature = high;
  }
  const final = now >= milestone.end;
  const temperatures = readings.map((r) => r.temperature);
  return {
    status: now < milestone.start ? "scheduled" : final ? "final" : "live",
    ...milestone.details,
    current_temperature: readings.at(-1)?.temperature ?? null,
    high_so_far: temperatures.length > 0 ? Math.max(...temperatures) : null,
    low_so_far: temperatures.length > 0 ? Math.min(...temperatures) : null,
    final_high: final ? high : null,
    readings,
    last_updated_ts: readings.at(-1)?.ts ?? null,
  };
}

/** Kalshi-style live data `details` of an economic release at `now`: the figure once it is out. */
export function releaseDetails(
  milestone: Milestone,
  subject: ReadingSubject,
  now: number,
): Record<string, unknown> {
  const strikes = subject.event.strikes;
  const released = now >= milestone.start;
  // The figure is published to the precision its strikes are written in (a percentage's forecast digits add one).
  const decimals = strikes ? strikes.digits - (strikes.unit === "%" ? 1 : 0) : 0;
  const value = released && strikes ? outcomeValue(milestone, subject.event, 10 ** -decimals) : null;
  return {
    status: released ? "released" : "scheduled",
    ...milestone.details,
    release_ts: milestone.start,
    value,
    formatted_value: value !== null && strikes ? formatForecast(value, strikes) : null,
  };
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

function inside(strike: Strike, value: number): boolean {
  switch (strike.type) {
    case "less":
      return value < strike.cap;
    case "greater":
      return value > strike.floor;
    default:
      return value >= strike.floor && value < strike.cap;
  }
}

function beliefOf(market: SimulatedMarket): number {
  const { yesBid, yesAsk } = market.record;
  if (yesBid !== null && yesAsk !== null) return (Number(yesBid) + Number(yesAsk)) / 2;
  return market.lifecycle.result === "yes" ? 1 : 0;
}

/**
 * The event's outcome on a grid of `step`: drawn from the markets' implied distribution, then moved to
 * the nearest value every settled strike market agrees with.
 */
function outcomeValue(milestone: Milestone, event: SimulatedEvent, step: number): number {
  const signature = event.markets.map((m) => m.lifecycle.result).join(",");
  const known = values.get(event);
  if (known?.signature === signature) return known.value;
  const strikes = event.strikes;
  if (!strikes) return 0;
  const digits = Math.max(0, Math.round(-Math.log10(step)));
  const snap = (x: number) => round(Math.round(x / step) * step, digits);
  const knots = impliedCdf(strikes, new Map(event.markets.map((m) => [m.record.ticker, beliefOf(m)])));
  const rng = new Random(`oddsgate-simulator/reading/${milestone.id}`);
  const drawn = snap(quantileOf(knots, rng.between(0.05, 0.95)));
  const settled = event.markets.flatMap((m) => {
    const strike = strikes.byTicker.get(m.record.ticker);
    const { result } = m.lifecycle;
    return strike && (result === "yes" || result === "no") ? [{ strike, yes: result === "yes" }] : [];
  });
  const agrees = (x: number) => settled.every(({ strike, yes }) => inside(strike, x) === yes);
  // Candidates: the draw, values on either side of every strike edge, and the distribution's quantiles.
  const candidates = [drawn];
  for (const strike of strikes.byTicker.values()) {
    const edges =
      strike.type === "less"
        ? [strike.cap]
        : strike.type === "greater"
          ? [strike.floor]
          : [strike.floor, strike.cap];
    for (const edge of edges) for (let k = -3; k <= 3; k++) candidates.push(snap(edge + k * step));
  }
  for (let q = 1; q < 100; q++) candidates.push(snap(quantileOf(knots, q / 100)));
  candidates.sort((a, b) => Math.abs(a - drawn) - Math.abs(b - drawn));
  const value = candidates.find(agrees) ?? drawn;
  values.set(event, { signature, value });
  return value;
}
