/**
 * The health routes every listener answers: `/health-check` as the contract has it (text, for load
 * balancers that read a status code and people who read one line), `/health-check/live` and
 * `/health-check/ready` for orchestrators that tell the two apart, both with the whole report.
 */
import { z } from "zod";
import { ApiError, ErrorBody } from "../contract/errors.js";
import type { ZodApp } from "../http/types.js";
import { type CatalogHolder, CatalogNotReadyError } from "../markets/catalog-holder.js";
import { type HealthMonitor, HealthReport, notReadyReasons } from "./health.js";

const HEALTH_CHECK = {
  operationId: "handler_health_check",
  tags: ["admin"],
  summary: "Whether this listener answers, in one line",
  description:
    "200 once the market catalogue has loaded (reads are answered), 503 `mint_info_not_initialized` " +
    "before (the reference's codes, with `reason` `not_ready`). The text says " +
    "what is not in place: `ok`, `starting: chainAccounts` while start-up work runs in the background, " +
    "`degraded: redis, upstream` when a dependency is down (both when both hold). " +
    "`/health-check/ready` answers 200 only when the instance can also trade. 503 `amm_map_lagging` once " +
    "the instance will not recover while it runs (as `/health-check/live` says): its embedded sandbox " +
    "chain was fenced (another instance took the chain's lease), so nothing should be sent to it.",
  produces: ["text/plain"],
  response: { 200: z.string().meta({ example: "ok" }), 503: ErrorBody },
};

const HEALTH_LIVE = {
  operationId: "health_live",
  tags: ["admin"],
  summary: "Whether the process should keep running: 200 with the health report, or 503",
  description:
    "For a liveness probe: answers at once from the last probes (never waits for a dependency). 200 " +
    "whatever the dependencies' state, except when a required part (storage, the chain) has left a probe " +
    "unanswered for over a minute (its client is wedged and will not recover by itself), or the embedded " +
    "sandbox chain was fenced (another instance took the chain's lease: this one's state is stale for " +
    "good): then 503 `not_ready` naming it asks the orchestrator to restart the process, which on start " +
    "either takes the lease or refuses, naming the SOLANA_RPC_URL of the instance that holds it.",
  response: { 200: HealthReport, 503: ErrorBody },
};

const HEALTH_READY = {
  operationId: "health_ready",
  tags: ["admin"],
  summary: "Whether this instance can take trades",
  description:
    "For a load balancer or readiness probe: 200 with the health report when the catalogue is loaded, " +
    "start-up work is done and storage and the chain are up; else 503 `not_ready` naming what is not " +
    "(`chain fenced` when another instance took the sandbox chain's lease, `chain unconfirmed` while " +
    "the lease goes unrenewed: no chain state is served or signed from then). " +
    "Redis and the upstream only degrade the report: the API serves without them.",
  response: { 200: HealthReport, 503: ErrorBody },
};

/** Registers `/health-check`, `/health-check/live` and `/health-check/ready`. */
export function registerHealthRoutes(app: ZodApp, deps: { catalog: CatalogHolder; health: HealthMonitor }) {
  app.get("/health-check", { schema: HEALTH_CHECK }, async (_request, reply) => {
    // The contract's 503, in the reference's codes (HealthCheckServiceUnavailableCode): the markets'
    // mints are not known yet, or the instance's state has fallen behind for good.
    if (!deps.catalog.current)
      throw new ApiError("mint_info_not_initialized", new CatalogNotReadyError().message, "not_ready");
    const fatal = deps.health.fatalParts();
    if (fatal.length > 0)
      throw new ApiError("amm_map_lagging", `not live: ${fatalReasons(fatal)}`, "not_ready");
    return reply.type("text/plain; charset=utf-8").send(await deps.health.summary());
  });
  app.get("/health-check/live", { schema: HEALTH_LIVE }, async () => {
    const report = deps.health.latest();
    // Read now, not from the last probes: a fenced chain is said at once.
    const fatal = deps.health.fatalParts();
    if (fatal.length > 0)
      throw new ApiError("not_ready", `not live: ${fatalReasons(fatal)}; restart the process`);
    if (!report.live) {
      const stuck = deps.health.stuckParts().join(", ") || "a required part";
      throw new ApiError(
        "not_ready",
        `not live: ${stuck} left a probe unanswered for over ${deps.health.stuckMs / 1000} s; restart the process`,
      );
    }
    return report;
  });
  app.get("/health-check/ready", { schema: HEALTH_READY }, async () => {
    const report = await deps.health.report();
    if (!report.ready) throw new ApiError("not_ready", `not ready: ${notReadyReasons(report)}`);
    return report;
  });
}

/** The parts that will not recover while the process runs, for a person: `chain: Node is unhealthy: ...`. */
function fatalReasons(fatal: readonly { name: string; reason: string }[]): string {
  return fatal.map(({ name, reason }) => `${name}: ${reason}`).join("; ");
}
