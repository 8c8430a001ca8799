/**
 * The explorer's one way of writing prices, chances and times, so two figures side by side never
 * disagree in form (`29.0¢` beside `27¢`):
 * - a price is cents, with one decimal only when it has one: `27¢`, `27.5¢`;
 * - a chance is a whole percent, `<1%` and `>99%` at the ends (a price of 0.4 is a 40% chance);
 * - a time carries its zone: `Dec 3, 2:05 PM UTC`.
 * Pure functions of their arguments (the zone defaults to the browser's), so a unit test pins them.
 */

/** A price in cents (a number, e.g. 29 or 29.04) as the page writes it: `29¢`, `29.5¢`, or "—". */
export function centsText(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  const tenths = Math.round(value * 10);
  const text = tenths % 10 === 0 ? String(tenths / 10) : (tenths / 10).toFixed(1);
  return `${text === "-0" ? "0" : text}¢`;
}

/** A dollar price (the API's "0.4200" strings, or a number of dollars) as cents: `42¢`. */
export function price(dollars: string | number | null | undefined): string {
  if (dollars === null || dollars === undefined || dollars === "") return "—";
  return centsText(Number(dollars) * 100);
}

/** A probability in [0, 1] as a whole percent: `42%`, `<1%` and `>99%` short of the ends, or "—". */
export function percent(probability: number | null | undefined): string {
  if (probability === null || probability === undefined || !Number.isFinite(probability)) return "—";
  const value = Math.min(1, Math.max(0, probability)) * 100;
  if (value > 0 && value < 0.5) return "<1%";
  if (value < 100 && value > 99.5) return ">99%";
  return `${Math.round(value)}%`;
}

/** What the chance of a market is read from: its yes quotes and, once settled, its result. */
export interface Priced {
  yesBid?: string | null;
  yesAsk?: string | null;
  result?: string;
  /** The last traded yes price in dollars, when known. */
  last?: string | null;
}

/**
 * A market's chance of yes in [0, 1], from its price: a settled result is certain; else the middle
 * of the yes bid and ask; a one-sided book, or a spread wider than 10¢, gives way to the last trade
 * when there is one (as Kalshi and Polymarket show it); null when nothing prices it.
 */
export function chanceOf(market: Priced): number | null {
  if (market.result === "yes") return 1;
  if (market.result === "no") return 0;
  const bid = quote(market.yesBid);
  const ask = quote(market.yesAsk);
  const last = quote(market.last);
  if (bid !== null && ask !== null && (ask - bid <= 0.1 || last === null)) return (bid + ask) / 2;
  if (last !== null) return last;
  return bid ?? ask;
}

function quote(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === "") return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

/**
 * A key naming markets' order. Given to the element that holds them, it rebuilds their rows when the
 * order changes: Preact's keyed moves once left the event's reordered markets out of order in the
 * explorer test (preactjs/preact#4412 reports the same), and live chances reorder them often.
 */
export function orderOf(markets: readonly { ticker: string }[]): string {
  return markets.map((market) => market.ticker).join(" ");
}

/** `items` by their chance, highest first; those without one last, in their given order. */
export function byChance<T>(items: readonly T[], chance: (item: T) => number | null): T[] {
  return items
    .map((item, index) => ({ item, index, value: chance(item) }))
    .sort((a, b) => (b.value ?? -1) - (a.value ?? -1) || a.index - b.index)
    .map((entry) => entry.item);
}

/** A Unix time (seconds) as a short date and time with its zone: `Dec 3, 2:05 PM EST`, or "—". */
export function dateTime(seconds: number | null | undefined, timeZone?: string): string {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleString("en-US", {
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
    ...(timeZone ? { timeZone } : {}),
  });
}

/** A Unix time (seconds) as a time of day with its zone: `14:05:09 UTC`, or "—". */
export function clock(seconds: number | null | undefined, timeZone?: string): string {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleTimeString("en-US", {
    hour12: false,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
    ...(timeZone ? { timeZone } : {}),
  });
}
