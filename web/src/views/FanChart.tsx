/**
 * An event's forecast percentile history as a fan chart: the 10–90 and 25–75 bands and the median
 * over time, in the event's own unit (from the formatted forecast), refreshed while the page is open.
 * lightweight-charts has no band series, so each band is drawn as stacked areas: the 90th percentile
 * filled in the outer colour, the 75th in the inner, the 25th in the outer again, the 10th in the
 * background colour, then the median line on top.
 */
import { AreaSeries, type ISeriesApi, LineSeries, type UTCTimestamp } from "lightweight-charts";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, type ForecastPoint, getJson } from "../api";
import { mark, registry, themedChart } from "../charts";
import { chartColors } from "../theme";

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
}

/** The fan chart of one event, with range and period pickers. */
export function FanChart({ seriesTicker, eventTicker }: Props) {
  const holder = useRef<HTMLDivElement>(null);
  const [range, setRange] = useState<(typeof RANGES)[number]>(DEFAULT_RANGE);
  const [period, setPeriod] = useState<number>(DEFAULT_RANGE.period);
  const [status, setStatus] = useState<string>("loading forecast…");
  const [latest, setLatest] = useState<string>("");
  const seriesRef = useRef<
    { bands: Band[]; median: ISeriesApi<"Line">; unit: { value: string }; fit: () => void } | undefined
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
    const { chart, dispose } = themedChart("fan", element, (colors) => {
      colorsOf(colors).forEach((color, index) => {
        bands[index]?.applyOptions({ topColor: color, bottomColor: color, lineColor: color });
      });
      median?.applyOptions({ color: colors.accent });
    });
    chart.applyOptions({
      localization: { priceFormatter: (price: number) => `${price.toFixed(1)}${unit.value}` },
    });
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
    seriesRef.current = { bands, median, unit, fit: () => chart.timeScale().fitContent() };
    registry().charts.fan = { chart, median, bands };
    return dispose;
  }, []);

  useEffect(() => {
    let stopped = false;
    let fitted = false;
    const load = async () => {
      let history: ForecastPoint[];
      try {
        history = await (takePrefetched(seriesTicker, eventTicker, range.seconds, period) ??
          requestForecast(seriesTicker, eventTicker, range.seconds, period));
      } catch (error) {
        if (!stopped) {
          setStatus(
            error instanceof ApiError && error.code === "upstream_rejected"
              ? "This event has no numeric forecast."
              : `Forecast unavailable: ${(error as Error).message}`,
          );
        }
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
        <h2 id="forecast-title">Forecast</h2>
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
      <div class="chart" ref={holder} data-testid="fan-chart" role="img" aria-label="Forecast fan chart" />
      {status && <p class="muted">{status}</p>}
      <p class="legend small">
        <span class="swatch outer" /> 10–90th <span class="swatch inner" /> 25–75th{" "}
        <span class="swatch line" /> median
      </p>
    </section>
  );
}
