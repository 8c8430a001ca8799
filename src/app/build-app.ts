/**
 * Assembles the HTTP service from its plugins, in the order their hooks must run: response headers
 * and signing, error handling, access, streams, metrics and operations, then the API groups and the
 * documents that describe them. Everything a request can hit is registered here.
 */
import Fastify, { type FastifyServerOptions } from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { ArchiveHistory } from "../archive/history.js";
import type { Config } from "../config.js";
import type { AccessControl } from "../http/auth.js";
import { installMetrics, type Metrics } from "../http/metrics.js";
import { installApiDocuments } from "../http/openapi.js";
import type { ResponseSigningKey } from "../http/response-signing.js";
import type { SimulatorControls } from "../http/sim-relay.js";
import type { ZodApp } from "../http/types.js";
import { fastifyListenerOptions, HTTP_LIMITS, type ListenerTimeouts } from "../limits.js";
import type { CatalogHolder } from "../markets/catalog-holder.js";
import type { OnchainTrades } from "../markets/onchain-trades.js";
import type { MarketStreamHub } from "../markets/ws.js";
import { registerMcpRoute } from "../mcp/http-route.js";
import type { TradingApi } from "../trading/routes/index.js";
import type { MarketRelay } from "../upstream/relay.js";
import type { ChainConnection } from "./connect-chain.js";
import { answerFrameworkError, requestId, trustedProxies } from "./fastify-options.js";
import type { HealthMonitor } from "./health.js";
import { createLogger } from "./logger.js";
import { access } from "./plugins/access.js";
import { documents } from "./plugins/documents.js";
import { errorHandling } from "./plugins/error-handling.js";
import { explorer } from "./plugins/explorer.js";
import { marketApi } from "./plugins/market-api.js";
import { operations } from "./plugins/operations.js";
import { responseHeaders } from "./plugins/response-headers.js";
import { tradeApi } from "./plugins/trade-api.js";
import { websocketStreams } from "./plugins/websocket-streams.js";
import { AccessLog, answerClientError, requestLogger } from "./request-logging.js";

export { redactQueryKeys } from "./request-logging.js";

export interface AppDependencies {
  config: Pick<Config, "LOG_LEVEL" | "LOG_FORMAT" | "TRUST_PROXY" | "MODE" | "CORS_ORIGINS"> &
    Partial<Pick<Config, "EXPLORER" | "DATA_DIR" | "HOST">>;
  catalog: CatalogHolder;
  access: AccessControl;
  /** Whether this app serves the prediction-market API (default true; false on a trade-only listener). */
  marketsApi?: boolean;
  /** The upstream exchange behind the relayed operations; without it they are not offered. */
  relay?: MarketRelay;
  /** The market-data stream `/api/v1/ws`, fed from the upstream; offered only with the relay. */
  marketStream?: MarketStreamHub;
  /** What the archive holds past the upstream's retention: older forecasts, books at a moment (`?at=`). */
  history?: ArchiveHistory;
  /** The prediction-market fills this venue settled, for `/api/v1/onchain-trades`. */
  onchainTrades?: OnchainTrades;
  /** The chain; with the embedded sandbox in development mode, `POST /dev/faucet` is offered. */
  chain?: ChainConnection;
  /** The trading book and order desk behind the trade API; without them it is not offered. */
  trading?: TradingApi;
  /** Overrides the pino destination/options, e.g. to capture logs in tests. */
  logger?: FastifyServerOptions["loggerInstance"];
  /** Shorter listener timeouts than HTTP_LIMITS', so tests of them need not wait 10 s or more. */
  timeouts?: Partial<ListenerTimeouts>;
  /**
   * The venue's response-signing key: with it, responses are signed for callers that send
   * `x-sign-request: true`, and the key is published at /.well-known/http-message-signatures-directory.
   */
  responseSigning?: ResponseSigningKey;
  /** What the health routes report; without it, the catalogue alone. */
  health?: HealthMonitor;
  /** Symbols of the sandbox's demo tokens by mint, for the explorer. */
  tokenSymbols?: Readonly<Record<string, string>>;
  /** The embedded simulator's controls: in development, the explorer's simulator panel relays to them. */
  simulator?: SimulatorControls;
  /** Called with the app's metrics once they exist, for counters fed from outside the app (sync's). */
  onMetrics?: (metrics: Metrics) => void;
}

/** Builds the Fastify app (not yet listening). */
export async function buildApp(deps: AppDependencies): Promise<ZodApp> {
  const { config, catalog, trading } = deps;
  const mode = config.MODE;
  const app = Fastify({
    loggerInstance: requestLogger(deps.logger ?? createLogger(config, Boolean(process.stdout.isTTY))),
    ...fastifyListenerOptions({ ...HTTP_LIMITS, ...deps.timeouts }),
    clientErrorHandler: answerClientError,
    trustProxy: trustedProxies(config.TRUST_PROXY),
    requestIdHeader: false,
    genReqId: requestId,
    routerOptions: { maxParamLength: 256 },
    frameworkErrors: answerFrameworkError(deps.responseSigning),
    return503OnClosing: true,
    logController: new AccessLog(),
  }).withTypeProvider<ZodTypeProvider>();

  // Every body this API takes is JSON; Fastify's default text parser would let text through to validation.
  app.removeContentTypeParser("text/plain");
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Before any route, so that the published documents see them all.
  await installApiDocuments(app);

  await app.register(responseHeaders, { responseSigning: deps.responseSigning });
  await app.register(errorHandling, {});
  await app.register(access, { corsOrigins: config.CORS_ORIGINS, access: deps.access });
  await app.register(websocketStreams, {});
  const metrics = installMetrics(app);
  deps.onMetrics?.(metrics);
  await app.register(operations, { catalog, metrics, health: deps.health, mode });

  const marketsApi = deps.marketsApi ?? true;
  if (marketsApi) {
    const { relay, marketStream, onchainTrades, history } = deps;
    await app.register(marketApi, { catalog, mode, metrics, relay, marketStream, onchainTrades, history });
  }
  if (trading) await app.register(tradeApi, { trading, mode, metrics });
  // The agent surface calls both APIs in process: offered where one app serves them both.
  if (marketsApi && trading && deps.chain)
    registerMcpRoute(app, {
      mode,
      chain: deps.chain,
      dataDir: config.DATA_DIR,
      simulator: deps.simulator,
      host: config.HOST,
    });
  await app.register(explorer, {
    mode,
    chain: deps.chain,
    explorer: marketsApi
      ? { enabled: config.EXPLORER ?? true, tokenSymbols: deps.tokenSymbols, simulator: deps.simulator }
      : undefined,
  });
  await app.register(documents, {
    mode,
    marketsApi,
    marketDataStream: marketsApi && deps.relay !== undefined && deps.marketStream !== undefined,
    trading: trading !== undefined,
  });
  return app;
}
