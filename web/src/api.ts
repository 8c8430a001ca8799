/**
 * The explorer's only way to the venue: the public HTTP APIs of the origin that served it. In
 * production the API key lives in session storage and goes in the x-api-key header, never in a URL.
 *
 * The page keeps within its budget: identical GETs in flight are sent once, every request says it
 * comes from the explorer (`x-oddsgate-client: explorer`, which a development instance answers from
 * the explorer's own, larger bucket; production ignores it and applies the key's tier), and a refusal
 * (429, the venue unreachable or not ready) pauses every request until it is due again, with backoff,
 * while the banner says so. Relayed answers that failed upstream are told to the health witnesses.
 */
import { signal } from "@preact/signals";
import { type HealthReport, reportUpstream, venueAnswered, venueRefused } from "./health";

const KEY_STORAGE = "oddsgate.apiKey";

/** The API key of this browser tab (production), or "". */
export const apiKey = signal(sessionStorage.getItem(KEY_STORAGE) ?? "");
/** Set when a request was refused for want of a key: the page then asks for one. */
export const needsKey = signal(false);
/** The venue's words when it refused the key this tab offered (a wrong or revoked key), else "". */
export const keyRefused = signal("");

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

/** The marker of the explorer's own requests (trusted for a budget in development only). */
export const CLIENT_HEADER = { "x-oddsgate-client": "explorer" } as const;

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const all = { ...CLIENT_HEADER, ...extra };
  return apiKey.value ? { ...all, "x-api-key": apiKey.value } : all;
}

/** Answers that say the upstream exchange failed, not the venue. */
const UPSTREAM_CODES = new Set(["upstream_unavailable", "upstream_timeout", "upstream_error"]);

/** Paths whose answers the venue relays from the upstream: one that succeeds says the upstream answers. */
const RELAYED = /^\/api\/v1\/(orderbook|trades|.*candlesticks|.*forecast_percentile_history|live_data)/;

async function answer<T>(response: Response, as: "json" | "text"): Promise<T> {
  if (response.ok) {
    if (RELAYED.test(new URL(response.url, location.href).pathname)) reportUpstream("api", false);
    return (as === "json" ? response.json() : response.text()) as Promise<T>;
  }
  let code = "http_error";
  let msg = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { code?: string; msg?: string };
    code = body.code ?? code;
    msg = body.msg ?? msg;
  } catch {
    // Not the venue's {code,msg}: the status says enough.
  }
  if (response.status === 401) {
    // With a key offered, the key itself was refused: the prompt says so rather than just asking again.
    // A body left unread (its view went away and aborted it) does not replace the venue's own words.
    if (apiKey.value && (code !== "http_error" || !keyRefused.value)) keyRefused.value = msg;
    needsKey.value = true;
  }
  if (UPSTREAM_CODES.has(code)) reportUpstream("api", true, Date.now(), msg);
  throw new ApiError(response.status, code, msg);
}

/** The backoff between attempts while the venue refuses or does not answer: 1 s doubling to 30 s. */
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;
/** Attempts of one request before its caller hears the failure (the banner stays until one succeeds). */
const ATTEMPTS = 6;

/** Until when every request waits (a 429's Retry-After, or the backoff after an unreachable venue). */
let pausedUntil = 0;
let backoffMs = FIRST_RETRY_MS;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits while requests are paused. */
async function gate(): Promise<void> {
  for (let wait = pausedUntil - Date.now(); wait > 0; wait = pausedUntil - Date.now()) await sleep(wait);
}

/** Whether this failed attempt is one to retry after a pause (and pauses every request until then). */
function shouldRetry(status: number | "network", code: string, message: string): boolean {
  let reason: Parameters<typeof venueRefused>[0];
  let waitMs = backoffMs;
  if (status === 429) reason = "rate_limited";
  else if (status === "network") reason = "unreachable";
  else if (status === 503 && code === "not_ready") reason = "not_ready";
  // A proxy's 502/503/504 in front of the venue (not the venue's {code,msg}, which names the upstream).
  else if (status !== 429 && status >= 502 && status <= 504 && code === "http_error") reason = "failing";
  else return false;
  if (reason === "rate_limited") {
    const after = Number(message);
    waitMs = Math.max(Number.isFinite(after) && after > 0 ? after * 1000 : 0, backoffMs);
  }
  backoffMs = Math.min(backoffMs * 2, LAST_RETRY_MS);
  pausedUntil = Math.max(pausedUntil, Date.now() + waitMs);
  venueRefused(reason, reason === "rate_limited" ? "the venue's rate limit" : message, pausedUntil);
  return true;
}

/**
 * Sends a request through the gate, retrying refusals (429, unreachable, not ready) after a pause,
 * up to ATTEMPTS times; any answer that is not a refusal ends the venue's trouble.
 */
async function send(path: string, init: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    await gate();
    if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
    let response: Response;
    try {
      response = await fetch(path, { ...init, headers: headers(init.headers as Record<string, string>) });
    } catch (error) {
      if ((error as Error).name === "AbortError" || attempt >= ATTEMPTS) throw error;
      shouldRetry("network", "", "the venue does not answer");
      continue;
    }
    if (response.status === 429 || response.status >= 500) {
      let code = "http_error";
      let message = "";
      if (response.status === 429) message = response.headers.get("retry-after") ?? "";
      else {
        try {
          const body = (await response.clone().json()) as { code?: string; msg?: string };
          code = body.code ?? code;
          message = body.msg ?? "";
        } catch {
          // Not the venue's {code,msg}.
        }
      }
      if (attempt < ATTEMPTS && shouldRetry(response.status, code, message || `HTTP ${response.status}`))
        continue;
    }
    backoffMs = FIRST_RETRY_MS;
    if (response.status !== 429) venueAnswered();
    return response;
  }
}

/** GETs in flight by URL (and key): a second caller shares the first one's answer. */
const inFlight = new Map<string, Promise<unknown>>();

function shared<T>(url: string, as: "json" | "text", signal?: AbortSignal): Promise<T> {
  // A caller that may abort gets a request of its own, so aborting never fails another caller.
  if (signal) return send(url, { signal }).then((response) => answer<T>(response, as));
  const key = `${as} ${apiKey.value} ${url}`;
  let pending = inFlight.get(key) as Promise<T> | undefined;
  if (!pending) {
    pending = send(url, {}).then((response) => answer<T>(response, as));
    inFlight.set(key, pending);
    const forget = () => inFlight.delete(key);
    pending.then(forget, forget);
  }
  return pending;
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
  return shared<T>(withQuery(path, query), "json", signal);
}

/** GETs text (the health check, metrics). */
export async function getText(path: string): Promise<string> {
  return shared<string>(path, "text");
}

/**
 * The venue's health report, in one attempt (the health watch has its own cadence): `fresh` asks
 * `/health-check/ready` first (it probes now; a refusal there falls back to `/health-check/live`, the
 * last probes whatever they say). Null from an instance without the report.
 */
export async function getHealth(fresh: boolean): Promise<HealthReport | null> {
  for (const path of fresh ? ["/health-check/ready", "/health-check/live"] : ["/health-check/live"]) {
    await gate();
    let response: Response;
    try {
      response = await fetch(path, { headers: headers() });
    } catch (error) {
      shouldRetry("network", "", "the venue does not answer");
      throw error;
    }
    if (response.status === 429) {
      shouldRetry(429, "", response.headers.get("retry-after") ?? "");
      throw new ApiError(429, "rate_limit_exceeded", "rate limited");
    }
    backoffMs = FIRST_RETRY_MS;
    venueAnswered();
    if (response.status === 401) await answer(response, "json");
    if (!response.ok) continue;
    const body = (await response.json().catch(() => null)) as HealthReport | null;
    if (body && typeof body.status === "string" && body.parts) return body;
  }
  return null;
}

/** POSTs JSON to the venue (retried only when it was refused before being read: a 429, or unreachable). */
export async function postJson<T>(path: string, body: unknown, method: "POST" | "PUT" = "POST"): Promise<T> {
  let attempt = 0;
  for (;;) {
    attempt++;
    await gate();
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers: headers({ "content-type": "application/json" }),
        body: JSON.stringify(body),
      });
    } catch (error) {
      // The request may have arrived: a POST is not sent twice on a network failure.
      shouldRetry("network", "", "the venue does not answer");
      throw error;
    }
    if (response.status === 429 && attempt < ATTEMPTS) {
      shouldRetry(429, "", response.headers.get("retry-after") ?? "");
      continue;
    }
    if (response.status !== 429) {
      backoffMs = FIRST_RETRY_MS;
      venueAnswered();
    }
    return answer<T>(response, "json");
  }
}

/** What the server says about itself: its mode, and whether the sandbox controls apply. */
export interface ExplorerSettings {
  mode: "development" | "production";
  sandbox: boolean;
  /** Whether the simulator panel applies (development with the embedded simulator); optional. */
  simulator?: boolean;
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

/** A count with thousands separators. */
export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : value.toLocaleString("en-US");
}

/** Millionths (a 6-decimal token amount) as a decimal string. */
export function units(amount: bigint | string | number, decimals = 6): string {
  const value = BigInt(amount);
  const scale = 10n ** BigInt(decimals);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole.toString();
}
