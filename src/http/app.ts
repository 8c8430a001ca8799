/**
 * Assembles the HTTP service: logging with request ids, the error and not-found handlers, metrics,
 * operations routes, and the API groups. Everything a request can hit is registered here.
 */
import { randomUUID } from "node:crypto";
import cors from "@fastify/cors";
import websocket from "@fastify/websocket";
import scalarApiReference from "@scalar/fastify-api-reference";
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
import type { ChainConnection } from "../chain/connect.js";
import { devFaucet } from "../chain/routes/dev-faucet.js";
import type { Config } from "../config.js";
import type { CatalogHolder } from "../markets/catalog-holder.js";
import { registerMarketsApi } from "../markets/routes/index.js";
import type { MarketStreamHub } from "../markets/ws.js";
import { registerTradeApi, type TradingApi } from "../trading/routes/index.js";
import type { MarketRelay } from "../upstream/relay.js";
import { type AccessControl, installAccessControl, isKeyParameter } from "./auth.js";
import { ApiError, toWireError } from "./errors.js";
import { installMetrics } from "./metrics.js";
import type { ZodApp } from "./types.js";

export interface AppDependencies {
  config: Pick<Config, "LOG_LEVEL" | "TRUST_PROXY" | "MODE" | "CORS_ORIGINS">;
  catalog: CatalogHolder;
  access: AccessControl;
  /** The upstream exchange behind the relayed operations; without it they are not offered. */
  relay?: MarketRelay;
  /** The market-data stream `/api/v1/ws`, fed from the upstream; offered only with the relay. */
  marketStream?: MarketStreamHub;
  /** The chain; with the embedded sandbox in development mode, `POST /dev/faucet` is offered. */
  chain?: ChainConnection;
  /** The trading book and order desk behind the trade API; without them it is not offered. */
  trading?: TradingApi;
  /** Overrides the pino destination/options, e.g. to capture logs in tests. */
  logger?: FastifyServerOptions["loggerInstance"];
}

export const BODY_LIMIT_BYTES = 64 * 1024;
const REQUEST_ID = /^[\w.:-]{1,128}$/;
const ALL_METHODS: HTTPMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Builds the Fastify app (not yet listening). */
export async function buildApp(deps: AppDependencies): Promise<ZodApp> {
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : {
          logger: {
            level: deps.config.LOG_LEVEL,
            redact: {
              paths: ['req.headers["x-api-key"]', "req.headers.authorization"],
              censor: "[redacted]",
            },
          },
        }),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    trustProxy: trustedProxies(deps.config.TRUST_PROXY),
    requestIdHeader: false,
    genReqId: (request) => {
      const offered = request.headers["x-request-id"];
      // A caller's id is echoed only when it is short and plain, so it cannot forge log lines.
      return typeof offered === "string" && REQUEST_ID.test(offered) ? offered : randomUUID();
    },
    routerOptions: { maxParamLength: 256 },
    // Errors raised before routing (a malformed URL, say) get the same {code,msg} body as the rest.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const wire = toWireError(error);
      reply.header("x-request-id", request.id).code(wire.status).send(wire.body);
    },
    return503OnClosing: true,
    logController: new AccessLog(),
  }).withTypeProvider<ZodTypeProvider>();

  // A client gets 10 s to send its headers: slow-header (slowloris) connections are cut, not kept.
  app.server.headersTimeout = 10_000;
  // Every body this API takes is JSON; Fastify's default text parser would let text through to validation.
  app.removeContentTypeParser("text/plain");
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (request.headers.upgrade !== undefined) reply.header("connection", "close");
  });
  app.addHook("onResponse", async (request) => {
    // An upgrade refused with a plain HTTP answer leaves a socket Node's HTTP server no longer manages:
    // end it, or it stays half-open and holds up shutdown.
    if (request.headers.upgrade !== undefined) request.raw.socket?.end();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const wire = error.validation ? validationError(error) : toWireError(error);
    if (wire.body.code === "internal") request.log.error({ err: error }, "request failed");
    else request.log.info({ code: wire.body.code }, wire.body.msg);
    if (wire.status === 503) reply.header("retry-after", "1");
    return reply.code(wire.status).send(wire.body);
  });

  installNotFoundHandler(app);
  if (deps.config.CORS_ORIGINS) {
    const origins = deps.config.CORS_ORIGINS.split(",").map((origin) => origin.trim());
    // Registered before the access checks, so browsers' preflight requests (which carry no key) are answered.
    await app.register(cors, {
      origin: origins.includes("*") ? "*" : origins,
      allowedHeaders: ["content-type", "x-api-key", "x-request-id"],
      exposedHeaders: [
        "x-request-id",
        "ratelimit",
        "ratelimit-policy",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "retry-after",
      ],
    });
  }
  installAccessControl(app, deps.access);
  await app.register(websocket, { options: { maxPayload: BODY_LIMIT_BYTES } });
  const metrics = installMetrics(app);
  deps.catalog.onReplace((catalog) => {
    metrics.catalogEvents.set(catalog.events.length);
    metrics.catalogMarkets.set(catalog.markets.length);
    metrics.catalogVersion.set(catalog.version);
  });

  app.get("/health-check", { schema: { hide: true } }, async (_request, reply) => {
    deps.catalog.require();
    return reply.type("text/plain; charset=utf-8").send("ok");
  });
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  await app.register(registerMarketsApi(deps.catalog, deps.config.MODE, deps.relay, deps.marketStream), {
    prefix: "/api/v1",
  });
  if (deps.trading) {
    deps.trading.quotes.onFanout((seconds) => metrics.quoteStreamFanout.observe(seconds));
    await app.register(registerTradeApi(deps.trading, deps.config.MODE));
  }
  const sandbox = deps.chain?.sandbox;
  if (deps.chain && sandbox)
    devFaucet(app, { chain: deps.chain.chain, signers: sandbox.signers }, deps.config.MODE);
  await app.register(scalarApiReference, {
    routePrefix: "/docs",
    configuration: {
      title: "Oddsgate API",
      sources: [
        { title: "Prediction markets", url: "/api/v1/openapi.json" },
        ...(deps.trading ? [{ title: "Trading", url: "/openapi.json" }] : []),
      ],
    },
  });
  return app;
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

/** Turns a schema validation failure into a 400 whose message names the parameter and the rule. */
function validationError(error: FastifyError) {
  const where =
    error.validationContext === "querystring" ? "query parameter" : (error.validationContext ?? "input");
  const details = (error.validation ?? []).map((issue) => {
    const name = issue.instancePath.replace(/^\//, "").replaceAll("/", ".");
    return name ? `${where} ${name}: ${issue.message}` : `${where}: ${issue.message}`;
  });
  return toWireError(new ApiError("bad_request", details.join("; ") || "invalid request"));
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
