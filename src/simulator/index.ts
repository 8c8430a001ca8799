/**
 * The offline upstream exchange: a Kalshi trade-api v2 compatible HTTP server over a catalogue, with
 * seeded market motion, fault controls, and the portfolio API for accounts signing with an RSA key
 * (their orders take depth from the books and print on the tape). `oddsgate serve` starts it when no
 * UPSTREAM_URL is set; tests start their own on a free port.
 */
import Fastify from "fastify";
import type { CatalogueFile } from "../contract/markets.js";
import { fastifyListenerOptions, HTTP_LIMITS } from "../limits.js";
import { BookImpact } from "./book-impact.js";
import { SimulatorClock } from "./clock.js";
import { registerComboRoutes } from "./combo-routes.js";
import { SimulatedExchange } from "./exchange.js";
import { registerExchangeInfoRoutes } from "./exchange-routes.js";
import { FaultControls } from "./faults.js";
import { registerHistoricalRoutes } from "./historical-routes.js";
import { HistoryWindow } from "./history.js";
import { registerLiveDataRoutes } from "./live-data-routes.js";
import { ExchangeRequestError } from "./market-data.js";
import { MilestoneBook } from "./milestones.js";
import { OrderDesk } from "./order-desk.js";
import {
  inMemoryPortfolio,
  openAccount,
  registerAccountControlRoutes,
  registerPortfolioRoutes,
} from "./portfolio-routes.js";
import {
  registerControlRoutes,
  registerExchangeRoutes,
  type SimulatorContext,
  sendExchangeError,
  TapePositions,
} from "./routes.js";
import { registerSimControls } from "./sim-controls.js";
import { TradePrints } from "./trade-prints.js";

/** Where Kalshi serves trade-api v2, so the simulator's URL can stand in for Kalshi's unchanged. */
export const BASE_PATH = "/trade-api/v2";

/** Half of the depth a fill takes comes back in five minutes. */
const DEFAULT_REFILL_HALF_LIFE_SECONDS = 300;

/** The body a `malformed` fault sends: JSON cut off in the middle. */
const MALFORMED_BODY = '{"forecast_history":[{"event_ticker":"';

export interface SimulatorOptions {
  /** The catalogue, or how to make it: then it is made on the first request, not at start. */
  catalogue: CatalogueFile | (() => CatalogueFile);
  host?: string;
  port: number;
  /** The exchange's clock in Unix seconds (default: the real time). */
  now?: () => number;
  /** The moment the catalogue's quotes describe (default: read from the catalogue). */
  moment?: number;
  /** How far back the live endpoints reach, in seconds (default: 90 days, as Kalshi's); older is `/historical`. */
  historyWindowSeconds?: number;
  /**
   * How far back the exchange keeps trades and candles at all, in seconds (default: forever, as Kalshi's
   * historical tier does). One that forgets is what the venue's archive serves history past.
   */
  retentionSeconds?: number;
  /**
   * Accounts that may trade through the portfolio API, by Kalshi API key id: the key's RSA public key
   * (PEM) and the account's starting balance in cents. More can be opened with `POST /_sim/accounts`.
   */
  accounts?: Readonly<Record<string, { publicKeyPem: string; balanceCents: number }>>;
  /** Half of the depth a fill takes from a book comes back every this many seconds (default: 300). */
  bookRefillHalfLifeSeconds?: number;
  /**
   * The clock signatures' KALSHI-ACCESS-TIMESTAMP is held to, in milliseconds (default: the real time,
   * which clients sign with, whatever the exchange's `now` says).
   */
  signatureClockMs?: () => number;
  /** Whether the `/_sim` controls are served (default true; a production venue's simulator has none). */
  controls?: boolean;
}

export interface RunningSimulator {
  /** Base URL of trade-api v2, e.g. http://127.0.0.1:8090/trade-api/v2 */
  url: string;
  /** Built on first use (a request, or reading this). */
  readonly exchange: SimulatedExchange;
  faults: FaultControls;
  /** Opens an account for a key, as `accounts` does at start (refused for a key that has one). */
  openAccount(keyId: string, account: { publicKeyPem: string; balanceCents: number }): void;
  close(): Promise<void>;
}

/** Starts the simulator on `host:port` (port 0 picks a free one). */
export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  // `oddsgate serve` starts the simulator before the venue is ready; building its exchange (the demo
  // catalogue generated and indexed, ~0.2 s) waits for the first request, after the venue is ready.
  let exchange: SimulatedExchange | undefined;
  let milestones: MilestoneBook | undefined;
  const { catalogue, moment } = options;
  const faults = new FaultControls();
  const clock = new SimulatorClock(options.now ?? (() => Math.floor(Date.now() / 1000)));
  const now = clock.now;
  const ctx: SimulatorContext = {
    get exchange() {
      exchange ??= new SimulatedExchange(typeof catalogue === "function" ? catalogue() : catalogue, moment);
      return exchange;
    },
    get milestones() {
      milestones ??= new MilestoneBook(this.exchange);
      return milestones;
    },
    faults,
    now,
    history: new HistoryWindow(options.historyWindowSeconds, options.retentionSeconds),
    impact: new BookImpact(options.bookRefillHalfLifeSeconds ?? DEFAULT_REFILL_HALF_LIFE_SECONDS),
    prints: new TradePrints(),
  };
  const portfolio = inMemoryPortfolio((ledger) => new OrderDesk(ctx, ledger), options.signatureClockMs);
  for (const [keyId, account] of Object.entries(options.accounts ?? {})) {
    openAccount(portfolio, { keyId, ...account }, now());
  }
  // Hung and reset connections must not hold up close().
  const app = Fastify({ logger: false, forceCloseConnections: true, ...fastifyListenerOptions(HTTP_LIMITS) });

  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] as string;
    if (path.startsWith("/_sim/")) return;
    const fault = faults.take(path);
    switch (fault?.kind) {
      case undefined:
        return;
      case "latency":
        await new Promise((resolve) => setTimeout(resolve, fault.ms).unref());
        return;
      case "status":
        return sendExchangeError(reply, fault.status, "injected_fault", `injected ${fault.status}`);
      case "malformed":
        return reply.code(200).type("application/json").send(MALFORMED_BODY);
      case "hang":
        // Never answered; the socket is destroyed when the simulator closes.
        reply.hijack();
        return;
      case "reset":
        reply.hijack();
        request.raw.socket.resetAndDestroy();
        return;
    }
  });
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof ExchangeRequestError) {
      return sendExchangeError(reply, error.status, error.code, error.message, error.details);
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    const message = error instanceof Error ? error.message : String(error);
    return sendExchangeError(reply, status, status < 500 ? "bad_request" : "internal_error", message);
  });
  app.setNotFoundHandler((request, reply) =>
    sendExchangeError(reply, 404, "not_found", `no route ${request.method} ${request.url.split("?")[0]}`),
  );

  await app.register(
    async (exchangeApi) => {
      // One tape, so a trade id from either tier continues a listing in the other.
      const tape = new TapePositions(ctx.prints);
      registerExchangeRoutes(exchangeApi, ctx, tape);
      registerHistoricalRoutes(exchangeApi, ctx, tape);
      registerExchangeInfoRoutes(exchangeApi, ctx);
      registerComboRoutes(exchangeApi, ctx);
      registerLiveDataRoutes(exchangeApi, ctx);
      registerPortfolioRoutes(exchangeApi, ctx, portfolio);
    },
    { prefix: BASE_PATH },
  );
  if (options.controls ?? true) {
    registerControlRoutes(app, ctx);
    registerSimControls(app, ctx, clock);
    registerAccountControlRoutes(app, ctx, portfolio);
  }
  await app.listen({ host: options.host ?? "127.0.0.1", port: options.port });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = (options.host ?? "127.0.0.1").includes(":")
    ? `[${options.host}]`
    : (options.host ?? "127.0.0.1");
  return {
    url: `http://${host}:${port}${BASE_PATH}`,
    get exchange() {
      return ctx.exchange;
    },
    faults,
    openAccount(keyId, account) {
      openAccount(portfolio, { keyId, ...account }, now());
    },
    close: () => app.close(),
  };
}
