/** Starts a whole venue: storage, the catalog (seeded with the demo on a fresh database), and HTTP. */
import type { FastifyServerOptions } from "fastify";
import type { Config } from "./config.js";
import { buildApp } from "./http/app.js";
import type { AccessControl } from "./http/auth.js";
import { MemoryRateStore, type RateStore, RedisRateStore } from "./http/rate-limit.js";
import type { ZodApp } from "./http/types.js";
import { KeyRing } from "./keys/key-ring.js";
import { resolveVenueSeed } from "./markets/accounts.js";
import { CatalogHolder } from "./markets/catalog-holder.js";
import { isCatalogueEmpty, saveCatalogue } from "./markets/store.js";
import { openStorage, type Storage } from "./storage/database.js";

/** How often an instance checks storage for a catalogue another process changed. */
export const CATALOG_POLL_MS = 2_000;

export interface RunningServer {
  readonly app: ZodApp;
  readonly storage: Storage;
  readonly catalog: CatalogHolder;
  /** Base URL of the prediction-market API listener, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: FastifyServerOptions["loggerInstance"];
}

/** Opens storage, starts listening, then loads the catalog (health-check answers 503 until then). */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const storage = await openStorage(config);
  const catalog = new CatalogHolder();
  let app: ZodApp | undefined;
  let poll: NodeJS.Timeout | undefined;
  let keys: KeyRing | undefined;
  let rateStore: RateStore | undefined;
  const close = async () => {
    clearInterval(poll);
    await app?.close();
    await keys?.stop();
    await rateStore?.close();
    await storage.close();
  };
  try {
    const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
    keys = new KeyRing(storage.db);
    rateStore = config.REDIS_URL
      ? await RedisRateStore.connect(config.REDIS_URL, config.REDIS_PREFIX)
      : new MemoryRateStore();
    const access: AccessControl = {
      mode: config.MODE,
      keys,
      rateStore,
      limits: {
        anonymous: config.RATE_LIMIT_ANONYMOUS,
        standard: config.RATE_LIMIT_STANDARD,
        pro: config.RATE_LIMIT_PRO,
      },
    };
    app = await buildApp({ config, catalog, access, ...(options.logger ? { logger: options.logger } : {}) });
    // A failing refresh means revocations stop arriving: it must be heard.
    await keys.start(app.log);
    await app.listen({ host: config.HOST, port: config.MARKETS_PORT ?? config.PORT });
    const log = app.log;
    log.info(
      { storage: storage.location, mode: config.MODE, sharedLimits: Boolean(config.REDIS_URL) },
      "storage open",
    );

    if (config.DEMO_CATALOGUE && (await isCatalogueEmpty(storage.db))) {
      const { generateDemoCatalogue } = await import("./markets/demo/generate.js");
      const anchor = Math.floor(Date.now() / 86_400_000) * 86_400;
      const counts = await saveCatalogue(storage.db, venueSeed, generateDemoCatalogue({ anchor }));
      log.info(counts, "loaded the demo catalogue into the empty database");
    }
    const loaded = await catalog.load(storage.db);
    log.info({ events: loaded.events.length, markets: loaded.markets.length }, "catalog ready");

    const db = storage.db;
    poll = setInterval(() => {
      catalog.refreshIfChanged(db).then(
        (changed) => changed && log.info({ version: catalog.current?.version }, "catalog reloaded"),
        (error: unknown) => log.error({ err: error }, "catalog refresh failed; serving the previous one"),
      );
    }, CATALOG_POLL_MS);
    poll.unref();

    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.PORT;
    const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
    return { app, storage, catalog, url: `http://${host}:${port}`, close };
  } catch (error) {
    await close();
    throw error;
  }
}
