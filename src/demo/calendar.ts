/**
 * Calendar arithmetic for the demo catalogue. Days are counted as whole UTC days since the Unix epoch
 * ("day numbers"); times are Unix seconds. Local times are converted with fixed offsets and the US/UK
 * daylight-saving rules, which is all the venues we imitate need.
 */

export const MINUTE = 60;
export const HOUR = 3_600;
export const DAY = 86_400;

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

export interface CivilDate {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  /** 0 = Sunday … 6 = Saturday */
  weekday: number;
}

/** The calendar date of a day number. */
export function civil(dayNumber: number): CivilDate {
  const date = new Date(dayNumber * DAY * 1000);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    weekday: date.getUTCDay(),
  };
}

/** The day number of a calendar date (month 1–12). */
export function dayNumber(year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day) / (DAY * 1000);
}

/** Year and month `delta` months away (delta may be negative). */
export function addMonths(year: number, month: number, delta: number): { year: number; month: number } {
  const index = year * 12 + (month - 1) + delta;
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
}

/** "November" for 11. */
export function monthName(month: number): string {
  return MONTHS[month - 1] as string;
}

/** "Nov" for 11. */
export function monthAbbrev(month: number): string {
  return monthName(month).slice(0, 3);
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** Kalshi's ticker date: "26NOV23". */
export function tickerDate(dayNumber: number): string {
  const { year, month, day } = civil(dayNumber);
  return `${tickerMonth(year, month)}${pad2(day)}`;
}

/** Kalshi's ticker month: "26NOV". */
export function tickerMonth(year: number, month: number): string {
  return `${pad2(year % 100)}${monthAbbrev(month).toUpperCase()}`;
}

/** "Nov 23, 2026" */
export function shortDate(dayNumber: number): string {
  const { year, month, day } = civil(dayNumber);
  return `${monthAbbrev(month)} ${day}, ${year}`;
}

/** "November 23, 2026", as contract rules spell dates. */
export function longDate(dayNumber: number): string {
  const { year, month, day } = civil(dayNumber);
  return `${monthName(month)} ${day}, ${year}`;
}

/** The n-th given weekday of a month (n = -1 for the last one), as a day number. */
export function nthWeekday(year: number, month: number, weekday: number, n: number): number {
  if (n > 0) {
    const first = dayNumber(year, month, 1);
    return first + ((weekday - civil(first).weekday + 7) % 7) + (n - 1) * 7;
  }
  const next = addMonths(year, month, 1);
  const last = dayNumber(next.year, next.month, 1) - 1;
  return last - ((civil(last).weekday - weekday + 7) % 7);
}

/** US general election day: the Tuesday after the first Monday of November. */
export function usElectionDay(year: number): number {
  return nthWeekday(year, 11, 1, 1) + 1;
}

/** A time zone as a standard UTC offset plus the daylight-saving rule it follows, if any. */
export interface Zone {
  offsetHours: number;
  dst: "us" | "uk" | null;
  /** Abbreviations in standard and in daylight time, e.g. ["EST", "EDT"]. */
  names: readonly [string, string];
}

export const EASTERN: Zone = { offsetHours: -5, dst: "us", names: ["EST", "EDT"] };
export const LONDON: Zone = { offsetHours: 0, dst: "uk", names: ["GMT", "BST"] };

/** Whether daylight time is in force on a local date (switch-over days count as the new regime). */
function isDaylight(zone: Zone, dayNumber: number): boolean {
  if (zone.dst === null) return false;
  const { year } = civil(dayNumber);
  if (zone.dst === "us")
    return dayNumber >= nthWeekday(year, 3, 0, 2) && dayNumber < nthWeekday(year, 11, 0, 1);
  return dayNumber >= nthWeekday(year, 3, 0, -1) && dayNumber < nthWeekday(year, 10, 0, -1);
}

/** Unix seconds of a local wall-clock time (hours may be fractional) on a local date. */
export function localTime(zone: Zone, dayNumber: number, hours: number): number {
  const offset = zone.offsetHours + (isDaylight(zone, dayNumber) ? 1 : 0);
  return dayNumber * DAY + Math.round((hours - offset) * HOUR);
}

/** The local date (day number) and wall-clock hours of a moment. */
export function toLocal(zone: Zone, t: number): { day: number; hours: number } {
  const standard = t + zone.offsetHours * HOUR;
  const shifted = isDaylight(zone, Math.floor(standard / DAY)) ? standard + HOUR : standard;
  const day = Math.floor(shifted / DAY);
  return { day, hours: (shifted - day * DAY) / HOUR };
}

/** "EST" or "EDT" for that local date. */
export function zoneName(zone: Zone, dayNumber: number): string {
  return zone.names[isDaylight(zone, dayNumber) ? 1 : 0];
}

/** "7:30pm", "5pm", "12pm" */
export function clockLabel(hours: number): string {
  const whole = Math.floor(hours);
  const minutes = Math.round((hours - whole) * 60);
  const suffix = whole >= 12 ? "pm" : "am";
  const twelve = whole % 12 === 0 ? 12 : whole % 12;
  return minutes === 0 ? `${twelve}${suffix}` : `${twelve}:${pad2(minutes)}${suffix}`;
}
