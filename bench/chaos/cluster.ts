/**
 * The deployment under test: one simulator (the upstream) and two venue instances, each a process of
 * its own (so `kill -9` is real), on the run's PostgreSQL and Redis. Instance A runs the sandbox chain
 * (it holds the database's chain lease) and B uses it over JSON-RPC (`SOLANA_RPC_URL`), as a second
 * instance must: killing A takes the chain down with it until A is back.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { freePort, spawnLogged, stopChild, tail, tempDir, until } from "./processes.js";

const MAIN = path.resolve("dist/cli/main.js");
/** Every Redis key of the deployment starts with this. */
export const REDIS_PREFIX = "chaos:";
/** The venue seed: the demo tokens' addresses derive from it. */
export const VENUE_SEED = "chaos-bench-venue";
/** The key that names the `/api/v1/ws` leader (redis-market-feed.ts). */
const WS_LEADER_KEY = `${REDIS_PREFIX}market-stream:leader`;

export type InstanceName = "A" | "B";

interface Instance {
  name: InstanceName;
  port: number;
  url: string;
  env: Record<string, string>;
  logFile: string;
  child: ChildProcess | undefined;
}

/** The simulator and the two instances, started, killed and restarted by name. */
export class Cluster {
  readonly instances: Record<InstanceName, Instance>;
  /** Each instance's id in the ws leader key while it leads, once learned (a restart forgets it). */
  private readonly leaderIds: Record<InstanceName, string | undefined> = { A: undefined, B: undefined };
  private simulator: ChildProcess | undefined;
  private readonly redis: Redis;
  /** Processes killed on purpose: any other exit is a crash, reported with its log. */
  private readonly killing = new WeakSet<ChildProcess>();
  /** Instances that exited without being told to, with the end of their log. */
  readonly crashes: { name: InstanceName; at: number; how: string; log: string }[] = [];

  private constructor(
    private readonly dir: string,
    readonly simulatorOrigin: string,
    readonly rpcUrl: string,
    ports: Record<InstanceName, number>,
    shared: Record<string, string>,
  ) {
    const instance = (name: InstanceName, own: Record<string, string>): Instance => ({
      name,
      port: ports[name],
      url: `http://127.0.0.1:${ports[name]}`,
      env: { ...shared, ...own, PORT: String(ports[name]) },
      logFile: path.join(dir, `instance-${name}.log`),
      child: undefined,
    });
    this.instances = {
      A: instance("A", { RPC_PORT: new URL(rpcUrl).port }),
      B: instance("B", { SOLANA_RPC_URL: rpcUrl }),
    };
    this.redis = new Redis(shared.REDIS_URL as string, { maxRetriesPerRequest: 1 });
    this.redis.on("error", () => {});
  }

  /** Starts the simulator, then A (which loads the demo catalogue and creates the chain), then B. */
  static async start(options: { databaseUrl: string; redisUrl: string }): Promise<Cluster> {
    if (!fs.existsSync(MAIN)) throw new Error("dist/cli/main.js is missing: run `npm run build` first");
    const dir = tempDir("cluster");
    const simulatorPort = await freePort();
    const rpcPort = await freePort(true);
    const ports = { A: await freePort(), B: await freePort() };
    const simulatorOrigin = `http://127.0.0.1:${simulatorPort}`;
    const shared = {
      HOST: "127.0.0.1",
      MODE: "development",
      DATA_DIR: path.join(dir, "data"),
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      REDIS_PREFIX,
      UPSTREAM_URL: `${simulatorOrigin}/trade-api/v2`,
      VENUE_SEED,
      // The catalogue is the simulator's own: a sync would only cost CPU the faults are measured against.
      SYNC_INTERVAL: "0",
      EXPLORER: "false",
      // Every request of this load comes from one address: limits and per-client bounds off.
      RATE_LIMIT_ANONYMOUS: "0",
      FIRM_QUOTES_PER_WALLET: "0",
      FIRM_QUOTES_PER_CLIENT: "0",
      FIRM_QUOTE_POOL_SHARE_BPS: "0",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
    };
    const cluster = new Cluster(dir, simulatorOrigin, `http://127.0.0.1:${rpcPort}`, ports, shared);
    await cluster.startSimulator(options.databaseUrl, simulatorPort);
    cluster.spawn("A");
    await cluster.waitReady("A", 120_000);
    // A is alone: the ws leader key it holds is its id.
    await until(
      async () => (await cluster.redis.get(WS_LEADER_KEY)) !== null,
      10_000,
      "A to lead /api/v1/ws",
    );
    cluster.leaderIds.A = (await cluster.redis.get(WS_LEADER_KEY)) ?? undefined;
    cluster.spawn("B");
    await cluster.waitReady("B", 120_000);
    return cluster;
  }

  /** The simulator's trade-api base URL. */
  get upstreamUrl(): string {
    return `${this.simulatorOrigin}/trade-api/v2`;
  }

  private async startSimulator(databaseUrl: string, port: number): Promise<void> {
    const logFile = path.join(this.dir, "simulator.log");
    this.simulator = spawnLogged(
      process.execPath,
      ["--import", "tsx", path.resolve("bench/chaos/simulator.ts")],
      { env: { ...process.env, DATABASE_URL: databaseUrl, CHAOS_SIMULATOR_PORT: String(port) }, logFile },
    );
    const child = this.simulator;
    await until(
      () => {
        if (child.exitCode !== null) throw new Error(`the simulator exited: ${tail(logFile)}`);
        return fs.existsSync(logFile) && fs.readFileSync(logFile, "utf8").includes("simulator ready");
      },
      60_000,
      "the simulator",
    );
  }

  /** Spawns `oddsgate serve` for the instance (its old process must be gone). */
  spawn(name: InstanceName): void {
    const instance = this.instances[name];
    fs.appendFileSync(instance.logFile, `--- started ${new Date().toISOString()}\n`);
    const child = spawnLogged(process.execPath, [MAIN, "serve"], {
      env: { ...process.env, ...instance.env },
      logFile: instance.logFile,
      finalSignal: "SIGKILL",
    });
    instance.child = child;
    child.once("exit", (code, signal) => {
      if (this.killing.has(child)) return;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      const log = tail(instance.logFile, 8);
      this.crashes.push({ name, at: Date.now(), how, log });
      console.log(`  instance ${name} exited on its own (${how}); its log ends:\n${log}`);
    });
    // A new process has a new id in the leader key.
    this.leaderIds[name] = undefined;
  }

  /** Waits until the instance answers /health-check/ready with 200 (it can trade). */
  async waitReady(name: InstanceName, timeoutMs: number): Promise<void> {
    const instance = this.instances[name];
    const child = instance.child;
    await until(
      async () => {
        if (!child || child.exitCode !== null || child.signalCode !== null)
          throw new Error(`instance ${name} exited:\n${tail(instance.logFile)}`);
        return fetch(`${instance.url}/health-check/ready`, { signal: AbortSignal.timeout(1_000) }).then(
          (response) => response.status === 200,
          () => false,
        );
      },
      timeoutMs,
      `instance ${name} to be ready`,
      200,
    );
  }

  /** The instances whose process is not running (killed, or crashed). */
  dead(): InstanceName[] {
    return (["A", "B"] as const).filter((name) => {
      const child = this.instances[name].child;
      return !child || child.exitCode !== null || child.signalCode !== null;
    });
  }

  /** `kill -9`, and waits until the process is gone. */
  async kill(name: InstanceName): Promise<void> {
    const child = this.instances[name].child;
    if (child) {
      this.killing.add(child);
      await stopChild(child, "SIGKILL");
    }
  }

  /** SIGSTOP: the process stands still (its chain, HTTP and keeper with it) until `resume`. */
  pause(name: InstanceName): void {
    this.instances[name].child?.kill("SIGSTOP");
  }

  resume(name: InstanceName): void {
    this.instances[name].child?.kill("SIGCONT");
  }

  /** Sets the simulator's faults (PUT /_sim/faults), or clears them with an empty list. */
  async upstreamFaults(rules: object[]): Promise<void> {
    const url = `${this.simulatorOrigin}/_sim/faults`;
    const response =
      rules.length === 0
        ? await fetch(url, { method: "DELETE" })
        : await fetch(url, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(rules),
          });
    if (!response.ok) throw new Error(`/_sim/faults answered ${response.status}`);
  }

  /**
   * Which instance leads `/api/v1/ws` now, from the leader key: an id seen while only one instance
   * could hold it is that instance's; a new id belongs to the instance whose id is not known (the
   * one restarted since). Undefined while nobody leads or it cannot be told.
   */
  async wsLeader(): Promise<InstanceName | undefined> {
    const id = await this.redis.get(WS_LEADER_KEY).catch(() => null);
    if (id === null) return undefined;
    for (const name of ["A", "B"] as const) if (this.leaderIds[name] === id) return name;
    const unknown = (["A", "B"] as const).filter((name) => this.leaderIds[name] === undefined);
    if (unknown.length !== 1) return undefined;
    const name = unknown[0] as InstanceName;
    this.leaderIds[name] = id;
    return name;
  }

  /**
   * Makes `name` the ws leader if it is not: the other instance is paused past the lead's lease
   * (1.5 s) so that `name` claims it, then continued. Returns whether a handover was needed.
   */
  async handLeadTo(name: InstanceName): Promise<boolean> {
    await until(async () => (await this.wsLeader()) !== undefined, 10_000, "a ws leader");
    if ((await this.wsLeader()) === name) return false;
    const other: InstanceName = name === "A" ? "B" : "A";
    this.pause(other);
    try {
      await until(
        async () => (await this.redis.get(WS_LEADER_KEY)) !== this.leaderIds[other],
        10_000,
        "the lead to move",
      );
    } finally {
      this.resume(other);
    }
    if ((await this.wsLeader()) !== name) throw new Error(`could not hand the ws lead to ${name}`);
    return true;
  }

  /**
   * After `dead` was killed: waits until the leader key names someone else (the other instance, as
   * `dead` is gone) and learns that id as the other's. Resolves with the milliseconds it took (0 when
   * `dead` did not lead), or undefined when nobody took the lead within 10 s.
   */
  async leadAfterDeath(dead: InstanceName): Promise<number | undefined> {
    const started = Date.now();
    const old = this.leaderIds[dead];
    const other: InstanceName = dead === "A" ? "B" : "A";
    for (;;) {
      const id = await this.redis.get(WS_LEADER_KEY).catch(() => null);
      if (id !== null && id !== old) {
        this.leaderIds[other] = id;
        return Date.now() - started;
      }
      if (Date.now() - started > 10_000) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops the instances (SIGTERM, as an operator would), then the simulator. */
  async stop(): Promise<void> {
    for (const name of ["B", "A"] as const) {
      const child = this.instances[name].child;
      if (child) {
        this.killing.add(child);
        child.kill("SIGCONT");
        await stopChild(child, "SIGTERM");
      }
    }
    if (this.simulator) await stopChild(this.simulator, "SIGTERM");
    this.redis.disconnect();
  }

  /** The end of an instance's log, for a failure report. */
  logTail(name: InstanceName | "simulator", lines = 20): string {
    return tail(
      name === "simulator" ? path.join(this.dir, "simulator.log") : this.instances[name].logFile,
      lines,
    );
  }
}
