/** A market's candlesticks (yes price in cents) with a period picker, refreshed while open. */
import { CandlestickSeries, type ISeriesApi, type UTCTimestamp } from "lightweight-charts";
import { useEffect, useRef, useState } from "preact/hooks";
import { type Candle, getJson } from "../api";
import { registry, themedChart } from "../charts";
import { centsText, dateTime } from "../format";

const PERIODS = [
  { label: "1m", minutes: 1, span: 6 * 3_600 },
  { label: "1h", minutes: 60, span: 7 * 86_400 },
  { label: "1d", minutes: 1440, span: 90 * 86_400 },
] as const;

/** The candle of a period: its trade prices, else the middle of its yes bid and ask. */
function ohlc(candle: Candle) {
  const p = candle.price;
  if (p.open !== null && p.high !== null && p.low !== null && p.close !== null) {
    return { open: p.open, high: p.high, low: p.low, close: p.close };
  }
  const mid = (key: "open" | "high" | "low" | "close") => {
    const bid = candle.yes_bid[key];
    const ask = candle.yes_ask[key];
    return bid === null || ask === null ? null : (bid + ask) / 2;
  };
  const [open, high, low, close] = [mid("open"), mid("high"), mid("low"), mid("close")];
  if (open === null || high === null || low === null || close === null) return null;
  return { open, high, low, close };
}

/** The candlestick chart of `ticker`. */
export function Candles({ ticker }: { ticker: string }) {
  const holder = useRef<HTMLDivElement>(null);
  const series = useRef<ISeriesApi<"Candlestick"> | undefined>(undefined);
  const fit = useRef<() => void>(() => {});
  const [period, setPeriod] = useState<(typeof PERIODS)[number]>(PERIODS[1]);
  const [status, setStatus] = useState("");

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const { chart, dispose } = themedChart("candles", element, (colors) =>
      series.current?.applyOptions({
        upColor: colors.up,
        downColor: colors.down,
        wickUpColor: colors.up,
        wickDownColor: colors.down,
        borderVisible: false,
      }),
    );
    // The crosshair's time names its zone, as every time on the page does.
    chart.applyOptions({ localization: { timeFormatter: dateTime } });
    const style = getComputedStyle(document.documentElement);
    const up = style.getPropertyValue("--up").trim();
    const down = style.getPropertyValue("--down").trim();
    series.current = chart.addSeries(CandlestickSeries, {
      upColor: up,
      downColor: down,
      wickUpColor: up,
      wickDownColor: down,
      borderVisible: false,
      priceFormat: { type: "custom", formatter: centsText, minMove: 0.1 },
    });
    fit.current = () => chart.timeScale().fitContent();
    registry().charts.candles = { chart, series: series.current };
    return dispose;
  }, []);

  useEffect(() => {
    let stopped = false;
    let fitted = false;
    const load = async () => {
      const endTs = Math.floor(Date.now() / 1000);
      try {
        const body = await getJson<{ candlesticks: Candle[] }>(
          `/api/v1/market/${encodeURIComponent(ticker)}/candlesticks`,
          { startTs: endTs - period.span, endTs, periodInterval: period.minutes },
        );
        if (stopped) return;
        const data = body.candlesticks.flatMap((candle) => {
          const values = ohlc(candle);
          return values ? [{ time: candle.end_period_ts as UTCTimestamp, ...values }] : [];
        });
        series.current?.setData(data);
        if (!fitted && data.length) {
          fit.current();
          fitted = true;
        }
        setStatus(data.length ? "" : "No candles in this range.");
      } catch (error) {
        if (!stopped) setStatus(`Candlesticks unavailable: ${(error as Error).message}`);
      }
    };
    void load();
    const timer = setInterval(load, Math.min(period.minutes * 60_000, 30_000));
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [ticker, period]);

  return (
    <section class="card" aria-labelledby="candles-title">
      <div class="card-head">
        <h2 id="candles-title">Price</h2>
        <fieldset class="segmented" aria-label="Candle period">
          {PERIODS.map((option) => (
            <button
              type="button"
              key={option.label}
              aria-pressed={option === period}
              onClick={() => setPeriod(option)}
            >
              {option.label}
            </button>
          ))}
        </fieldset>
      </div>
      <div class="chart" ref={holder} role="img" aria-label="Candlestick chart of the yes price" />
      {status && <p class="muted">{status}</p>}
    </section>
  );
}
