#!/usr/bin/env node
/** The `oddsgate` command: serve the venue, and operate on its state. */
import fs from "node:fs";
import cliProgress from "cli-progress";
import { Command, Option } from "commander";
import {
  type Config,
  ConfigError,
  type ConfigInput,
  ConfigSchema,
  loadConfig,
  SETTING_NAMES,
} from "./config.js";
import { resolveVenueSeed } from "./markets/accounts.js";
import { ImportFormatError, parseCatalogueInput } from "./markets/import/parse.js";
import { saveCatalogue } from "./markets/store.js";
import { startServer } from "./server.js";
import { openStorage } from "./storage/database.js";

/** Rows above which an import shows a progress bar. */
const PROGRESS_THRESHOLD_ROWS = 5_000;

/** A failure the user can fix, reported as its message alone. */
class CliError extends Error {}

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

const flagOf = (name: string) => `--${name.toLowerCase().replaceAll("_", "-")}`;
const optionKey = (name: string) =>
  name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Adds one `--kebab-case <value>` flag per setting (or only the listed ones). */
function withSettings(command: Command, names: readonly (keyof Config)[] = SETTING_NAMES): Command {
  for (const name of names) {
    const description = ConfigSchema.shape[name].description ?? `overrides ${name}`;
    command.addOption(new Option(`${flagOf(name)} <value>`, description));
  }
  return command;
}

function configFrom(options: Record<string, string | undefined>): Config {
  const overrides: ConfigInput = {};
  for (const name of SETTING_NAMES) overrides[name] = options[optionKey(name)];
  return loadConfig(process.env, overrides);
}

const program = new Command()
  .name("oddsgate")
  .description("Self-hostable prediction-market data and trading venue")
  .showHelpAfterError();

withSettings(
  program.command("serve").description("start the venue (HTTP API, demo catalogue on a fresh database)"),
).action(async (options) => {
  const server = await startServer(configFrom(options));
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
});

withSettings(
  program
    .command("import")
    .argument("<file>", "a catalogue in our JSON format or Kalshi trade-api v2 JSON ({events:[...]})")
    .addOption(
      new Option("--tokenize <which>", "which Kalshi markets get outcome tokens")
        .choices(["none", "tradable", "all"])
        .default("none"),
    )
    .description("load series, events and markets into storage in one transaction (idempotent)"),
  ["DATA_DIR", "DATABASE_URL", "VENUE_SEED"],
).action(async (file: string, options) => {
  const config = configFrom(options);
  const catalogue = parseCatalogueInput(readJsonFile(file), {
    tokenize: options.tokenize,
  });
  const storage = await openStorage(config);
  try {
    const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
    const rows =
      catalogue.series.length +
      catalogue.events.length +
      catalogue.events.reduce((n, e) => n + e.markets.length, 0);
    const bar =
      rows >= PROGRESS_THRESHOLD_ROWS
        ? new cliProgress.SingleBar({ format: "importing [{bar}] {percentage}% {value}/{total} rows" })
        : undefined;
    bar?.start(rows, 0);
    const counts = await saveCatalogue(storage.db, venueSeed, catalogue, (done) => bar?.update(done));
    bar?.stop();
    console.log(
      `imported ${counts.series} series, ${counts.events} events, ${counts.markets} markets into ${storage.location}`,
    );
  } finally {
    await storage.close();
  }
});

program.parseAsync().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof ImportFormatError || error instanceof CliError) {
    console.error(`oddsgate: ${error.message}`);
  } else {
    console.error("oddsgate:", error);
  }
  process.exit(1);
});
