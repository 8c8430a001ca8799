/** Starts a whole venue: storage, the catalog (seeded with the demo on a fresh database), and HTTP. */
import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config.js";
import type { CatalogueFile } from "../contract/markets.js";
import type { AccessControl } from "../http/auth.js";
import { MemoryRateStore, type RateStore, RedisRateStore } from "../http/rate-limit.js";
import type { ZodApp } from "../http/types.js";
import { KeyRing } from "../keys/key-ring.js";
import { resolveVenueSeed } from "../markets/accounts.js";
import { CatalogHolder } from "../markets/catalog-holder.js";
import { isCatalogueEmpty, resolveDemoAnchor, saveCatalogue } from "../markets/store.js";
import { syncFromUpstream } from "../markets/sync.js";
import { MarketStreamHub } from "../markets/ws.js";
import { openStorage, type Storage } from "../storage/database.js";
import { MarketRelay } from "../upstream/relay.js";
import { buildApp } from "./build-app.js";
import { type ChainConnection, connectChain } from "./connect-chain.js";
import { startTrading, type Trading } from "./connect-trading.js";
import { connectUpstream, type UpstreamConnection } from "./connect-upstream.js";

/** How often an instance checks storage for a catalogue another process changed. */
export const CATALOG_POLL_MS = 2_000;

export interface RunningServer {
  readonly app: ZodApp;
  readonly storage: Storage;
  readonly catalog: CatalogHolder;
  readonly upstream: UpstreamConnection;
  readonly chain: ChainConnection;
  readonly trading: Trading;
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
  let upstream: UpstreamConnection | undefined;
  let chain: ChainConnection | undefined;
  let trading: Trading | undefined;
  let marketStream: MarketStreamHub | undefined;
  let stopSync = () => {};
  const close = async () => {
    clearInterval(poll);
    stopSync();
    marketStream?.stop();
    await app?.close();
    await trading?.close();
    await upstream?.close();
    await chain?.close();
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
    // Generated at most once, for the empty database and the simulator alike.
    const demoAnchor = await resolveDemoAnchor(storage.db);
    let demo: CatalogueFile | undefined;
    const demoCatalogue = async () => {
      const { generateDemoCatalogue } = await import("../markets/demo/generate.js");
      demo ??= generateDemoCatalogue({ anchor: demoAnchor });
      return demo;
    };
    const useDemo = config.DEMO_CATALOGUE && (await isCatalogueEmpty(storage.db));
    if (useDemo || !config.UPSTREAM_URL) await demoCatalogue();
    upstream = await connectUpstream(config, () => demo as CatalogueFile);
    const upstreamClient = upstream.client;
    // The chain and trading log through the app's logger, which exists only once the app is built.
    const lateLogger = {
      info: (object: object, message: string) => app?.log.info(object, message),
      warn: (object: object, message: string) => app?.log.warn(object, message),
      error: (object: object, message: string) => app?.log.error(object, message),
    };
    const keyRing = keys;
    chain = await connectChain(config, {
      storage,
      venueSeed,
      logger: lateLogger,
      // In production the sandbox's JSON-RPC and PubSub take the same API keys as the HTTP API.
      sandbox: {
        mode: config.MODE,
        authorize: async (headers) => {
          const secret = headers["x-api-key"];
          if (typeof secret !== "string") return false;
          // A known key is answered from memory, as the HTTP API answers it; only a miss reads storage.
          return (keyRing.lookup(secret) ?? (await keyRing.check(secret))) !== undefined;
        },
      },
    });
    const connectedChain = chain;
    const relay = new MarketRelay(upstreamClient);
    marketStream = new MarketStreamHub({ catalog, relay, upstream: upstreamClient, logger: lateLogger });
    marketStream.start();
    trading = await startTrading(config, {
      storage,
      chain,
      venueSeed,
      fetchBook: (ticker) => relay.orderbookLevels(ticker),
      logger: lateLogger,
    });
    const tradingBook = trading.book;
    app = await buildApp({
      config,
      catalog,
      access,
      relay,
      marketStream,
      chain,
      trading,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    // A failing refresh means revocations stop arriving: it must be heard.
    await keys.start(app.log);
    await app.listen({ host: config.HOST, port: config.MARKETS_PORT ?? config.PORT });
    const log = app.log;
    log.info(
      {
        storage: storage.location,
        mode: config.MODE,
        sharedLimits: Boolean(config.REDIS_URL),
        upstream: upstream.simulator ? `simulator at ${upstream.url}` : upstream.url,
        chain: chain.sandbox ? `sandbox at ${chain.rpcUrl}` : chain.rpcUrl,
      },
      "storage open",
    );

    if (trading.demoPoolsCreated > 0) log.info({ pools: trading.demoPoolsCreated }, "created the demo pools");
    if (useDemo) {
      const counts = await saveCatalogue(storage.db, venueSeed, await demoCatalogue());
      log.info(counts, "loaded the demo catalogue into the empty database");
    }
    // The simulator holds its own copy; ours is no longer needed.
    demo = undefined;
    const loaded = await catalog.load(storage.db);
    // Every tokenized market's ledger and outcome mints exist on chain at the addresses the catalog
    // shows, and its active ones trade on the prediction venue.
    const followCatalog = async () => {
      const markets = catalog.require().markets.filter((m) => m.record.tokenized);
      const created = await connectedChain.addMarkets(markets.map((m) => m.addresses));
      if (created > 0) log.info({ accounts: created }, "created the chain accounts of tokenized markets");
      await tradingBook.updatePredictionMarkets(catalog.require());
    };
    await followCatalog();
    log.info({ events: loaded.events.length, markets: loaded.markets.length }, "catalog ready");

    const db = storage.db;
    poll = setInterval(() => {
      catalog.refreshIfChanged(db).then(
        async (changed) => {
          if (!changed) return;
          log.info({ version: catalog.current?.version }, "catalog reloaded");
          await followCatalog();
        },
        (error: unknown) => log.error({ err: error }, "catalog refresh failed; serving the previous one"),
      );
    }, CATALOG_POLL_MS);
    poll.unref();
    if (config.SYNC_INTERVAL > 0) {
      stopSync = startPeriodicSync(
        config.SYNC_INTERVAL * 1000,
        async () => {
          const result = await syncFromUpstream({
            db,
            venueSeed,
            upstream: upstreamClient,
            tokenize: config.SYNC_TOKENIZE,
          });
          if (result.changed.events > 0 || result.changed.series > 0) {
            log.info(result, "sync stored upstream changes");
            if (await catalog.refreshIfChanged(db)) await followCatalog();
          }
        },
        log,
      );
    }

    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.PORT;
    const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
    return { app, storage, catalog, upstream, chain, trading, url: `http://${host}:${port}`, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Runs `sync` now and then every `intervalMs` after the previous run ends; returns a stop function. */
function startPeriodicSync(
  intervalMs: number,
  sync: () => Promise<void>,
  log: { error(obj: object, msg: string): void },
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = () => {
    sync()
      .catch((error: unknown) => log.error({ err: error }, "sync failed; the catalogue stays as it was"))
      .finally(() => {
        if (!stopped) timer = setTimeout(run, intervalMs).unref();
      });
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
