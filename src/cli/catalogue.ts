/** `oddsgate import` and `oddsgate sync`: filling the catalogue from a file or from the upstream exchange. */
import { type Command, Option } from "commander";
import { configFrom, readJsonFile, withSettings, withStorage } from "./support.js";

/** Rows above which an import shows a progress bar. */
const PROGRESS_THRESHOLD_ROWS = 5_000;

/** Adds `import` (a catalogue file) and `sync` (the upstream's whole catalogue). */
export function registerCatalogueCommands(program: Command): void {
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
          ? new cliProgress.SingleBar({ format: "importing [{bar}] {percentage}% {value}/{total} rows" })
          : undefined;
      bar?.start(rows, 0);
      const counts = await saveCatalogue(storage.db, venueSeed, catalogue, (done) => bar?.update(done));
      bar?.stop();
      console.log(
        `imported ${counts.series} series, ${counts.events} events, ${counts.markets} markets into ${storage.location}`,
      );
    });
  });

  withSettings(
    program
      .command("sync")
      .description(
        "read every series, event and market from the upstream exchange (UPSTREAM_URL, else the demo simulator) and store what changed",
      ),
    [
      "DATA_DIR",
      "DATABASE_URL",
      "VENUE_SEED",
      "HOST",
      "UPSTREAM_URL",
      "UPSTREAM_TIMEOUT_MS",
      "UPSTREAM_KEY_ID",
      "UPSTREAM_PRIVATE_KEY_FILE",
      "SYNC_TOKENIZE",
    ],
  ).action(async (options) => {
    // Without an upstream, sync from a simulator of the demo catalogue started for this run only.
    const config = { ...configFrom(options), SIMULATOR_PORT: 0 };
    const [
      { default: cliProgress },
      { connectUpstream },
      { resolveVenueSeed },
      { generateDemoCatalogue },
      { resolveDemoAnchor },
      { syncFromUpstream },
    ] = await Promise.all([
      import("cli-progress"),
      import("../app/connect-upstream.js"),
      import("../markets/accounts.js"),
      import("../markets/demo/generate.js"),
      import("../markets/store.js"),
      import("../markets/sync.js"),
    ]);
    await withStorage(config, async (storage) => {
      const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
      const anchor = await resolveDemoAnchor(storage.db);
      const upstream = await connectUpstream(config, () => generateDemoCatalogue({ anchor }));
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar({
            format: "syncing from the upstream: {value} events, {markets} markets read ({phase})",
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
        const { upstream: read, changed } = result;
        console.log(
          `synced from ${upstream.simulator ? "the demo simulator" : upstream.url}: ${read.series} series, ${read.events} events, ${read.markets} markets read; ` +
            `${changed.series} series, ${changed.events} events, ${changed.markets} markets new or changed in ${storage.location}`,
        );
      } finally {
        bar?.stop();
        await upstream.close();
      }
    });
  });
}
