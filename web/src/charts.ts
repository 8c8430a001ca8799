/**
 * Charts from lightweight-charts, themed from the page's CSS variables and re-themed when the theme
 * changes. Each chart is also published on `window.__oddsgate.charts` under its name, so tests (and a
 * curious developer in the console) can read back what it holds through the chart's own API.
 */
import {
  type ChartOptions,
  ColorType,
  createChart,
  type DeepPartial,
  type IChartApi,
} from "lightweight-charts";
import { chartColors, theme } from "./theme";

declare global {
  interface Window {
    __oddsgate?: { charts: Record<string, unknown>; marks: Record<string, number> };
  }
}

/** The registry behind `window.__oddsgate`. */
export function registry() {
  window.__oddsgate ??= { charts: {}, marks: {} };
  return window.__oddsgate;
}

/** Records the moment (ms since navigation started) something first happened, once. */
export function mark(name: string): void {
  const marks = registry().marks;
  marks[name] ??= performance.now();
}

function themed(): DeepPartial<ChartOptions> {
  const colors = chartColors();
  return {
    layout: {
      background: { type: ColorType.Solid, color: colors.background },
      textColor: colors.text,
      attributionLogo: false,
    },
    grid: { vertLines: { color: colors.grid }, horzLines: { color: colors.grid } },
    rightPriceScale: { borderColor: colors.grid },
    timeScale: { borderColor: colors.grid, timeVisible: true, secondsVisible: false },
  };
}

/** A chart in `element` that follows the page's theme; `onTheme` re-colours the series. */
export function themedChart(
  name: string,
  element: HTMLElement,
  onTheme: (colors: ReturnType<typeof chartColors>) => void,
): { chart: IChartApi; dispose: () => void } {
  const chart = createChart(element, { autoSize: true, ...themed() });
  const stop = theme.subscribe(() => {
    // After the attribute changed, so the CSS variables are the new theme's.
    requestAnimationFrame(() => {
      chart.applyOptions(themed());
      onTheme(chartColors());
    });
  });
  return {
    chart,
    dispose: () => {
      stop();
      delete registry().charts[name];
      chart.remove();
    },
  };
}
