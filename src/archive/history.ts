/**
 * History past what the upstream keeps, from the archive: an event's forecast periods older than the
 * upstream's live window are joined in front of its answer (no gap: every archived period before the
 * upstream's first; no duplicate: none from the upstream's own range), and a market's order book is
 * answered as the venue recorded it at a moment (`?at=`). The archive's files are opened, with DuckDB,
 * at the first read that needs them.
 */
import type { ForecastHistory } from "../contract/markets.js";
import type { UpstreamAnswer } from "../upstream/client.js";
import { bestBids, type ForecastQuery, type ReferenceBook } from "../upstream/relay.js";
import { jsonAnswer, parseBody } from "../upstream/tiers.js";
import type { ArchiveReader } from "./archive-reader.js";
import type { ArchiveRow } from "./tables.js";

type ForecastPeriod = ForecastHistory["forecast_history"][number];

export class ArchiveHistory {
  private reader: Promise<ArchiveReader> | undefined;

  constructor(private readonly dir: string) {}

  /**
   * The upstream's forecast answer with the archived periods it no longer serves in front: those of
   * the range before its first period that hold every percentile asked for. Unchanged (the same
   * bytes) when the upstream covers the range's start or the archive has nothing older.
   */
  async forecastHistory(
    eventTicker: string,
    q: ForecastQuery,
    upstream: UpstreamAnswer,
  ): Promise<UpstreamAnswer> {
    if (upstream.status !== 200) return upstream;
    const body = parseBody(upstream) as { forecast_history?: unknown };
    if (!Array.isArray(body.forecast_history)) return upstream;
    const periodSeconds = q.periodInterval === 0 ? 5 : q.periodInterval * 60;
    const served = (body.forecast_history as { end_period_ts?: unknown }[])
      .map((period) => Number(period?.end_period_ts))
      .filter(Number.isSafeInteger);
    const firstServed = served.length > 0 ? Math.min(...served) : q.endTs + periodSeconds;
    // The upstream answers from the range's first period: nothing is missing, and the archive is not read.
    if (firstServed - periodSeconds < q.startTs) return upstream;
    const rows = await (await this.open()).rows("forecasts", {
      from: q.startTs * 1000,
      to: Math.min(firstServed, q.endTs + 1) * 1000,
      equals: { event_ticker: eventTicker, period_interval: q.periodInterval },
      orderBy: "end_period_ts",
    });
    const archived = completePeriods(rows, q.percentiles);
    if (archived.length === 0) return upstream;
    return jsonAnswer({ ...body, forecast_history: [...archived, ...body.forecast_history] });
  }

  /** The last book of `ticker` recorded at or before `atMs`, with at most `depth` levels a side (0: all). */
  async orderbookAt(ticker: string, atMs: number, depth = 0): Promise<ReferenceBook | undefined> {
    const [row] = await (await this.open()).rows("orderbooks", {
      to: atMs + 1,
      equals: { ticker },
      orderBy: "ts",
      descending: true,
      limit: 1,
    });
    if (!row) return undefined;
    const yes = JSON.parse(row.yes_bids) as Record<string, number>;
    const no = JSON.parse(row.no_bids) as Record<string, number>;
    return {
      yes_bids: depth > 0 ? bestBids(yes, depth) : yes,
      no_bids: depth > 0 ? bestBids(no, depth) : no,
      // Recorded books are ordered by when the venue read them, as the relay's own are.
      sequence: row.ts,
    };
  }

  async close(): Promise<void> {
    const reader = await this.reader?.catch(() => undefined);
    reader?.close();
  }

  private open(): Promise<ArchiveReader> {
    this.reader ??= import("./archive-reader.js").then(({ ArchiveReader }) => ArchiveReader.open(this.dir));
    return this.reader;
  }
}

/** The archived periods holding every percentile asked for, in time order, in the upstream's shape. */
function completePeriods(
  rows: readonly ArchiveRow<"forecasts">[],
  percentiles: readonly number[],
): ForecastPeriod[] {
  const byEnd = new Map<number, Map<number, ArchiveRow<"forecasts">>>();
  for (const row of rows) {
    const points = byEnd.get(row.end_period_ts) ?? new Map<number, ArchiveRow<"forecasts">>();
    points.set(row.percentile, row);
    byEnd.set(row.end_period_ts, points);
  }
  const periods: ForecastPeriod[] = [];
  for (const [endMs, points] of [...byEnd].sort(([a], [b]) => a - b)) {
    const chosen = percentiles.map((percentile) => points.get(percentile));
    if (chosen.some((point) => point === undefined)) continue;
    const first = chosen[0] as ArchiveRow<"forecasts">;
    periods.push({
      event_ticker: first.event_ticker,
      end_period_ts: endMs / 1000,
      period_interval: first.period_interval,
      percentile_points: (chosen as ArchiveRow<"forecasts">[]).map((point) => ({
        percentile: point.percentile,
        raw_numerical_forecast: point.raw_numerical_forecast,
        numerical_forecast: point.numerical_forecast,
        formatted_forecast: point.formatted_forecast,
      })),
    });
  }
  return periods;
}
