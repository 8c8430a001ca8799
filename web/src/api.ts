/**
 * The explorer's only way to the venue: the public HTTP APIs of the origin that served it. In
 * production the API key lives in session storage and goes in the x-api-key header, never in a URL.
 */
import { signal } from "@preact/signals";

const KEY_STORAGE = "oddsgate.apiKey";

/** The API key of this browser tab (production), or "". */
export const apiKey = signal(sessionStorage.getItem(KEY_STORAGE) ?? "");
/** Set when a request was refused for want of a key: the page then asks for one. */
export const needsKey = signal(false);

/** Keeps `key` for this tab only (session storage) and uses it from now on. */
export function setApiKey(key: string): void {
  apiKey.value = key.trim();
  if (apiKey.value) sessionStorage.setItem(KEY_STORAGE, apiKey.value);
  else sessionStorage.removeItem(KEY_STORAGE);
  needsKey.value = false;
}

/** An error answer of the venue: its `{code, msg}` and HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return apiKey.value ? { ...extra, "x-api-key": apiKey.value } : extra;
}

async function answer<T>(response: Response, as: "json" | "text"): Promise<T> {
  if (response.ok) return (as === "json" ? response.json() : response.text()) as Promise<T>;
  let code = "http_error";
  let msg = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { code?: string; msg?: string };
    code = body.code ?? code;
    msg = body.msg ?? msg;
  } catch {
    // Not the venue's {code,msg}: the status says enough.
  }
  if (response.status === 401) needsKey.value = true;
  throw new ApiError(response.status, code, msg);
}

type Query = Record<string, string | number | boolean | undefined | null>;

/** `path` with the defined parameters of `query`. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** GETs JSON from the venue. */
export async function getJson<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
  return answer<T>(
    await fetch(withQuery(path, query), { headers: headers(), signal: signal ?? null }),
    "json",
  );
}

/** GETs text (the health check, metrics). */
export async function getText(path: string): Promise<string> {
  return answer<string>(await fetch(path, { headers: headers() }), "text");
}

/** POSTs JSON to the venue. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify(body),
    }),
    "json",
  );
}

/** What the server says about itself: its mode, and whether the sandbox controls apply. */
export interface ExplorerSettings {
  mode: "development" | "production";
  sandbox: boolean;
  /** Symbols of mints the server knows beyond the well-known ones (its demo tokens), by mint; optional. */
  tokens?: Record<string, string>;
}

export const settings = signal<ExplorerSettings>({ mode: "development", sandbox: false });

let settingsLoaded: () => void = () => {};
/** Resolves once the settings are known (what the stream waits for before it opens). */
export const settingsReady = new Promise<void>((resolve) => {
  settingsLoaded = resolve;
});

/** Loads the settings once at start. */
export async function loadSettings(): Promise<void> {
  try {
    settings.value = await getJson<ExplorerSettings>("/explorer/config.json");
  } catch {
    // An older server: assume the safe side, no sandbox controls.
  } finally {
    settingsLoaded();
  }
}

export const USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

export interface MarketAccount {
  marketLedger: string;
  yesMint: string;
  noMint: string;
  isInitialized: boolean;
  redemptionStatus: "open" | "pending" | null;
  scalarOutcomePct: number | null;
}

export interface Market {
  ticker: string;
  eventTicker: string;
  title: string;
  subtitle: string;
  yesSubTitle: string;
  noSubTitle: string;
  openTime: number;
  closeTime: number;
  status: string;
  result: string;
  volume: number;
  openInterest: number;
  rulesPrimary: string;
  rulesSecondary: string | null;
  yesBid: string | null;
  yesAsk: string | null;
  noBid: string | null;
  noAsk: string | null;
  accounts: Record<string, MarketAccount>;
}

export interface MarketEvent {
  ticker: string;
  seriesTicker: string;
  title: string;
  subtitle: string;
  volume: number | null;
  volume24h?: number | null;
  openInterest: number | null;
  strikeDate: number | null;
  settlementSources: { name: string; url: string }[] | null;
  markets: Market[] | null;
}

export interface EventPage {
  events: MarketEvent[];
  cursor: number | null;
}

export interface Series {
  ticker: string;
  title: string;
  category: string;
  tags: string[];
}

/** Price levels of one side: dollar price (4 decimals) to contracts. */
export type Levels = Record<string, number>;

export interface OrderBook {
  yes_bids: Levels;
  no_bids: Levels;
  sequence?: number;
}

export interface Trade {
  tradeId: string;
  ticker: string;
  count: number;
  yesPriceDollars: string;
  noPriceDollars: string;
  takerSide: string;
  createdTime: number;
}

export interface PercentilePoint {
  percentile: number;
  numerical_forecast: number | null;
  formatted_forecast: string;
}

export interface ForecastPoint {
  end_period_ts: number;
  percentile_points: PercentilePoint[];
}

export interface PriceRange {
  open: number | null;
  high: number | null;
  low: number | null;
  close: number | null;
}

export interface Candle {
  end_period_ts: number;
  price: PriceRange;
  yes_bid: PriceRange;
  yes_ask: PriceRange;
  volume: number;
}

/** Formats a dollar price string (or null) as cents, e.g. "0.4200" as "42¢". */
export function cents(price: string | null | undefined): string {
  if (price === null || price === undefined) return "—";
  const value = Number(price) * 100;
  return `${Number.isInteger(value) ? value : value.toFixed(1)}¢`;
}

/** A count with thousands separators. */
export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : value.toLocaleString("en-US");
}

/** A Unix time as a short local date and time. */
export function when(seconds: number | null | undefined): string {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleString("en-US", {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** Millionths (a 6-decimal token amount) as a decimal string. */
export function units(amount: bigint | string | number, decimals = 6): string {
  const value = BigInt(amount);
  const scale = 10n ** BigInt(decimals);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole.toString();
}
