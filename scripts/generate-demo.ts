/**
 * Writes the seeded demo catalogue as JSON in our catalogue format, ready for `oddsgate import`.
 *
 *   tsx scripts/generate-demo.ts [--anchor YYYY-MM-DD] [--scale N] [--seed TEXT] [--out FILE]
 *
 * The anchor defaults to today (UTC); the same anchor, scale and seed always give the same bytes.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_DEMO_SEED, generateDemoCatalogue } from "../src/markets/demo/generate.js";

const DAY_SECONDS = 86_400;

/** Unix seconds of a YYYY-MM-DD date's UTC midnight; rejects anything that is not a real date. */
function parseAnchor(text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const millis = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (Number.isNaN(millis) || new Date(millis).toISOString().slice(0, 10) !== text) {
    throw new Error(`--anchor must be a date like 2026-11-22, got "${text}"`);
  }
  return millis / 1000;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      anchor: { type: "string" },
      scale: { type: "string", default: "1" },
      seed: { type: "string", default: DEFAULT_DEMO_SEED },
      out: { type: "string", default: "data/demo/catalogue.json" },
    },
  });
  const anchor =
    values.anchor === undefined
      ? Math.floor(Date.now() / 1000 / DAY_SECONDS) * DAY_SECONDS
      : parseAnchor(values.anchor);
  const scale = Number(values.scale);
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`--scale must be a positive number, got "${values.scale}"`);

  const started = performance.now();
  const catalogue = generateDemoCatalogue({ anchor, scale, seed: values.seed });
  const elapsed = performance.now() - started;
  const json = `${JSON.stringify(catalogue)}\n`;
  fs.mkdirSync(path.dirname(values.out), { recursive: true });
  fs.writeFileSync(values.out, json);

  const markets = catalogue.events.flatMap((event) => event.markets);
  const byStatus = new Map<string, number>();
  for (const market of markets) byStatus.set(market.status, (byStatus.get(market.status) ?? 0) + 1);
  const anchorDate = new Date(anchor * 1000).toISOString().slice(0, 10);
  console.log(
    `demo catalogue for ${anchorDate} (scale ${scale}, seed "${values.seed}") in ${elapsed.toFixed(0)} ms`,
  );
  console.log(
    `  ${catalogue.series.length} series, ${catalogue.events.length} events, ${markets.length} markets`,
  );
  console.log(`  markets by status: ${[...byStatus].map(([status, n]) => `${status} ${n}`).join(", ")}`);
  console.log(`  wrote ${values.out} (${(json.length / 1_048_576).toFixed(1)} MiB)`);
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
