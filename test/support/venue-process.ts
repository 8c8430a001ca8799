/** The venue as a process of its own, started as a user starts it, for tests that kill or restart it. */
import { type ChildProcess, spawn } from "node:child_process";

export interface VenueProcessOptions {
  dataDir: string;
  port: number;
  rpcPort: number;
  venueSeed: string;
  /** The path that must answer 200 before the venue counts as started. */
  until: "/health-check" | "/health-check/ready";
  /** More settings, as environment variables. */
  settings?: Readonly<Record<string, string>>;
}

/** Venue processes a test started; `stopAll` (in an afterEach) kills whichever still run. */
export class VenueProcesses {
  private readonly children: ChildProcess[] = [];

  /** Starts `node ...command serve` and resolves once `until` answers 200 (within 30 s). */
  async start(command: readonly string[], options: VenueProcessOptions): Promise<ChildProcess> {
    const child = spawn(process.execPath, [...command, "serve"], {
      env: {
        ...process.env,
        DATA_DIR: options.dataDir,
        PORT: String(options.port),
        RPC_PORT: String(options.rpcPort),
        SIMULATOR_PORT: "0",
        SYNC_INTERVAL: "0",
        VENUE_SEED: options.venueSeed,
        // vitest sets MODE=test in its own environment; the venue takes only its two modes.
        MODE: "development",
        RATE_LIMIT_ANONYMOUS: "0",
        LOG_LEVEL: "warn",
        ...options.settings,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    this.children.push(child);
    // A deadline, not a measurement: a loaded machine starts a venue slowly, so a minute is allowed.
    for (let attempt = 0; attempt < 600; attempt++) {
      if (child.exitCode !== null) throw new Error(`the venue exited (${child.exitCode})`);
      const up = await fetch(`http://127.0.0.1:${options.port}${options.until}`).then(
        (response) => response.ok,
        () => false,
      );
      if (up) return child;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the venue did not answer ${options.until}`);
  }

  /** Kills every venue still running. */
  async stopAll(): Promise<void> {
    for (const child of this.children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) await stopProcess(child, "SIGKILL");
    }
  }
}

/** Sends `signal` to `child` and resolves once it has exited. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}
