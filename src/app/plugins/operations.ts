import { z } from "zod";
import type { Config } from "../../config.js";
import type { Metrics } from "../../http/metrics.js";
import type { CatalogHolder } from "../../markets/catalog-holder.js";
import { catalogueProbe, HealthMonitor } from "../health.js";
import { registerHealthRoutes } from "../health-routes.js";
import { appPlugin } from "./app-plugin.js";

const METRICS = {
  operationId: "metrics",
  tags: ["admin"],
  summary: "Prometheus metrics of this instance",
  produces: ["text/plain"],
  response: { 200: z.string().meta({ description: "The Prometheus text exposition format" }) },
};

/** The operators' routes: health, and the Prometheus metrics with the catalogue's gauges. */
export const operations = appPlugin(
  "operations",
  async (
    app,
    options: { catalog: CatalogHolder; metrics: Metrics; health?: HealthMonitor; mode: Config["MODE"] },
  ) => {
    const { catalog, metrics, mode } = options;
    catalog.onReplace((replaced) => {
      metrics.catalogEvents.set(replaced.events.length);
      metrics.catalogMarkets.set(replaced.markets.length);
      metrics.catalogVersion.set(replaced.version);
    });
    registerHealthRoutes(app, {
      catalog,
      health: options.health ?? new HealthMonitor({ catalogue: catalogueProbe(catalog) }, { mode }),
    });
    app.get("/metrics", { schema: METRICS }, async (_request, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
);
