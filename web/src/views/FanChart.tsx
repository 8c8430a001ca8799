/**
 * An event's forecast percentile history as a fan chart: the 10–90 and 25–75 bands and the median
 * over time, in the event's own unit (from the formatted forecast), refreshed while the page is open.
 * lightweight-charts has no band series, so each band is drawn as stacked areas: the 90th percentile
 * filled in the outer colour, the 75th in the inner, the 25th in the outer again, the 10th in the
 * background colour, then the median line on top.
 *
 * An event without a numeric forecast (who wins, what the Fed decides) has no fan: the chart then
 * draws its leading outcomes' chances over time instead, one line each, from the event's candlesticks
 * (each period's last trade, else the middle of its yes bid and ask).
 */
import { AreaSeries, type ISeriesApi, LineSeries, type UTCTimestamp } from "lightweight-charts";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, type Candle, type ForecastPoint, getJson } from "../api";
import { mark, registry, themedChart } from "../charts";
import { dateTime, percent } from "../format";
import { chartColors } from "../theme";

/** Outcomes a categorical event's chart draws: its most likely ones. */
const OUTCOME_LINES = 4;

/** The colours of the outcome lines, from the page's CSS variables (--line-1 …). */
function lineColors(): string[] {
  const style = getComputedStyle(document.documentElement);
  return Array.from(
    { length: OUTCOME_LINES },
    (_, index) => style.getPropertyValue(`--line-${index + 1}`).trim() || chartColors().accent,
  );
}

/** An outcome of the event, as the chart names it. */
export interface Outcome {
  ticker: string;
  label: string;
}

/** A candle's yes price in cents: its last trade, else the middle of its closing yes bid and ask. */
function closeOf(candle: Candle): number | null {
  if (candle.price.close !== null) return candle.price.close;
  const bid = candle.yes_bid.close;
  const ask = candle.yes_ask.close;
  return bid === null || ask === null ? null : (bid + ask) / 2;
}

const PERCENTILES = [1000, 2500, 5000, 7500, 9000] as const;

const RANGES = [
  { label: "1h", seconds: 3_600, period: 1 },
  { label: "6h", seconds: 21_600, period: 1 },
  { label: "1d", seconds: 86_400, period: 60 },
  { label: "7d", seconds: 604_800, period: 60 },
  { label: "30d", seconds: 2_592_000, period: 1440 },
] as const;

const DEFAULT_RANGE = RANGES[2];

const PERIODS = [
  { label: "5s", minutes: 0 },
  { label: "1m", minutes: 1 },
  { label: "1h", minutes: 60 },
  { label: "1d", minutes: 1440 },
] as const;

/** At most this many points per request: a finer period over a long range would ask for too many. */
const MAX_POINTS = 5_000;
const periodSeconds = (minutes: number) => (minutes === 0 ? 5 : minutes * 60);

type Band = ISeriesApi<"Area">;

/** The forecast history of the last `rangeSeconds`, every `period` minutes. */
function requestForecast(
  seriesTicker: string,
  eventTicker: string,
  rangeSeconds: number,
  period: number,
): Promise<ForecastPoint[]> {
  const endTs = Math.floor(Date.now() / 1000);
  const startTs = endTs - Math.min(rangeSeconds, periodSeconds(period) * MAX_POINTS);
  return getJson<{ forecast_history: ForecastPoint[] }>(
    `/api/v1/event/${encodeURIComponent(seriesTicker)}/${encodeURIComponent(eventTicker)}/forecast_percentile_history`,
    { percentiles: PERCENTILES.join(","), startTs, endTs, periodInterval: period },
  ).then((body) => body.forecast_history ?? []);
}

/** Forecasts asked for before the chart was on screen, by series, event, range and period. */
const prefetched = new Map<string, { at: number; history: Promise<ForecastPoint[]> }>();
const PREFETCH_FRESH_MS = 5_000;

/**
 * Asks for the default view's forecast at once, before the event (and so its series) is known: the
 * series is guessed from the ticker's prefix, as tickers are formed. A wrong guess is never used.
 */
export function prefetchForecast(eventTicker: string): void {
  const seriesTicker = eventTicker.split("-")[0] ?? eventTicker;
  const { seconds, period } = DEFAULT_RANGE;
  const history = requestForecast(seriesTicker, eventTicker, seconds, period);
  history.catch(() => {});
  prefetched.set(`${seriesTicker}/${eventTicker}/${seconds}/${period}`, { at: Date.now(), history });
}

function takePrefetched(
  seriesTicker: string,
  eventTicker: string,
  rangeSeconds: number,
  period: number,
): Promise<ForecastPoint[]> | undefined {
  const key = `${seriesTicker}/${eventTicker}/${rangeSeconds}/${period}`;
  const early = prefetched.get(key);
  prefetched.delete(key);
  return early && Date.now() - early.at < PREFETCH_FRESH_MS ? early.history : undefined;
}

interface Props {
  seriesTicker: string;
  eventTicker: string;
  /** The event's outcomes, most likely first: drawn when the event has no numeric forecast. */
  outcomes: Outcome[];
}

/** The fan chart of one event, with range and period pickers. */
export function FanChart({ seriesTicker, eventTicker, outcomes }: Props) {
  const holder = useRef<HTMLDivElement>(null);
  const [range, setRange] = useState<(typeof RANGES)[number]>(DEFAULT_RANGE);
  const [period, setPeriod] = useState<number>(DEFAULT_RANGE.period);
  const [status, setStatus] = useState<string>("loading forecast…");
  const [latest, setLatest] = useState<string>("");
  /** The outcomes drawn instead of a fan (an event without a numeric forecast), with their colours. */
  const [drawn, setDrawn] = useState<{ label: string; color: string }[] | null>(null);
  const outcomesRef = useRef(outcomes);
  outcomesRef.current = outcomes;
  const seriesRef = useRef<
    | {
        bands: Band[];
        median: ISeriesApi<"Line">;
        unit: { value: string };
        fit: () => void;
        /** One line per outcome, made when first needed. */
        lines: () => ISeriesApi<"Line">[];
        /** The axis in chances (outcome lines) or in the forecast's unit. */
        axis: (chances: boolean) => void;
      }
    | undefined
  >(undefined);

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const unit = { value: "" };
    const colorsOf = (colors: ReturnType<typeof chartColors>) => [
      colors.bandOuter,
      colors.bandInner,
      colors.bandOuter,
      colors.background,
    ];
    let bands: Band[] = [];
    let median: ISeriesApi<"Line"> | undefined;
    let lines: ISeriesApi<"Line">[] = [];
    const { chart, dispose } = themedChart("fan", element, (colors) => {
      colorsOf(colors).forEach((color, index) => {
        bands[index]?.applyOptions({ topColor: color, bottomColor: color, lineColor: color });
      });
      median?.applyOptions({ color: colors.accent });
      const palette = lineColors();
      lines.forEach((line, index) => {
        line.applyOptions({ color: palette[index] });
      });
    });
    const forecastFormat = (price: number) => `${price.toFixed(1)}${unit.value}`;
    // The crosshair's time names its zone, as every time on the page does.
    chart.applyOptions({ localization: { priceFormatter: forecastFormat, timeFormatter: dateTime } });
    const colors = colorsOf(chartColors());
    bands = colors.map((color) =>
      chart.addSeries(AreaSeries, {
        topColor: color,
        bottomColor: color,
        lineColor: color,
        lineWidth: 1,
        lastValueVisible: false,
        priceLineVisible: false,
        crosshairMarkerVisible: false,
      }),
    );
    median = chart.addSeries(LineSeries, { color: chartColors().accent, lineWidth: 2 });
    const makeLines = () => {
      if (lines.length === 0) {
        const palette = lineColors();
        lines = palette.map((color) =>
          chart.addSeries(LineSeries, { color, lineWidth: 2, priceLineVisible: false }),
        );
        registry().charts.outcomes = { chart, lines };
      }
      return lines;
    };
    const axis = (chances: boolean) =>
      chart.applyOptions({
        localization: {
          priceFormatter: chances ? (value: number) => percent(value / 100) : forecastFormat,
          timeFormatter: dateTime,
        },
      });
    seriesRef.current = {
      bands,
      median,
      unit,
      fit: () => chart.timeScale().fitContent(),
      lines: makeLines,
      axis,
    };
    registry().charts.fan = { chart, median, bands };
    return dispose;
  }, []);

  useEffect(() => {
    let stopped = false;
    let fitted = false;
    /** Set once the venue says the event has no numeric forecast: later refreshes ask for prices only. */
    let categorical = false;
    const load = async () => {
      if (categorical) {
        await drawOutcomes();
        return;
      }
      let history: ForecastPoint[];
      try {
        history = await (takePrefetched(seriesTicker, eventTicker, range.seconds, period) ??
          requestForecast(seriesTicker, eventTicker, range.seconds, period));
      } catch (error) {
        if (stopped) return;
        if (error instanceof ApiError && error.code === "upstream_rejected") {
          categorical = true;
          await drawOutcomes();
          return;
        }
        setStatus(`Forecast unavailable: ${(error as Error).message}`);
        return;
      }
      const target = seriesRef.current;
      if (stopped || !target) return;
      const series = PERCENTILES.map(() => [] as { time: UTCTimestamp; value: number }[]);
      for (const point of history) {
        const values = PERCENTILES.map(
          (p) => point.percentile_points.find((q) => q.percentile === p)?.numerical_forecast,
        );
        if (values.some((value) => value === null || value === undefined)) continue;
        values.forEach((value, index) => {
          series[index]?.push({ time: point.end_period_ts as UTCTimestamp, value: value as number });
        });
        const formatted =
          point.percentile_points.find((q) => q.percentile === 5000)?.formatted_forecast ?? "";
        target.unit.value = formatted.replace(/^[-+\d.,\s]+/, "");
      }
      const [p10, p25, p50, p75, p90] = series;
      target.bands[0]?.setData(p90 ?? []);
      target.bands[1]?.setData(p75 ?? []);
      target.bands[2]?.setData(p25 ?? []);
      target.bands[3]?.setData(p10 ?? []);
      target.median.setData(p50 ?? []);
      // The whole range in view when it is first drawn; later refreshes keep the user's zoom.
      if (!fitted && p50?.length) {
        target.fit();
        fitted = true;
      }
      const last = history.at(-1)?.percentile_points;
      const label = (p: number) => last?.find((q) => q.percentile === p)?.formatted_forecast ?? "—";
      setLatest(
        last
          ? `median ${label(5000)} · 25–75: ${label(2500)}–${label(7500)} · 10–90: ${label(1000)}–${label(9000)}`
          : "",
      );
      setStatus(p50?.length ? "" : "No forecast points in this range.");
      if (p50?.length) requestAnimationFrame(() => mark("fanDrawn"));
    };
    /** The leading outcomes' chances over the range, one line each: the chart of a categorical event. */
    const drawOutcomes = async () => {
      const target = seriesRef.current;
      const leading = outcomesRef.current.slice(0, OUTCOME_LINES);
      if (!target) return;
      if (leading.length === 0) {
        setStatus("This event has no numeric forecast and no outcomes to chart.");
        return;
      }
      const endTs = Math.floor(Date.now() / 1000);
      // Candlesticks come by the minute at the finest.
      const minutes = Math.max(1, period);
      let body: { market_tickers: string[]; market_candlesticks: Candle[][] };
      try {
        body = await getJson(`/api/v1/event/${encodeURIComponent(eventTicker)}/candlesticks`, {
          startTs: endTs - Math.min(range.seconds, minutes * 60 * MAX_POINTS),
          endTs,
          periodInterval: minutes === 1 || minutes === 60 || minutes === 1440 ? minutes : 60,
        });
      } catch (error) {
        if (!stopped) setStatus(`Price history unavailable: ${(error as Error).message}`);
        return;
      }
      if (stopped) return;
      const lines = target.lines();
      const palette = lineColors();
      target.axis(true);
      for (const band of target.bands) band.setData([]);
      target.median.setData([]);
      let points = 0;
      lines.forEach((line, index) => {
        const outcome = leading[index];
        const at = outcome ? body.market_tickers.indexOf(outcome.ticker) : -1;
        const data = (at < 0 ? [] : (body.market_candlesticks[at] ?? [])).flatMap((candle) => {
          const value = closeOf(candle);
          return value === null ? [] : [{ time: candle.end_period_ts as UTCTimestamp, value }];
        });
        points += data.length;
        line.setData(data);
      });
      if (!fitted && points > 0) {
        target.fit();
        fitted = true;
      }
      setDrawn(leading.map((outcome, index) => ({ label: outcome.label, color: palette[index] ?? "" })));
      setLatest("");
      setStatus(points > 0 ? "" : "No prices in this range.");
      if (points > 0) requestAnimationFrame(() => mark("pricesDrawn"));
    };
    void load();
    // While the page is open the forecast keeps moving: refresh once a period, at least every 15 s.
    const timer = setInterval(load, Math.min(periodSeconds(period) * 1000, 15_000));
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [seriesTicker, eventTicker, range, period]);

  return (
    <section class="card" aria-labelledby="forecast-title">
      <div class="card-head">
        <h2 id="forecast-title">{drawn ? "Chances" : "Forecast"}</h2>
        <div class="pickers">
          <fieldset class="segmented" aria-label="Range">
            {RANGES.map((option) => (
              <button
                type="button"
                key={option.label}
                aria-pressed={option === range}
                onClick={() => {
                  setRange(option);
                  setPeriod(option.period);
                }}
              >
                {option.label}
              </button>
            ))}
          </fieldset>
          <label>
            <span class="sr-only">Period</span>
            <select
              aria-label="Period"
              value={String(period)}
              onChange={(event) => setPeriod(Number((event.target as HTMLSelectElement).value))}
            >
              {PERIODS.map((option) => (
                <option key={option.minutes} value={String(option.minutes)}>
                  every {option.label}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <p class="muted small" data-testid="forecast-latest">
        {latest}
      </p>
      <div
        class="chart"
        ref={holder}
        data-testid="fan-chart"
        data-mode={drawn ? "outcomes" : "forecast"}
        role="img"
        aria-label={drawn ? "Chances of the leading outcomes over time" : "Forecast fan chart"}
      />
      {status && <p class="muted">{status}</p>}
      {drawn ? (
        <p class="legend small" data-testid="outcome-legend">
          {drawn.map((outcome) => (
            <span key={outcome.label} class="legend-item">
              <span class="swatch line" style={{ background: outcome.color }} /> {outcome.label}
            </span>
          ))}
        </p>
      ) : (
        <p class="legend small">
          <span class="swatch outer" /> 10–90th <span class="swatch inner" /> 25–75th{" "}
          <span class="swatch line" /> median
        </p>
      )}
    </section>
  );
}
