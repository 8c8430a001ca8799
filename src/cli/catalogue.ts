/** `oddsgate import` and `oddsgate sync`: filling the catalogue from a file or from the upstream exchange. */
import { type Command, Option } from "commander";
import type { Config } from "../config.js";
import type { LifecycleRefusal } from "../markets/store.js";
import {
  type Cli,
  CliError,
  configFrom,
  hostOf,
  printJson,
  readJsonFile,
  withSettings,
  withStorage,
} from "./support.js";

/** Rows above which an import shows a progress bar. */
const PROGRESS_THRESHOLD_ROWS = 5_000;

/** Adds `import` (a catalogue file) and `sync` (the upstream's whole catalogue). */
export function registerCatalogueCommands(program: Command, cli: Cli): void {
  withSettings(
    program
      .command("import")
      .argument("<file>", "a catalogue in our JSON format or Kalshi trade-api v2 JSON ({events:[...]})")
      .addOption(
        new Option("--tokenize <which>", "which Kalshi markets get outcome tokens")
          .choices(["none", "tradable", "all"])
          .default("none"),
      )
      .option("--json", "print the counts (and any refused market) as JSON")
      .description("load series, events and markets into storage in one transaction (idempotent)"),
    ["DATA_DIR", "DATABASE_URL", "VENUE_SEED"],
  ).action(async (file: string, options) => {
    const config = configFrom(cli, options);
    const { parseCatalogueInput } = await import("../markets/import/parse.js");
    const catalogue = parseCatalogueInput(readJsonFile(file), { tokenize: options.tokenize });
    const [{ default: cliProgress }, { resolveVenueSeed }, { saveCatalogue }] = await Promise.all([
      import("cli-progress"),
      import("../markets/accounts.js"),
      import("../markets/store.js"),
    ]);
    await withStorage(config, async (storage) => {
      const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
      const rows =
        catalogue.series.length +
        catalogue.events.length +
        catalogue.events.reduce((n, e) => n + e.markets.length, 0);
      const bar =
        rows >= PROGRESS_THRESHOLD_ROWS
          ? new cliProgress.SingleBar({
              format: "importing [{bar}] {percentage}% {value}/{total} rows",
              stream: cli.io.stderr,
            })
          : undefined;
      bar?.start(rows, 0);
      // Stopped on failure too: its redraw timer would outlive the command in process.
      const counts = await saveCatalogue(storage.db, venueSeed, catalogue, (done) =>
        bar?.update(done),
      ).finally(() => bar?.stop());
      if (options.json) {
        printJson(cli, { storage: storage.location, ...counts });
        return;
      }
      cli.console.log(
        `imported ${counts.series} series, ${counts.events} events, ${counts.markets} markets into ${storage.location}`,
      );
      reportRefusals(cli, counts.refused, "the file");
    });
  });

  withSettings(
    program
      .command("sync")
      .option("--json", "print the counts (and any refused market) as JSON")
      .description(
        "read every series, event and market from the venue's upstream (UPSTREAM_URL, else the running venue's simulator on SIMULATOR_PORT) and store what changed; a determined or finalized market is never turned back",
      ),
    [
      "DATA_DIR",
      "DATABASE_URL",
      "VENUE_SEED",
      "HOST",
      "UPSTREAM_URL",
      "SIMULATOR_PORT",
      "UPSTREAM_TIMEOUT_MS",
      "UPSTREAM_KEY_ID",
      "UPSTREAM_PRIVATE_KEY_FILE",
      "SYNC_TOKENIZE",
    ],
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const upstreamUrl = await venueUpstream(config);
    const [{ default: cliProgress }, { connectUpstream }, { resolveVenueSeed }, { syncFromUpstream }] =
      await Promise.all([
        import("cli-progress"),
        import("../app/connect-upstream.js"),
        import("../markets/accounts.js"),
        import("../markets/sync.js"),
      ]);
    await withStorage(config, async (storage) => {
      const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
      // Never a simulator of its own: the URL is the venue's upstream, which connectUpstream only dials.
      const upstream = await connectUpstream({ ...config, UPSTREAM_URL: upstreamUrl }, () => {
        throw new Error("unreachable: the sync names its upstream");
      });
      const bar = cli.io.stderr.isTTY
        ? new cliProgress.SingleBar({
            format: "syncing from the upstream: {value} events, {markets} markets read ({phase})",
            stream: cli.io.stderr,
          })
        : undefined;
      bar?.start(0, 0, { markets: 0, phase: "reading" });
      try {
        const result = await syncFromUpstream({
          db: storage.db,
          venueSeed,
          upstream: upstream.client,
          tokenize: config.SYNC_TOKENIZE,
          onProgress: (p) => bar?.update(p.events, { markets: p.markets, phase: p.phase }),
        });
        bar?.stop();
        if (options.json) {
          printJson(cli, { ...result, from: upstreamUrl, storage: storage.location });
          return;
        }
        const { upstream: read, changed } = result;
        cli.console.log(
          `synced from ${upstreamUrl}: ${read.series} series, ${read.events} events, ${read.markets} markets read; ` +
            `${changed.series} series, ${changed.events} events, ${changed.markets} markets new or changed in ${storage.location}`,
        );
        reportRefusals(cli, result.refused, "the upstream");
      } finally {
        bar?.stop();
        await upstream.close();
      }
    });
  });
}

/** Tells the person which markets were kept settled against what the source said (on stderr). */
function reportRefusals(cli: Cli, refused: readonly LifecycleRefusal[], source: string): void {
  if (refused.length === 0) return;
  const shown = refused
    .slice(0, 10)
    .map((r) => `${r.ticker} (${r.stored}, ${source} says ${r.offered})`)
    .join(", ");
  const more = refused.length > 10 ? ` and ${refused.length - 10} more` : "";
  cli.console.error(
    `oddsgate: kept ${refused.length} settled market${refused.length === 1 ? "" : "s"} as stored, refusing to turn ${refused.length === 1 ? "it" : "them"} back: ${shown}${more}`,
  );
}

/**
 * The upstream of the venue this data dir belongs to: UPSTREAM_URL, as the venue reads it, else the
 * simulator a running venue serves on SIMULATOR_PORT. A sync never starts a simulator of its own: its
 * demo would know nothing of what the venue's upstream has settled since, and would turn it back.
 */
async function venueUpstream(config: Config): Promise<string> {
  if (config.UPSTREAM_URL) return config.UPSTREAM_URL;
  const url = `http://${hostOf(config)}:${config.SIMULATOR_PORT}/trade-api/v2`;
  const refused = (why: string) =>
    new CliError(
      `no upstream to sync from: UPSTREAM_URL is not set, and ${why}. The venue syncs its embedded simulator itself (every SYNC_INTERVAL); ` +
        "start it with `npm start`, set SIMULATOR_PORT (--simulator-port) to its simulator's port, or set UPSTREAM_URL",
    );
  if (config.SIMULATOR_PORT === 0) throw refused("SIMULATOR_PORT is 0 (a port only the venue knows)");
  try {
    const answer = await fetch(`${url}/exchange/status`, {
      signal: AbortSignal.timeout(config.UPSTREAM_TIMEOUT_MS),
    });
    await answer.body?.cancel();
  } catch {
    throw refused(`no running venue's simulator answers at ${url}`);
  }
  return url;
}
