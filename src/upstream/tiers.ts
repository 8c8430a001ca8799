/**
 * Kalshi's two tiers of market data, as the relay reads them: live endpoints keep recent markets, their
 * candles and trades, and `/historical/*` serves what settled or traded before the cutoffs
 * `GET /historical/cutoff` names. Markets (and so their candles) are partitioned by settlement time,
 * trades by creation time; events, series and forecasts are not partitioned.
 */
import { answerJson, type Upstream, type UpstreamAnswer } from "./client.js";
import { UpstreamError } from "./errors.js";

/** Kalshi moves its cutoffs forward now and then (daily at most): a minute-old reading is fresh enough. */
const CUTOFF_MAX_AGE_MS = 60_000;
/** A cutoff timestamp at most this long (RFC 3339, nanoseconds and an offset fit well inside). */
const MAX_CUTOFF_LENGTH = 40;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export interface Cutoffs {
  /** Markets settled before this moment (Unix seconds, fractional) are served only as historical. */
  marketSettled: number;
  /** Trades created before this moment are served only by `/historical/trades`. */
  tradesCreated: number;
}

/**
 * The upstream's cutoffs, or null when it has no historical tier (it answers 404, as an exchange from
 * before the split does): then everything is live.
 */
export async function readCutoffs(upstream: Upstream): Promise<Cutoffs | null> {
  const answer = await upstream.get("historical/cutoff", undefined, { maxAgeMs: CUTOFF_MAX_AGE_MS });
  if (answer.status === 404) return null;
  if (answer.status !== 200) {
    throw new UpstreamError(
      "unavailable",
      `the upstream exchange answered ${answer.status} for its historical cutoff`,
    );
  }
  const body = parseBody(answer) as { market_settled_ts?: unknown; trades_created_ts?: unknown } | null;
  return {
    marketSettled: moment(body?.market_settled_ts),
    tradesCreated: moment(body?.trades_created_ts),
  };
}

function moment(value: unknown): number {
  const ms =
    typeof value === "string" && value.length <= MAX_CUTOFF_LENGTH && RFC3339.test(value)
      ? Date.parse(value.toUpperCase())
      : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent a historical cutoff that is not a timestamp",
    );
  }
  return ms / 1000;
}

export function parseBody(answer: UpstreamAnswer): unknown {
  try {
    return answerJson(answer);
  } catch {
    throw new UpstreamError("unavailable", "the upstream exchange answered with a body that is not JSON");
  }
}

/** Basis points of a 4-decimal dollar string, read exactly (no cent rounding on the way). */
function basisPoints(dollars: unknown): number | null {
  if (dollars === null || dollars === undefined) return null;
  const value = typeof dollars === "string" && dollars.length <= 32 ? Number(dollars) : Number.NaN;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent a historical candle price out of range",
    );
  }
  return Math.round(value * 10_000);
}

/** A historical distribution (dollar strings) as the live one writes it: cents, and the dollars beside them. */
function liveDistribution(distribution: unknown): Record<string, unknown> {
  if (typeof distribution !== "object" || distribution === null || Array.isArray(distribution)) {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent a historical candle without its prices",
    );
  }
  const out: Record<string, unknown> = {};
  for (const [name, dollars] of Object.entries(distribution)) {
    const bp = basisPoints(dollars);
    out[name] = bp === null ? null : Math.round(bp / 100);
    out[`${name}_dollars`] = bp === null ? null : dollars;
  }
  return out;
}

/** A fixed-point count ("125.00") as the live candle's integer and its `_fp` twin. */
function count(value: unknown): [number, string] {
  const n = typeof value === "string" && value.length <= 32 ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent a historical candle count out of range",
    );
  }
  return [Math.floor(n), value as string];
}

/**
 * A candle of GetMarketCandlesticksHistorical in GetMarketCandlesticks' shape, the one the relay's
 * clients read: integer cents beside each `_dollars` price, integer counts beside each `_fp` one.
 */
export function liveCandle(candle: unknown): Record<string, unknown> {
  const c = (candle ?? {}) as Record<string, unknown>;
  if (typeof c.end_period_ts !== "number") {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent a historical candle without its period",
    );
  }
  const [volume, volumeFp] = count(c.volume);
  const [openInterest, openInterestFp] = count(c.open_interest);
  return {
    end_period_ts: c.end_period_ts,
    yes_bid: liveDistribution(c.yes_bid),
    yes_ask: liveDistribution(c.yes_ask),
    price: liveDistribution(c.price),
    volume,
    volume_fp: volumeFp,
    open_interest: openInterest,
    open_interest_fp: openInterestFp,
  };
}

/** The `candlesticks` list of a market candlesticks answer. */
export function candlesOf(body: unknown): unknown[] {
  const list = (body as { candlesticks?: unknown } | null)?.candlesticks;
  if (!Array.isArray(list)) {
    throw new UpstreamError(
      "unavailable",
      "the upstream exchange sent candlesticks without a candlesticks list",
    );
  }
  return list;
}

export function jsonAnswer(body: unknown): UpstreamAnswer {
  return {
    status: 200,
    contentType: "application/json; charset=utf-8",
    body: Buffer.from(JSON.stringify(body)),
  };
}
