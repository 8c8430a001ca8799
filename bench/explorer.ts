/**
 * The explorer's first paint that matters: from navigation to the event page's first fan chart drawn,
 * in Debian's Chromium, each run in a fresh browser context (nothing cached), against a venue started
 * with its embedded defaults. Prints where the time went (the main script, the forecast answer) and
 * the first page's gzipped size, beside the `/health-check` baseline of the same server.
 *
 *   npx tsx bench/explorer.ts            (options: --runs 5)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { launchChromium } from "../test/explorer/browser.js";
import { healthCheckRate, percentile, startServer, stopServer } from "./support.js";

const { values: args } = parseArgs({ options: { runs: { type: "string" } } });
const RUNS = Number(args.runs ?? 5);
const BUILD_DIR = join(import.meta.dirname, "..", "dist", "web");

/** What the explorer publishes on its window for tests and benches. */
interface Page {
  __oddsgate?: { marks: { fanDrawn?: number } };
}

interface Timeline {
  fanDrawn: number;
  script: number;
  forecast: number;
}

const server = await startServer();
const browser = await launchChromium();
try {
  const found = (await (
    await fetch(`${server.url}/api/v1/events?seriesTickers=KXHIGHNY&status=active&sort=volume&limit=1`)
  ).json()) as { events: { ticker: string }[] };
  const eventTicker = found.events[0]?.ticker;
  if (!eventTicker) throw new Error("the demo catalogue has no active KXHIGHNY event");
  const health = await healthCheckRate(server.url, 3);
  const runs: Timeline[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const context = await browser.context({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/#/event/${eventTicker}`);
      await page.waitForFunction(
        () => (globalThis as unknown as Page).__oddsgate?.marks.fanDrawn !== undefined,
      );
      // No named function inside: tsx would wrap it in a helper the page does not have.
      const [fanDrawn, resources] = await page.evaluate(
        () =>
          [
            (globalThis as unknown as Page).__oddsgate?.marks.fanDrawn ?? Number.NaN,
            (
              performance.getEntriesByType("resource") as unknown as { name: string; responseEnd: number }[]
            ).map((entry) => [entry.name, entry.responseEnd]),
          ] as [number, [string, number][]],
      );
      const ended = (pattern: RegExp) => resources.find(([name]) => pattern.test(name))?.[1] ?? Number.NaN;
      runs.push({
        fanDrawn,
        script: ended(/\/assets\/index-[^/]+\.js$/),
        forecast: ended(/forecast_percentile_history/),
      });
    } finally {
      await context.close();
    }
  }
  const html = readFileSync(join(BUILD_DIR, "index.html"), "utf8");
  const assets = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((match) => match[1] as string);
  const gzipBytes = [html, ...assets.map((path) => readFileSync(join(BUILD_DIR, path)))]
    .map((body) => gzipSync(body).length)
    .reduce((sum, size) => sum + size, 0);
  const median = (pick: (t: Timeline) => number) => percentile(runs.map(pick), 50).toFixed(0);
  console.log(`explorer, event ${eventTicker}, ${RUNS} cold navigations (baseline: /health-check ${health.toFixed(0)} req/s)
  navigation -> main script loaded      median ${median((t) => t.script)} ms
  navigation -> forecast answered       median ${median((t) => t.forecast)} ms
  navigation -> first fan chart drawn   median ${median((t) => t.fanDrawn)} ms, best ${Math.min(...runs.map((t) => t.fanDrawn)).toFixed(0)} ms, worst ${Math.max(...runs.map((t) => t.fanDrawn)).toFixed(0)} ms (target <= 1000 ms)
  first page (index.html + its script and style), gzipped: ${(gzipBytes / 1000).toFixed(1)} kB (target <= 300 kB)`);
} finally {
  await browser.close();
  await stopServer(server);
}
