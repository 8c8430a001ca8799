/** Starts a whole venue: storage, the catalog (seeded with the demo on a fresh database), and HTTP. */
import type { FastifyBaseLogger, FastifyServerOptions } from "fastify";
import { KeyRing } from "../api-keys/key-ring.js";
import { demoTokens } from "../chain/demo-tokens.js";
import { loadResponseSigningKey } from "../chain/venue-keys.js";
import type { Config } from "../config.js";
import type { CatalogueFile } from "../contract/markets.js";
import { every } from "../every.js";
import type { AccessControl } from "../http/auth.js";
import { MemoryRateStore, type RateStore, RedisRateStore } from "../http/rate-limit.js";
import type { ZodApp } from "../http/types.js";
import { resolveVenueSeed } from "../markets/accounts.js";
import type { Catalog } from "../markets/catalog.js";
import { CatalogHolder } from "../markets/catalog-holder.js";
import type { MarketFeed } from "../markets/market-feed.js";
import { OnchainTrades } from "../markets/onchain-trades.js";
import { RedisMarketFeed } from "../markets/redis-market-feed.js";
import {
  fillCashRails,
  isCatalogueEmpty,
  readCatalogue,
  resolveDemoAnchor,
  saveCatalogue,
} from "../markets/store.js";
import { type SyncOptions, syncFromUpstream } from "../markets/sync.js";
import { MarketStreamHub } from "../markets/ws.js";
import { openStorage, type Storage } from "../storage/database.js";
import { MarketRelay } from "../upstream/relay.js";
import { buildApp } from "./build-app.js";
import { type ArchiveConnection, connectArchive } from "./connect-archive.js";
import { type ChainConnection, connectChain } from "./connect-chain.js";
import { startTrading, type Trading } from "./connect-trading.js";
import { connectUpstream, type UpstreamConnection } from "./connect-upstream.js";
import {
  catalogueProbe,
  chainProbe,
  HealthMonitor,
  redisProbe,
  StartupWork,
  storageProbe,
  upstreamProbe,
} from "./health.js";
import { Lifecycle } from "./lifecycle.js";
import { createLogger } from "./logger.js";

/** How often an instance checks storage for a catalogue another process changed. */
export const CATALOG_POLL_MS = 2_000;

export interface RunningServer {
  /** The app serving the prediction-market API (and the trade API too, unless it has its own port). */
  readonly app: ZodApp;
  /** The app serving the trade API: the same app unless the ports split the two groups. */
  readonly tradeApp: ZodApp;
  readonly storage: Storage;
  readonly catalog: CatalogHolder;
  readonly upstream: UpstreamConnection;
  readonly chain: ChainConnection;
  readonly trading: Trading;
  readonly marketStream: MarketStreamHub;
  /** The archive, when ARCHIVE is on. */
  readonly archive: ArchiveConnection | undefined;
  /** Base URL of the prediction-market API listener, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** Base URL of the trade API listener: `url` unless the ports split the two groups. */
  readonly tradeUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: FastifyServerOptions["loggerInstance"];
  /**
   * Awaited once the listeners answer reads (the catalogue loaded), before the start-up work trading
   * needs (the chain accounts of tokenized markets): until then `/health-check/ready` answers 503.
   */
  beforeStartupWork?: (server: RunningServer) => Promise<void> | void;
  /**
   * A catalog built from a copy of this storage (another venue started on the same database file):
   * the first load reads only the rows written since it and takes over its unchanged markets, as a
   * reload does, instead of building every market again; storage that does not add up to it is read whole.
   */
  catalogSeed?: Catalog;
  /** Where `/api/v1/ws` messages come from instead of the upstream's polling: a replay's recorded frames. */
  marketFeed?: MarketFeed;
  /**
   * The upstream's clock (Unix s), by which the relay decides which ranges are settled and may be
   * cached: a replay's, which runs behind the wall clock.
   */
  upstreamNowSeconds?: () => number;
}

/**
 * Where each API group listens: on its own port when MARKETS_PORT or TRADE_PORT names one, else on
 * PORT. Both share one app when they land on the same port (two explicit 0s mean two free ports).
 */
export function listenerPlan(config: Pick<Config, "PORT" | "MARKETS_PORT" | "TRADE_PORT">) {
  const marketsPort = config.MARKETS_PORT ?? config.PORT;
  const tradePort = config.TRADE_PORT ?? config.PORT;
  const bothExplicit = config.MARKETS_PORT !== undefined && config.TRADE_PORT !== undefined;
  const shared = marketsPort === tradePort && !(marketsPort === 0 && bothExplicit);
  return { marketsPort, tradePort, shared };
}

/**
 * Opens storage, starts listening, loads the catalog (`/health-check` answers 503 until then), then
 * creates the chain accounts of its tokenized markets (`/health-check/ready` answers 503 until then);
 * resolves once all of it is done.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const lifecycle = new Lifecycle();
  try {
    return await start(config, options, lifecycle);
  } catch (error) {
    await lifecycle.close();
    throw error;
  }
}

async function start(config: Config, options: StartOptions, lifecycle: Lifecycle): Promise<RunningServer> {
  const log = options.logger ?? createLogger(config, Boolean(process.stdout.isTTY));
  const storage = await openStorage(config);
  lifecycle.defer("storage", () => storage.close());
  const db = storage.db;
  const venueSeed = await resolveVenueSeed(db, config.VENUE_SEED);
  const { access, keys } = await openAccess(config, db, lifecycle);
  const demo = await DemoSource.open(db, config);
  const upstream = await connectUpstream(config, () => demo.simulatorCatalogue());
  lifecycle.defer("upstream", () => upstream.close());
  const chain = await connectChain(config, {
    storage,
    venueSeed,
    logger: log,
    // In production the sandbox's JSON-RPC and PubSub take the same API keys as the HTTP API.
    sandbox: {
      mode: config.MODE,
      authorize: async (headers) => {
        const secret = headers["x-api-key"];
        if (typeof secret !== "string") return false;
        // A known key is answered from memory, as the HTTP API answers it; only a miss reads storage.
        return (keys.lookup(secret) ?? (await keys.check(secret))) !== undefined;
      },
      // A PubSub socket is checked once, at its upgrade: the ring ends it when its key stops being valid.
      onInvalidated: (listener) => keys.onInvalidated(listener),
    },
  });
  lifecycle.defer("chain", () => chain.close());

  const catalog = new CatalogHolder(options.catalogSeed);
  const chainAccounts = new StartupWork();
  const health = new HealthMonitor(
    {
      catalogue: catalogueProbe(catalog),
      chainAccounts,
      storage: storageProbe(db),
      chain: chainProbe(chain.chain),
      ...(config.REDIS_URL ? { redis: await redisProbe(config.REDIS_URL) } : {}),
      upstream: upstreamProbe(upstream.client),
    },
    { mode: config.MODE },
  );
  lifecycle.defer("health probes", () => health.close());
  const relay = new MarketRelay(upstream.client, options.upstreamNowSeconds);
  // With Redis, one instance polls the upstream for every instance's /api/v1/ws clients.
  const feed =
    options.marketFeed ??
    (config.REDIS_URL
      ? await RedisMarketFeed.connect({ url: config.REDIS_URL, prefix: config.REDIS_PREFIX, logger: log })
      : undefined);
  if (feed) lifecycle.defer("market feed", () => feed.close());
  const archive = await connectArchive(config, {
    db,
    upstream: upstream.client,
    leading: () => feed?.isLeader ?? true,
    logger: log,
  });
  // Closed after the stream and the sync (deferred earlier, closed later): it writes what they last heard.
  if (archive) lifecycle.defer("archive", () => archive.close());
  const marketStream = new MarketStreamHub({
    catalog,
    relay,
    upstream: upstream.client,
    logger: log,
    ...(feed ? { feed } : {}),
    ...(archive ? { recordFrames: (channel, entries) => archive.recorder.frames(channel, entries) } : {}),
  });
  const trading = await startTrading(config, {
    storage,
    chain,
    venueSeed,
    fetchBook: (ticker) => relay.orderbookLevels(ticker),
    ...(upstream.portfolio ? { upstreamPortfolio: upstream.portfolio } : {}),
    logger: log,
  });
  lifecycle.defer("trading", () => trading.close());

  const plan = listenerPlan(config);
  // One key for both listeners, kept in DATA_DIR so that it survives restarts and instances share it.
  const responseSigning = loadResponseSigningKey(config.DATA_DIR, config.RESPONSE_SIGNING_KEY_FILE);
  const onchainTrades = new OnchainTrades(db);
  // The demo tokens exist only on the sandbox chain; the explorer names them by symbol.
  const tokenSymbols = chain.sandbox
    ? Object.fromEntries(demoTokens(venueSeed).map((token) => [token.address, token.symbol]))
    : undefined;
  const common = {
    config,
    catalog,
    access,
    logger: log,
    responseSigning,
    onchainTrades,
    health,
    ...(tokenSymbols ? { tokenSymbols } : {}),
  };
  // The trade API and the sandbox's faucet go where the trade listener is.
  // Sync's refusals are counted on the listener that serves the catalogue.
  let countRefusals = (_count: number) => {};
  // In development, the explorer's simulator panel drives the embedded simulator and syncs at once.
  let syncNow = (): Promise<void> => Promise.resolve();
  const simulator =
    config.MODE === "development" && upstream.simulator
      ? { url: upstream.simulator.url, syncNow: () => syncNow() }
      : undefined;
  const app = await buildApp({
    ...common,
    relay,
    marketStream,
    ...(archive ? { history: archive.history } : {}),
    ...(simulator ? { simulator } : {}),
    onMetrics: (metrics) => {
      countRefusals = (count) => metrics.lifecycleRefusals.inc({ source: "sync" }, count);
    },
    ...(plan.shared ? { trading, chain } : {}),
  });
  lifecycle.defer("markets listener", () => app.close());
  const tradeApp = plan.shared ? app : await buildApp({ ...common, marketsApi: false, trading, chain });
  if (tradeApp !== app) lifecycle.defer("trade listener", () => tradeApp.close());
  await marketStream.start();
  // Stopped before the listeners close, so its sockets are ended by the hub rather than cut.
  lifecycle.defer("market stream", () => marketStream.stop());
  // A failing refresh means revocations stop arriving: it must be heard.
  await keys.start(app.log);
  await app.listen({ host: config.HOST, port: plan.marketsPort });
  if (tradeApp !== app) await tradeApp.listen({ host: config.HOST, port: plan.tradePort });
  log.info(
    {
      storage: storage.location,
      mode: config.MODE,
      sharedLimits: Boolean(config.REDIS_URL),
      upstream: upstream.simulator ? `simulator at ${upstream.url}` : upstream.url,
      chain: chain.sandbox ? `sandbox at ${chain.rpcUrl}` : chain.rpcUrl,
      responseSigningKey: responseSigning.address,
    },
    "storage open",
  );
  if (trading.demoPoolsCreated > 0) log.info({ pools: trading.demoPoolsCreated }, "created the demo pools");
  await demo.storeIfEmpty(venueSeed, log);

  // Every tokenized market's ledger and outcome mints exist on chain at the addresses the catalog
  // shows, and its active ones trade on the prediction venue. A reload shares the entries of
  // unchanged markets with the catalog it replaces, so only entries the last catalog followed lacks
  // can need accounts: naming all 250,000 again took over a second of every reload.
  let followed: Catalog | undefined;
  const followLatest = async () => {
    const current = catalog.require();
    const before = followed;
    const markets = current.markets.filter(
      (m) => m.record.tokenized && before?.market(m.record.ticker) !== m,
    );
    const created = await chain.addMarkets(markets.map((m) => m.addresses));
    if (created > 0) log.info({ accounts: created }, "created the chain accounts of tokenized markets");
    await trading.book.updatePredictionMarkets(current);
    followed = current;
  };
  // One at a time (the catalogue poll and the sync both call it): overlapping runs could finish out
  // of order and leave the prediction venue on the older catalog.
  let following: Promise<void> = Promise.resolve();
  const followCatalog = (): Promise<void> => {
    const run = following.then(followLatest);
    following = run.catch(() => undefined);
    return run;
  };
  const filled = await fillCashRails(db);
  if (filled > 0) log.info({ markets: filled }, "stored the CASH rail of markets stored without it");
  // On a connection of its own: the load reads for seconds at scale, and other queries go on.
  const loaded = await catalog.load(storage.snapshots);
  log.info({ events: loaded.events.length, markets: loaded.markets.length }, "catalog loaded");
  const server: RunningServer = {
    app,
    tradeApp,
    storage,
    catalog,
    upstream,
    chain,
    trading,
    marketStream,
    archive,
    url: listenerUrl(app, config.HOST),
    tradeUrl: listenerUrl(tradeApp, config.HOST),
    close: () => lifecycle.close(),
  };
  await options.beforeStartupWork?.(server);
  try {
    await followCatalog();
  } catch (error) {
    chainAccounts.failed(error);
    throw error;
  }
  chainAccounts.succeeded();
  log.info("ready: the chain accounts of tokenized markets are in place");
  const kept = keepCatalogCurrent({
    config,
    storage,
    venueSeed,
    upstream,
    catalog,
    followCatalog,
    log,
    lifecycle,
    countRefusals: (count) => countRefusals(count),
    ...(archive ? { onStored: (stored) => archive.recorder.catalogueChanges(stored) } : {}),
  });
  syncNow = kept.syncNow;
  // The archive's daily catalogue snapshot begins once the first sync has ended (or failed): begun
  // as the venue turned ready, it held the event loop and ~100 MB at scale while the first probes
  // and the sync were answered, and it then records the synced catalogue.
  void kept.firstSync.then(() => archive?.snapshotDaily((onMarkets) => readCatalogue(db, onMarkets)));
  return server;
}

/** The API keys and rate limits every listener checks: the key ring and the rate store, opened. */
async function openAccess(config: Config, db: Storage["db"], lifecycle: Lifecycle) {
  const keys = new KeyRing(db);
  lifecycle.defer("api keys", () => keys.stop());
  const rateStore: RateStore = config.REDIS_URL
    ? await RedisRateStore.connect(config.REDIS_URL, config.REDIS_PREFIX)
    : new MemoryRateStore();
  lifecycle.defer("rate store", () => rateStore.close());
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
  return { access, keys };
}

/**
 * The demo catalogue, generated at most once and only when wanted: for an empty database (with
 * DEMO_CATALOGUE), and for the embedded simulator (without UPSTREAM_URL) on its first request. Each
 * keeps what it took (the database its rows, the simulator its exchange), so the copy here goes as
 * soon as no one is still to take it.
 */
class DemoSource {
  private catalogue: CatalogueFile | undefined;
  private stillToStore: boolean;
  private simulatorStillToTake: boolean;

  private constructor(
    private readonly db: Storage["db"],
    private readonly anchor: number,
    private readonly generator: ((options: { anchor: number }) => CatalogueFile) | undefined,
    wanted: { store: boolean; simulator: boolean },
  ) {
    this.stillToStore = wanted.store;
    this.simulatorStillToTake = wanted.simulator;
  }

  /** Reads what the database says: the demo's fixed moment, and whether it is empty. */
  static async open(db: Storage["db"], config: Config): Promise<DemoSource> {
    const anchor = await resolveDemoAnchor(db);
    const wanted = {
      store: config.DEMO_CATALOGUE && (await isCatalogueEmpty(db)),
      simulator: !config.UPSTREAM_URL,
    };
    const generator =
      wanted.store || wanted.simulator
        ? (await import("../demo/generate.js")).generateDemoCatalogue
        : undefined;
    return new DemoSource(db, anchor, generator, wanted);
  }

  /** The catalogue the embedded simulator serves, generated when it first needs it. */
  simulatorCatalogue(): CatalogueFile {
    const catalogue = this.generate();
    this.simulatorStillToTake = false;
    if (!this.stillToStore) this.catalogue = undefined;
    return catalogue;
  }

  /** Stores the demo in an empty database. */
  async storeIfEmpty(venueSeed: string, log: FastifyBaseLogger): Promise<void> {
    if (!this.stillToStore) return;
    const counts = await saveCatalogue(this.db, venueSeed, this.generate());
    this.stillToStore = false;
    if (!this.simulatorStillToTake) this.catalogue = undefined;
    log.info(counts, "loaded the demo catalogue into the empty database");
  }

  private generate(): CatalogueFile {
    if (!this.generator) throw new Error("the demo catalogue is not wanted here: UPSTREAM_URL is set");
    this.catalogue ??= this.generator({ anchor: this.anchor });
    return this.catalogue;
  }
}

/**
 * Reloads the catalogue another process changed, and syncs from the upstream every SYNC_INTERVAL;
 * returns a sync on demand (run after any sync in progress, never beside it).
 */
function keepCatalogCurrent(deps: {
  config: Config;
  storage: Storage;
  venueSeed: string;
  upstream: UpstreamConnection;
  catalog: CatalogHolder;
  followCatalog: () => Promise<void>;
  log: FastifyBaseLogger;
  lifecycle: Lifecycle;
  /** Counts the market records a sync refused (its lifecycle refusals metric). */
  countRefusals: (count: number) => void;
  /** Hears what each sync stored (the archive). */
  onStored?: SyncOptions["onStored"];
}): { syncNow: () => Promise<void>; firstSync: Promise<void> } {
  const { config, catalog, log } = deps;
  const { db, snapshots } = deps.storage;
  const poll = every(
    CATALOG_POLL_MS,
    async () => {
      if (!(await catalog.refreshIfChanged(snapshots))) return;
      log.info({ version: catalog.current?.version }, "catalog reloaded");
      await deps.followCatalog();
    },
    { onError: (error) => log.error({ err: error }, "catalog refresh failed; serving the previous one") },
  );
  deps.lifecycle.defer("catalog poll", () => poll.stop());
  const syncOnce = async () => {
    const result = await syncFromUpstream({
      db,
      venueSeed: deps.venueSeed,
      upstream: deps.upstream.client,
      tokenize: config.SYNC_TOKENIZE,
      ...(deps.onStored ? { onStored: deps.onStored } : {}),
    });
    if (result.refused.length > 0) {
      deps.countRefusals(result.refused.length);
      log.warn(
        { refused: result.refused.slice(0, 20), count: result.refused.length },
        "sync refused upstream records that would turn determined or finalized markets back; storage keeps them settled",
      );
    }
    if (result.changed.events > 0 || result.changed.series > 0) {
      log.info(result, "sync stored upstream changes");
      if (await catalog.refreshIfChanged(snapshots)) await deps.followCatalog();
    }
  };
  let syncing: Promise<void> = Promise.resolve();
  const syncNow = (): Promise<void> => {
    const run = syncing.then(syncOnce);
    syncing = run.catch(() => undefined);
    return run;
  };
  if (config.SYNC_INTERVAL <= 0) return { syncNow, firstSync: Promise.resolve() };
  // Settles when a scheduled sync has run to its end (not when the schedule stops before one has).
  let firstSyncEnded = () => {};
  const firstSync = new Promise<void>((resolve) => {
    firstSyncEnded = resolve;
  });
  const sync = every(config.SYNC_INTERVAL * 1000, () => syncNow().finally(firstSyncEnded), {
    immediately: true,
    onError: (error) => log.error({ err: error }, "sync failed; the catalogue stays as it was"),
  });
  deps.lifecycle.defer("upstream sync", () => sync.stop());
  return { syncNow, firstSync };
}

/** The base URL an app is listening on. */
function listenerUrl(app: ZodApp, host: string): string {
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
