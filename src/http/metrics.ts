/** Prometheus metrics of one app instance (its own registry, so several apps can share a process). */
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface Metrics {
  readonly registry: Registry;
  /** Seconds from the start of a slot's quote-stream frames until all were written out. */
  readonly quoteStreamFanout: Histogram;
  /** The same for /book-stream. */
  readonly bookStreamFanout: Histogram;
  readonly catalogEvents: Gauge;
  readonly catalogMarkets: Gauge;
  readonly catalogVersion: Gauge;
  /**
   * Market records refused because they would have turned a determined or finalized market back (to
   * active, say), by where they came from (`sync`).
   */
  readonly lifecycleRefusals: Counter<"source">;
  /** Counts the connected clients of a stream (by its path) at every scrape. */
  countStreamClients(stream: string, count: () => number): void;
}

/** Creates the registry and records every response's route, status and duration. */
export function installMetrics(app: FastifyInstance): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "oddsgate_http_requests_total",
    help: "HTTP responses by method, route pattern and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "oddsgate_http_request_duration_seconds",
    help: "Time from request to response, by route pattern",
    labelNames: ["route"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  app.addHook("onResponse", async (request, reply) => {
    // The pattern, not the URL, keeps label cardinality bounded whatever clients send.
    const route = request.routeOptions.url ?? "unmatched";
    requests.inc({ method: request.method, route, status: reply.statusCode });
    duration.observe({ route }, reply.elapsedTime / 1000);
  });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  const fanout = (stream: "quote-stream" | "book-stream") =>
    new Histogram({
      name: `oddsgate_${stream.replace("-", "_")}_fanout_seconds`,
      help: `Time from the start of a slot's /${stream} frames until every one was written to its socket`,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1],
      registers: [registry],
    });
  const streamCounts = new Map<string, () => number>();
  new Gauge({
    name: "oddsgate_stream_clients",
    help: "Connected WebSocket clients, by stream",
    labelNames: ["stream"],
    registers: [registry],
    collect() {
      for (const [stream, count] of streamCounts) this.set({ stream }, count());
    },
  });
  return {
    registry,
    countStreamClients: (stream, count) => streamCounts.set(stream, count),
    quoteStreamFanout: fanout("quote-stream"),
    bookStreamFanout: fanout("book-stream"),
    catalogEvents: gauge("oddsgate_catalog_events", "Events in the loaded catalog"),
    catalogMarkets: gauge("oddsgate_catalog_markets", "Markets in the loaded catalog"),
    catalogVersion: gauge("oddsgate_catalog_version", "Version of the loaded catalog"),
    lifecycleRefusals: new Counter({
      name: "oddsgate_lifecycle_refusals_total",
      help: "Market records refused because they would turn a determined or finalized market back",
      labelNames: ["source"],
      registers: [registry],
    }),
  };
}
