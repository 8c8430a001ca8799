/**
 * The venue's health, for load balancers and for people: whether the process answers (live), whether
 * everything needed to trade is in place and up (ready), and which part is not. Dependencies that
 * take I/O to check are probed at most once per `cacheMs`, each within `timeoutMs` and never twice at
 * once, so a load balancer polling hard costs one `select 1`, one Redis PING and one getSlot a second.
 */

import { type Kysely, sql } from "kysely";
import { z } from "zod";
import type { Chain } from "../chain/chain.js";
import type { Config } from "../config.js";
import type { CatalogHolder } from "../markets/catalog-holder.js";
import { redisClient } from "../storage/redis.js";
import type { UpstreamClient } from "../upstream/client.js";

/** How long a probe's answer stands before the next request probes again. */
export const HEALTH_CACHE_MS = 1_000;
/** How long one probe may take before its part is reported `timeout`. */
export const HEALTH_TIMEOUT_MS = 1_000;
/**
 * A required part whose probe has not answered for this long is taken as wedged (a dependency's client
 * that will not recover by itself, as a PostgreSQL pool can after a restart): the process is not live.
 */
export const PROBE_STUCK_MS = 60_000;

/** A chain whose slot has not moved for this long is reported `stalled` (slots are 400 ms). */
export const CHAIN_STALL_MS = 10_000;

export const HealthPart = z
  .object({
    ok: z.boolean(),
    required: z.boolean().describe("whether readiness waits for this part (the others only degrade)"),
    state: z
      .string()
      .describe(
        "loading, loaded, starting, ready, failed (start-up work); up, down, timeout, stalled, unknown " +
          "(probed dependencies); closed, open, halfOpen (the upstream's circuit breaker); for the " +
          "embedded sandbox chain also fenced (another instance took its lease: this one's chain state " +
          "is stale, and it is not live) and unconfirmed (its lease went unrenewed for a whole TTL)",
      ),
    latencyMs: z.number().optional().describe("how long the probe took"),
    slot: z.number().optional().describe("the chain's slot"),
    events: z.number().optional(),
    markets: z.number().optional(),
    version: z.number().optional().describe("the catalogue's version"),
    loadedAt: z.string().optional().describe("when the catalogue in use was loaded (ISO 8601)"),
    detail: z
      .string()
      .optional()
      .describe("the failure as the dependency reported it (development mode only)"),
  })
  .meta({ id: "HealthPart" });
export type HealthPart = z.infer<typeof HealthPart>;
export type PartState = Omit<HealthPart, "required">;

export const HealthReport = z
  .object({
    status: z
      .enum(["ok", "starting", "degraded"])
      .describe("`degraded` when any part is down, else `starting` until start-up work is done, else `ok`"),
    live: z
      .boolean()
      .describe(
        "false once a required part has left a probe unanswered for over a minute (a connection pool that will not recover on its own), or the embedded sandbox chain was fenced (another instance took its lease): restart the process",
      ),
    ready: z.boolean().describe("every required part is ok: this instance can take trades"),
    checkedAt: z.string().describe("when the dependencies were last probed (ISO 8601)"),
    parts: z.object({
      catalogue: HealthPart.optional(),
      chainAccounts: HealthPart.optional().describe(
        "the chain accounts of tokenized markets, and their venue",
      ),
      storage: HealthPart.optional(),
      chain: HealthPart.optional(),
      redis: HealthPart.optional().describe("present when REDIS_URL is set"),
      upstream: HealthPart.optional(),
    }),
  })
  .meta({ id: "HealthReport" });
export type HealthReport = z.infer<typeof HealthReport>;
export type PartName = keyof HealthReport["parts"];

/** A check of one part. Checks marked `io` are bounded in time; every check runs at most once per `cacheMs`. */
export interface Probe {
  readonly required: boolean;
  readonly io: boolean;
  check(): PartState | Promise<PartState>;
  /** Calls `listener` when the part changes in a way the next report must show at once. */
  onChange?(listener: () => void): void;
  /** Why the part will not recover while this process runs (read without I/O), or undefined: the process is then not live. */
  fatal?(): string | undefined;
  close?(): Promise<void>;
}

/**
 * Probes parts and composes the report the health routes answer. The report and its one-line summary
 * are composed once per probing, so a request between probings costs no more than a lookup.
 */
export class HealthMonitor {
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private current: { at: number; epoch: number; report: HealthReport; summary: string } | undefined;
  /** Bumped when a part announces a change: a report composed before it is stale. */
  private epoch = 0;
  private refreshing: Promise<void> | undefined;
  /** How long a required part may leave a probe unanswered before the process is not live. */
  readonly stuckMs: number;
  /** Probes still running, and since when: one a required part leaves unanswered past `stuckMs` ends liveness. */
  private readonly inFlight = new Map<PartName, { running: Promise<PartState>; since: number }>();

  constructor(
    private readonly probes: Partial<Record<PartName, Probe>>,
    private readonly options: {
      mode: Config["MODE"];
      cacheMs?: number;
      timeoutMs?: number;
      stuckMs?: number;
    },
  ) {
    this.cacheMs = options.cacheMs ?? HEALTH_CACHE_MS;
    this.timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
    this.stuckMs = options.stuckMs ?? PROBE_STUCK_MS;
    for (const probe of Object.values(probes)) {
      probe.onChange?.(() => {
        this.epoch++;
      });
    }
  }

  /** A report whose probes are at most `cacheMs` old, probing first (within `timeoutMs`) if they are older. */
  async report(): Promise<HealthReport> {
    return (await this.fresh()).report;
  }

  /** The report in one line (see `summarize`), as fresh as `report`'s. */
  async summary(): Promise<string> {
    return (await this.fresh()).summary;
  }

  /** The report from the last probes, at once; probes again in the background when they are stale. */
  latest(): HealthReport {
    if (!this.isFresh()) void this.refresh();
    return this.current?.report ?? this.compose(Date.now(), this.withoutIo());
  }

  /** The parts that need no I/O, for a report asked for before the first probing ends. */
  private withoutIo(): Partial<Record<PartName, PartState>> {
    const states: Partial<Record<PartName, PartState>> = {};
    for (const [name, probe] of Object.entries(this.probes) as [PartName, Probe][]) {
      if (probe.io) continue;
      const state = probe.check();
      if (!(state instanceof Promise)) states[name] = state;
    }
    return states;
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.probes).map((probe) => probe.close?.()));
  }

  private isFresh(): boolean {
    const current = this.current;
    return current !== undefined && current.epoch === this.epoch && Date.now() - current.at < this.cacheMs;
  }

  private async fresh(): Promise<NonNullable<HealthMonitor["current"]>> {
    if (!this.isFresh()) await this.refresh();
    // Again when a part changed while the probing ran: what it read may predate the change.
    while (this.current?.epoch !== this.epoch) await this.refresh();
    return this.current;
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const at = Date.now();
      const epoch = this.epoch;
      const entries = Object.entries(this.probes) as [PartName, Probe][];
      const states = await Promise.all(entries.map(([name, probe]) => this.bounded(name, probe)));
      const report = this.compose(at, Object.fromEntries(entries.map(([name], i) => [name, states[i]])));
      this.current = { at, epoch, report, summary: summarize(report) };
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** One probe's answer within `timeoutMs`; a probe still running from before is waited for, not doubled. */
  private async bounded(name: PartName, probe: Probe): Promise<PartState> {
    if (!probe.io) {
      try {
        return await probe.check();
      } catch (error) {
        return { ok: false, state: "down", detail: messageOf(error) };
      }
    }
    let running = this.inFlight.get(name)?.running;
    if (!running) {
      running = Promise.resolve()
        .then(() => probe.check())
        .catch((error: unknown) => ({ ok: false, state: "down", detail: messageOf(error) }))
        .finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, { running, since: Date.now() });
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<PartState>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, state: "timeout" }), this.timeoutMs);
    });
    try {
      return await Promise.race([running, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private compose(at: number, probed: Partial<Record<PartName, PartState>>): HealthReport {
    const parts: HealthReport["parts"] = {};
    for (const [name, probe] of Object.entries(this.probes) as [PartName, Probe][]) {
      const { detail, ...shown } = probed[name] ?? { ok: false, state: "unknown" };
      // Errors can name hosts, ports and paths: only a development deployment shows them.
      parts[name] = {
        ...shown,
        required: probe.required,
        ...(detail !== undefined && this.options.mode === "development" ? { detail } : {}),
      };
    }
    const all = Object.values(parts);
    const ready = all.every((part) => part.ok || !part.required);
    const stuck = this.stuckParts();
    const down = all.some((part) => !part.ok && !STARTING.has(part.state));
    return {
      status: down ? "degraded" : ready ? "ok" : "starting",
      live: stuck.length === 0 && this.fatalParts().length === 0,
      ready,
      checkedAt: new Date(at).toISOString(),
      parts,
    };
  }

  /** Parts that will not recover while this process runs (see `Probe.fatal`), each with why; read now, without I/O. */
  fatalParts(): { name: PartName; reason: string }[] {
    const fatal: { name: PartName; reason: string }[] = [];
    for (const [name, probe] of Object.entries(this.probes) as [PartName, Probe][]) {
      const reason = probe.fatal?.();
      if (reason !== undefined) fatal.push({ name, reason });
    }
    return fatal;
  }

  /** Required parts whose probe has gone unanswered for over `stuckMs` at `at`. */
  stuckParts(at = Date.now()): PartName[] {
    const stuck: PartName[] = [];
    for (const [name, { since }] of this.inFlight)
      if (this.probes[name]?.required && at - since > this.stuckMs) stuck.push(name);
    return stuck;
  }
}

/** States of a part that is on its way up rather than down. */
const STARTING = new Set(["loading", "starting", "unknown"]);

/** The report in one line: `ok`, `starting: chainAccounts`, `degraded: redis, upstream; starting: ...`. */
export function summarize(report: HealthReport): string {
  const entries = Object.entries(report.parts);
  const down = entries.filter(([, part]) => !part.ok && !STARTING.has(part.state)).map(([name]) => name);
  const starting = entries.filter(([, part]) => !part.ok && STARTING.has(part.state)).map(([name]) => name);
  const clauses = [
    ...(down.length > 0 ? [`degraded: ${down.join(", ")}`] : []),
    ...(starting.length > 0 ? [`starting: ${starting.join(", ")}`] : []),
  ];
  return clauses.length > 0 ? clauses.join("; ") : "ok";
}

/** What keeps an instance from being ready, for a person: `chainAccounts starting, storage down`. */
export function notReadyReasons(report: HealthReport): string {
  return Object.entries(report.parts)
    .filter(([, part]) => part.required && !part.ok)
    .map(([name, part]) => `${name} ${part.state}`)
    .join(", ");
}

/** The catalogue: loaded or not, and which one. */
export function catalogueProbe(catalog: CatalogHolder): Probe {
  let loadedAt: string | undefined;
  catalog.onReplace(() => {
    loadedAt = new Date().toISOString();
  });
  return {
    required: true,
    io: false,
    onChange: (listener) => catalog.onReplace(listener),
    check() {
      const current = catalog.current;
      if (!current) return { ok: false, state: "loading" };
      return {
        ok: true,
        state: "loaded",
        events: current.events.length,
        markets: current.markets.length,
        version: current.version,
        ...(loadedAt ? { loadedAt } : {}),
      };
    },
  };
}

/** Start-up work done in the background after the listeners answer: starting, then ready (or failed). */
export class StartupWork implements Probe {
  readonly required = true;
  readonly io = false;
  private state: "starting" | "ready" | "failed" = "starting";
  private failure: string | undefined;
  private readonly listeners: (() => void)[] = [];

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  succeeded(): void {
    this.state = "ready";
    for (const listener of this.listeners) listener();
  }

  /** Marks the work failed, unless it has succeeded before (a later run failing leaves it ready). */
  failed(error: unknown): void {
    if (this.state === "ready") return;
    this.state = "failed";
    this.failure = messageOf(error);
    for (const listener of this.listeners) listener();
  }

  check(): PartState {
    return {
      ok: this.state === "ready",
      state: this.state,
      ...(this.failure && this.state === "failed" ? { detail: this.failure } : {}),
    };
  }
}

/** Storage answers a `select 1`. */
export function storageProbe<DB>(db: Kysely<DB>): Probe {
  return {
    required: true,
    io: true,
    check: () => timed(async () => void (await sql`select 1`.execute(db))),
  };
}

/**
 * Redis answers a PING, on a connection of the probe's own: the rate store's and the stream
 * coordinators' are busy with their work, and a dead one is what this reports.
 */
export async function redisProbe(url: string, timeoutMs = HEALTH_TIMEOUT_MS): Promise<Probe> {
  const redis = await redisClient(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    // Back within a second of Redis coming back, so the report recovers with it.
    retryStrategy: (times) => Math.min(times * 100, 1_000),
  });
  // ioredis keeps reconnecting in the background; its last error says why a PING fails.
  let lastError: string | undefined;
  redis.on("error", (error: Error) => {
    lastError = error.message;
  });
  redis.on("ready", () => {
    lastError = undefined;
  });
  return {
    required: false,
    io: true,
    check: () =>
      timed(async () => {
        try {
          if (redis.status === "wait") await redis.connect();
          await redis.ping();
        } catch (error) {
          throw new Error(lastError ?? messageOf(error));
        }
      }),
    async close() {
      redis.disconnect();
    },
  };
}

/** The upstream: its circuit breaker's state, read without a request. */
export function upstreamProbe(client: Pick<UpstreamClient, "circuitState">): Probe {
  return {
    required: false,
    io: false,
    check() {
      const state = client.circuitState;
      return { ok: state === "closed", state };
    },
  };
}

/**
 * The chain answers getSlot, and its slot moves; and, for a chain that can tell (the embedded sandbox),
 * its state is current: `fenced` once another instance took its lease (then the process is not live
 * either: it will never be the writer again, and a restart either takes the lease or says which
 * SOLANA_RPC_URL to use), `unconfirmed` while its lease goes unrenewed.
 */
export function chainProbe(
  chain: Pick<Chain, "getSlot" | "unhealthy" | "onUnhealthy">,
  stallMs = CHAIN_STALL_MS,
): Probe {
  let seen: { slot: bigint; since: number } | undefined;
  return {
    required: true,
    io: true,
    ...(chain.onUnhealthy ? { onChange: (listener: () => void) => void chain.onUnhealthy?.(listener) } : {}),
    fatal() {
      const unhealthy = chain.unhealthy?.();
      return unhealthy?.state === "fenced" ? unhealthy.message : undefined;
    },
    async check() {
      const unhealthy = chain.unhealthy?.();
      if (unhealthy) return { ok: false, state: unhealthy.state, detail: unhealthy.message };
      const started = performance.now();
      const slot = await chain.getSlot();
      const latencyMs = Math.round(performance.now() - started);
      if (seen?.slot !== slot) seen = { slot, since: Date.now() };
      const stalled = Date.now() - seen.since > stallMs;
      return { ok: !stalled, state: stalled ? "stalled" : "up", slot: Number(slot), latencyMs };
    },
  };
}

async function timed(work: () => Promise<void>): Promise<PartState> {
  const started = performance.now();
  await work();
  return { ok: true, state: "up", latencyMs: Math.round(performance.now() - started) };
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}
