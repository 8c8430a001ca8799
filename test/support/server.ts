/** Starts the real server on a free loopback port over fresh storage, for end-to-end tests. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { type RunningServer, type StartOptions, startServer } from "../../src/app/start-server.js";
import { MarketsClient } from "../../src/client/markets.js";
import { type Config, type ConfigInput, loadConfig, sqlitePath } from "../../src/config.js";
import type { CatalogueFile } from "../../src/contract/markets.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import type { Catalog } from "../../src/markets/catalog.js";
import { resolveDemoAnchor, saveCatalogue } from "../../src/markets/store.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { BACKENDS, type Backend } from "./backends.js";

/** 2026-11-22T00:00:00Z: the fixed "today" of the demo catalogue the tests read. */
export const TEST_ANCHOR = 1_795_305_600;

let demo: CatalogueFile | undefined;
/** The demo catalogue at the fixed test anchor (generated once per test file). */
export async function testCatalogue(): Promise<CatalogueFile> {
  // Imported lazily: tests that bring their own catalogue need not pay for generating this one.
  const { generateDemoCatalogue } = await import("../../src/demo/generate.js");
  demo ??= generateDemoCatalogue({ anchor: TEST_ANCHOR });
  return demo;
}

export interface TestServer {
  server: RunningServer;
  client: MarketsClient;
  url: string;
  settings: ConfigInput;
  stop(): Promise<void>;
}

export interface TestServerOptions extends StartOptions {
  backend?: Backend;
  /** Stored before start; defaults to the demo catalogue at TEST_ANCHOR. */
  catalogue?: CatalogueFile;
  settings?: ConfigInput;
  /** Run on the storage after the catalogue is stored, before the server starts. */
  beforeStart?: (db: Storage["db"]) => Promise<void>;
}

/** Migrates storage and stores the catalogue (at the test anchor) under `config`. */
async function prepareStorage(config: Config, catalogue: CatalogueFile): Promise<void> {
  const storage = await openStorage(config);
  try {
    const seed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
    // The simulator then serves the same demo catalogue as the one stored here.
    await resolveDemoAnchor(storage.db, TEST_ANCHOR * 1000);
    await saveCatalogue(storage.db, seed, catalogue);
  } finally {
    await storage.close();
  }
}

// Prepared SQLite files with the demo catalogue stored, one per venue seed, made once per worker:
// storing ~4,900 markets was most of what booting a test venue cost. Building its catalog was a
// fifth of what was left: the first venue's, as loaded, seeds the next ones on copies of that file.
const demoTemplates = new Map<string, Promise<string>>();
const templateCatalogs = new Map<string, Catalog>();

/** A SQLite file of the demo catalogue stored under `venueSeed` (or a seed of the worker's). */
function demoTemplate(venueSeed: string | undefined): Promise<string> {
  const key = venueSeed ?? "";
  let template = demoTemplates.get(key);
  if (!template) {
    template = (async () => {
      // Under the run's temporary directory, which the global setup removes at the end of the run.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-template-"));
      const config = loadConfig({}, { DATA_DIR: dir, ...(venueSeed ? { VENUE_SEED: venueSeed } : {}) });
      await prepareStorage(config, await testCatalogue());
      return sqlitePath(config);
    })();
    demoTemplates.set(key, template);
  }
  return template;
}

/** Starts a server on port 0 (SQLite unless a backend is given) with the test catalogue loaded. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const backend = options.backend ?? (BACKENDS[0] as Backend);
  const storageSettings = await backend.create();
  const settings: ConfigInput = {
    PORT: "0",
    LOG_LEVEL: "silent",
    DEMO_CATALOGUE: "false",
    // Unlimited unless a test is about limits: suites make far more than 60 requests a minute.
    RATE_LIMIT_ANONYMOUS: "0",
    // The embedded simulator on a free port; syncs only when a test asks for them.
    SIMULATOR_PORT: "0",
    // The sandbox chain's JSON-RPC and PubSub on free ports.
    RPC_PORT: "0",
    SYNC_INTERVAL: "0",
    // Prediction-market fills against the venue's own book, unless a test is about executing them upstream.
    UPSTREAM_TRADING: "false",
    // Not archived unless a test is about the archive.
    ARCHIVE: "false",
    ...storageSettings.settings,
    ...options.settings,
  };
  const config = loadConfig({}, settings);
  const fromTemplate = config.DATABASE_URL === undefined && options.catalogue === undefined;
  if (fromTemplate) {
    fs.copyFileSync(await demoTemplate(config.VENUE_SEED), sqlitePath(config));
  } else {
    await prepareStorage(config, options.catalogue ?? (await testCatalogue()));
  }
  if (options.beforeStart) {
    const storage = await openStorage(config);
    try {
      await options.beforeStart(storage.db);
    } finally {
      await storage.close();
    }
  }
  // A copy of the template, untouched before start: the catalog an earlier venue built from it seeds this one's.
  const seedKey = fromTemplate && !options.beforeStart ? (config.VENUE_SEED ?? "") : undefined;
  const catalogSeed = seedKey === undefined ? undefined : templateCatalogs.get(seedKey);
  const server = await startServer(config, {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.beforeStartupWork ? { beforeStartupWork: options.beforeStartupWork } : {}),
    ...(catalogSeed ? { catalogSeed } : {}),
  });
  const loaded = server.catalog.current;
  if (seedKey !== undefined && !catalogSeed && loaded) templateCatalogs.set(seedKey, loaded);
  return {
    server,
    client: new MarketsClient({ baseUrl: server.url }),
    url: server.url,
    settings,
    async stop() {
      await server.close();
      await storageSettings.cleanup();
    },
  };
}
