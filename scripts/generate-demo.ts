/**
 * Writes the seeded demo catalogue as JSON in our catalogue format, ready for `oddsgate import`.
 *
 *   tsx scripts/generate-demo.ts [--anchor YYYY-MM-DD] [--scale N] [--seed TEXT] [--out FILE]
 *   tsx scripts/generate-demo.ts --markets 250000 [--events 50000] ...   (a stress catalogue of that size)
 *
 * The anchor defaults to today (UTC); the same options always give the same bytes.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_DEMO_SEED, generateDemoCatalogue, generateStressCatalogue } from "../src/demo/generate.js";

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
      scale: { type: "string" },
      markets: { type: "string" },
      events: { type: "string" },
      seed: { type: "string", default: DEFAULT_DEMO_SEED },
      out: { type: "string", default: "data/demo/catalogue.json" },
    },
  });
  const anchor =
    values.anchor === undefined
      ? Math.floor(Date.now() / 1000 / DAY_SECONDS) * DAY_SECONDS
      : parseAnchor(values.anchor);
  const stress = values.markets !== undefined || values.events !== undefined;
  if (stress && values.scale !== undefined)
    throw new Error("give --scale, or --markets (and --events) for a stress catalogue, not both");
  if (stress && values.markets === undefined) throw new Error("--events needs --markets");
  const scale = Number(values.scale ?? "1");
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`--scale must be a positive number, got "${values.scale}"`);
  const count = (option: "markets" | "events") => {
    const text = values[option];
    if (text === undefined) return undefined;
    if (!/^[1-9]\d{0,8}$/.test(text))
      throw new Error(`--${option} must be a positive integer, got "${text}"`);
    return Number(text);
  };

  const started = performance.now();
  const markets = count("markets");
  const events = count("events");
  const catalogue =
    markets === undefined
      ? generateDemoCatalogue({ anchor, scale, seed: values.seed })
      : generateStressCatalogue({ anchor, seed: values.seed, markets, ...(events ? { events } : {}) });
  const elapsed = performance.now() - started;
  const json = `${JSON.stringify(catalogue)}\n`;
  fs.mkdirSync(path.dirname(values.out), { recursive: true });
  fs.writeFileSync(values.out, json);

  const all = catalogue.events.flatMap((event) => event.markets);
  const byStatus = new Map<string, number>();
  for (const market of all) byStatus.set(market.status, (byStatus.get(market.status) ?? 0) + 1);
  const anchorDate = new Date(anchor * 1000).toISOString().slice(0, 10);
  console.log(
    `${stress ? "stress" : "demo"} catalogue for ${anchorDate} (${stress ? `${markets} markets asked` : `scale ${scale}`}, seed "${values.seed}") in ${elapsed.toFixed(0)} ms`,
  );
  console.log(
    `  ${catalogue.series.length} series, ${catalogue.events.length} events, ${all.length} markets`,
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
