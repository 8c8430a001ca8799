/**
 * Assembles the HTTP service: logging with request ids, the error and not-found handlers, metrics,
 * operations routes, and the API groups. Everything a request can hit is registered here.
 */
import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import cors from "@fastify/cors";
import websocket from "@fastify/websocket";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import type { Logger } from "pino";
import { z } from "zod";
import { isKeyParameter } from "../api-keys/url-keys.js";
import { devFaucet } from "../chain/routes/dev-faucet.js";
import type { Config } from "../config.js";
import { ApiError, ERRORS, isErrorCode } from "../contract/errors.js";
import {
  BOOK_STREAM,
  MARKET_DATA_STREAM,
  priorityFeesStream,
  QUOTE_STREAM,
  type StreamChannel,
} from "../contract/streams.js";
import { asyncApiDocument } from "../http/asyncapi.js";
import { type AccessControl, installAccessControl } from "../http/auth.js";
import { answerClientError as answerNodeClientError } from "../http/client-errors.js";
import { registerDocs } from "../http/docs.js";
import { toWireError, validationMessage } from "../http/errors.js";
import { registerExplorer } from "../http/explorer.js";
import { installIgnoredParams } from "../http/ignored-params.js";
import { installMetrics, type Metrics } from "../http/metrics.js";
import { ASYNCAPI_PATH, installApiDocuments } from "../http/openapi.js";
import {
  installResponseSigning,
  REQUEST_ID_PATTERN,
  type ResponseSigningKey,
  signReply,
  wantsSignature,
} from "../http/response-signing.js";
import type { ZodApp } from "../http/types.js";
import { fastifyListenerOptions, HTTP_LIMITS, type ListenerTimeouts } from "../limits.js";
import type { CatalogHolder } from "../markets/catalog-holder.js";
import type { OnchainTrades } from "../markets/onchain-trades.js";
import { marketsApiError } from "../markets/routes/errors.js";
import { registerMarketsApi } from "../markets/routes/index.js";
import type { MarketStreamHub } from "../markets/ws.js";
import { tradeApiError, tradeValidationError } from "../trading/routes/errors.js";
import { PriorityFeesResponse } from "../trading/routes/get-priority-fees.js";
import { registerTradeApi, type TradingApi } from "../trading/routes/index.js";
import type { MarketRelay } from "../upstream/relay.js";
import type { ChainConnection } from "./connect-chain.js";
import { catalogueProbe, HealthMonitor } from "./health.js";
import { registerHealthRoutes } from "./health-routes.js";
import { createLogger } from "./logger.js";

export interface AppDependencies {
  config: Pick<Config, "LOG_LEVEL" | "LOG_FORMAT" | "TRUST_PROXY" | "MODE" | "CORS_ORIGINS"> &
    Partial<Pick<Config, "EXPLORER">>;
  catalog: CatalogHolder;
  access: AccessControl;
  /** Whether this app serves the prediction-market API (default true; false on a trade-only listener). */
  marketsApi?: boolean;
  /** The upstream exchange behind the relayed operations; without it they are not offered. */
  relay?: MarketRelay;
  /** The market-data stream `/api/v1/ws`, fed from the upstream; offered only with the relay. */
  marketStream?: MarketStreamHub;
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
  /** Called with the app's metrics once they exist, for counters fed from outside the app (sync's). */
  onMetrics?: (metrics: Metrics) => void;
}

const METRICS = {
  operationId: "metrics",
  tags: ["Operations"],
  summary: "Prometheus metrics of this instance",
  produces: ["text/plain"],
  response: { 200: z.string().meta({ description: "The Prometheus text exposition format" }) },
};

const ALL_METHODS: HTTPMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Builds the Fastify app (not yet listening). */
export async function buildApp(deps: AppDependencies): Promise<ZodApp> {
  const timeouts: ListenerTimeouts = { ...HTTP_LIMITS, ...deps.timeouts };
  const app = Fastify({
    // A child, so that its request serializer replaces Fastify's, which would log the URL as sent.
    loggerInstance: (deps.logger ?? createLogger(deps.config, Boolean(process.stdout.isTTY))).child(
      {},
      { serializers: { req: serializeRequest } },
    ),
    ...fastifyListenerOptions(timeouts),
    clientErrorHandler: answerClientError,
    trustProxy: trustedProxies(deps.config.TRUST_PROXY),
    requestIdHeader: false,
    genReqId: (request) => {
      const offered = request.headers["x-request-id"];
      // A caller's id is echoed only when it is short and plain, so it cannot forge log lines (or lines
      // of a signature base). A signed response covers the id used here as the request's: a caller whose
      // id was replaced finds the new one in x-request-id, and its own does not verify.
      return typeof offered === "string" && REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
    },
    routerOptions: { maxParamLength: 256 },
    // Errors raised before routing (a malformed URL, say) get the same {code,msg} body as the rest.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const wire = toWireError(error);
      reply.header("x-request-id", request.id).code(wire.status);
      const key = deps.responseSigning;
      if (!key || !wantsSignature(request)) return reply.send(wire.body);
      // Fastify sends these answers without running onSend hooks: signed here, over the bytes sent.
      const body = JSON.stringify(wire.body);
      reply.type("application/json; charset=utf-8");
      signReply(request, reply, Buffer.from(body), key);
      return reply.send(body);
    },
    return503OnClosing: true,
    logController: new AccessLog(),
  }).withTypeProvider<ZodTypeProvider>();

  // Every body this API takes is JSON; Fastify's default text parser would let text through to validation.
  app.removeContentTypeParser("text/plain");
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Before any route, so that the published documents see them all.
  await installApiDocuments(app);

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    // Relayed bodies come from another service: never let a browser guess them into something else.
    reply.header("x-content-type-options", "nosniff");
    if (request.headers.upgrade !== undefined) reply.header("connection", "close");
  });
  app.addHook("onResponse", async (request) => {
    // An upgrade refused with a plain HTTP answer leaves a socket Node's HTTP server no longer manages:
    // end it, or it stays half-open and holds up shutdown.
    if (request.headers.upgrade !== undefined) request.raw.socket?.end();
  });
  // Before every plugin and handler, so that its onSend hook reaches all of them: routes, errors, 404s,
  // and the refusals of access control.
  const signingKey = deps.responseSigning;
  if (signingKey) installResponseSigning(app, signingKey);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const wire = toWireError(catalogueError(error, request));
    // Every 500 is unexpected (on the trade routes it carries the reference's name for one).
    if (wire.status === 500) request.log.error({ err: error }, "request failed");
    else request.log.info({ code: wire.body.code }, wire.body.msg);
    // What the catalogue says may succeed later, a 503 says when: at once, the next second.
    if (wire.status === 503 && isErrorCode(wire.body.code) && ERRORS[wire.body.code].retryable)
      reply.header("retry-after", "1");
    return reply.code(wire.status).send(wire.body);
  });

  installNotFoundHandler(app);
  if (deps.config.CORS_ORIGINS) {
    const origins = deps.config.CORS_ORIGINS.split(",").map((origin) => origin.trim());
    // Registered before the access checks, so browsers' preflight requests (which carry no key) are answered.
    await app.register(cors, {
      origin: origins.includes("*") ? "*" : origins,
      allowedHeaders: ["content-type", "x-api-key", "x-request-id", "x-sign-request"],
      exposedHeaders: [
        "x-request-id",
        "ratelimit",
        "ratelimit-policy",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "retry-after",
        "x-api-key-status",
        "x-ignored-params",
      ],
    });
  }
  installAccessControl(app, deps.access);
  installIgnoredParams(app);
  await app.register(websocket, {
    options: { maxPayload: HTTP_LIMITS.apiBodyBytes },
    errorHandler: (error, socket, request) => {
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && code.startsWith("WS_ERR_")) {
        // A client breaking the protocol (a frame over maxPayload, bad UTF-8, ...): ws has already
        // closed the connection with the matching code (1009 for size). It is the client's fault, so
        // one line and no stack.
        request.log.warn({ code }, `stream closed: ${error.message}`);
        return;
      }
      request.log.error({ err: error }, "stream handler failed");
      socket.terminate();
    },
  });
  const metrics = installMetrics(app);
  deps.onMetrics?.(metrics);
  deps.catalog.onReplace((catalog) => {
    metrics.catalogEvents.set(catalog.events.length);
    metrics.catalogMarkets.set(catalog.markets.length);
    metrics.catalogVersion.set(catalog.version);
  });

  registerHealthRoutes(app, {
    catalog: deps.catalog,
    health:
      deps.health ??
      new HealthMonitor({ catalogue: catalogueProbe(deps.catalog) }, { mode: deps.config.MODE }),
  });
  app.get("/metrics", { schema: METRICS }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const marketsApi = deps.marketsApi ?? true;
  if (marketsApi) {
    await app.register(
      registerMarketsApi(deps.catalog, deps.config.MODE, deps.relay, deps.marketStream, deps.onchainTrades),
      {
        prefix: "/api/v1",
      },
    );
  }
  const { marketStream } = deps;
  if (marketsApi && marketStream) metrics.countStreamClients("/api/v1/ws", () => marketStream.size);
  if (deps.trading) {
    const { quotes, books } = deps.trading;
    quotes.onFanout((seconds) => metrics.quoteStreamFanout.observe(seconds));
    books.onFanout((seconds) => metrics.bookStreamFanout.observe(seconds));
    metrics.countStreamClients("/quote-stream", () => quotes.size);
    metrics.countStreamClients("/book-stream", () => books.size);
    await app.register(registerTradeApi(deps.trading, deps.config.MODE));
  }
  const sandbox = deps.chain?.sandbox;
  if (deps.chain && sandbox)
    devFaucet(app, { chain: deps.chain.chain, signers: sandbox.signers }, deps.config.MODE);
  // The explorer reads the prediction-market API, so it lives on that listener.
  if (marketsApi) {
    registerExplorer(app, {
      enabled: deps.config.EXPLORER ?? true,
      mode: deps.config.MODE,
      sandbox: deps.config.MODE === "development" && sandbox !== undefined,
      ...(deps.chain ? { rpcUrl: deps.chain.rpcUrl } : {}),
      ...(deps.tokenSymbols ? { tokenSymbols: deps.tokenSymbols } : {}),
    });
  }
  const streams: StreamChannel[] = [
    ...(marketsApi && deps.relay && deps.marketStream ? [MARKET_DATA_STREAM] : []),
    ...(deps.trading ? [QUOTE_STREAM, BOOK_STREAM, priorityFeesStream(PriorityFeesResponse)] : []),
  ];
  // The host is the one the caller reached: the document names this listener, however it is addressed.
  app.get(ASYNCAPI_PATH, { schema: { hide: true } }, async (request) =>
    asyncApiDocument(streams, { host: request.host, mode: deps.config.MODE }),
  );
  // The page renders OpenAPI only: each OpenAPI document's description links the AsyncAPI one.
  await registerDocs(app, [
    ...(marketsApi ? [{ title: "Prediction markets", url: "/api/v1/openapi.json" }] : []),
    ...(deps.trading ? [{ title: "Trading", url: "/openapi.json" }] : []),
  ]);
  return app;
}

/**
 * An error as the catalogue error its route answers with. A schema failure (a parameter missing,
 * repeated, of the wrong type) is the trade route's reference code for that parameter, else
 * `bad_request`; a domain module's error is what its route group maps it to (each group's
 * `routes/errors.ts`, which also gives the trade routes' other errors their reference names); any
 * other error is as it is.
 */
function catalogueError(error: FastifyError, request: FastifyRequest): unknown {
  if (error.validation) {
    return (
      tradeValidationError(request.routeOptions.url, error) ??
      new ApiError(
        "bad_request",
        validationMessage(error, request.routeOptions.schema?.[error.validationContext ?? "querystring"]),
      )
    );
  }
  return marketsApiError(error) ?? tradeApiError(error, request) ?? error;
}

/** One access line per request, with its status and time, instead of Fastify's two. */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // Checked first: building the line costs more than the request itself at high rates.
    if (!(reply.log as Logger).isLevelEnabled("info")) return;
    const line = {
      method: request.method,
      url: redactQueryKeys(request.url),
      status: reply.statusCode,
      ms: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "request");
  }
}

/** Node's own refusals (see http/client-errors.ts), logged as one line without the request they could not parse. */
function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  const id = randomUUID();
  const wire = answerNodeClientError(error, socket, { "x-request-id": id });
  // No URL and no raw bytes: the request may not even have parsed, and could hold a key.
  if (wire)
    this.log.info(
      { reqId: id, status: wire.status, code: wire.body.code, reason: error.code },
      wire.body.msg,
    );
}

/** pino's request serializer, with key-like query parameters hidden (Fastify's logs the URL as sent). */
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactQueryKeys(request.url ?? ""),
    remoteAddress: request.ip,
  };
}

/**
 * Hides the value of any API-key-like query parameter, so a key pasted into a URL never reaches a log.
 * Names are compared decoded, as the access check compares them (`%61pi_key` is `api_key`).
 */
export function redactQueryKeys(url: string): string {
  const start = url.indexOf("?");
  if (start === -1) return url;
  const query = url.slice(start + 1);
  const pairs = query.split("&").map((pair) => {
    const name = pair.split("=")[0] ?? "";
    return isKeyParameter(safeDecode(name)) ? `${name}=[redacted]` : pair;
  });
  return `${url.slice(0, start)}?${pairs.join("&")}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}

/** Fastify's trust setting for TRUST_PROXY: the n nearest hops, or the listed proxy addresses. */
function trustedProxies(
  setting: Config["TRUST_PROXY"],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(setting)) return setting;
  return setting === 0 ? false : (_address, hop) => hop < setting;
}

/**
 * Answers unknown paths with 404 and known paths with the wrong method with 405 (Fastify alone
 * answers both with 404), using a shadow router of every registered route.
 */
function installNotFoundHandler(app: FastifyInstance): void {
  const known = FindMyWay({ ignoreTrailingSlash: false });
  const noop = () => {};
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (ALL_METHODS.includes(method as HTTPMethod) && !known.hasRoute(method as HTTPMethod, route.url)) {
        known.on(method as HTTPMethod, route.url, noop);
      }
    }
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = ALL_METHODS.filter((method) => method !== request.method && known.find(method, path));
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      const wire = toWireError(
        new ApiError(
          "method_not_allowed",
          `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}`,
        ),
      );
      return reply.code(wire.status).send(wire.body);
    }
    const wire = toWireError(new ApiError("not_found", `no route ${request.method} ${path}`));
    return reply.code(wire.status).send(wire.body);
  });
}
