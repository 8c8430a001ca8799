/**
 * The chaos suite's own processes: a PostgreSQL and a Redis started for the run (so they can be
 * stopped and started again), free ports, temporary directories, and one cleanup that ends every
 * process and removes every directory however the run ends (an exception, Ctrl-C, a failed check).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { Client } from "pg";
import { sleep } from "../support.js";

/** Everything to undo at the end: live children (with how to stop them for good) and directories. */
const children = new Map<ChildProcess, NodeJS.Signals>();
const directories = new Set<string>();

/** Ends every child still running (with its final signal) and removes every temporary directory; synchronous, so it runs on `exit` too. */
export function cleanupNow(): void {
  for (const [child, signal] of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      // A stopped process (the chain stall) must be continued, or it never handles a catchable signal.
      try {
        process.kill(child.pid, "SIGCONT");
        process.kill(child.pid, signal);
      } catch {
        // Already gone.
      }
    }
  }
  children.clear();
  for (const dir of directories) fs.rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

let installed = false;
/** Cleans up on normal exit, on an uncaught failure, and on SIGINT/SIGTERM of this process. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on("exit", cleanupNow);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      cleanupNow();
      process.exit(130);
    });
}

/** A temporary directory removed at cleanup. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `oddsgate-chaos-${prefix}-`));
  directories.add(dir);
  return dir;
}

/** A port nobody listens on now (and, with `pair`, the next one too: the sandbox's PubSub takes it). */
export async function freePort(pair = false): Promise<number> {
  for (;;) {
    const port = await listenOnce(0);
    if (
      !pair ||
      (await listenOnce(port + 1).then(
        () => true,
        () => false,
      ))
    )
      return port;
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

/** Spawns a child whose output goes to `logFile`, registered for cleanup with `finalSignal`. */
export function spawnLogged(
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    logFile: string;
    uid?: number;
    gid?: number;
    finalSignal?: NodeJS.Signals;
  },
): ChildProcess {
  const log = fs.openSync(options.logFile, "a");
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: ["ignore", log, log],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  });
  fs.closeSync(log);
  children.set(child, options.finalSignal ?? "SIGKILL");
  child.once("exit", () => children.delete(child));
  return child;
}

/** Sends `signal` and waits for the child to exit (SIGKILL after `graceMs`). */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs = 15_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The last `lines` lines of a log, for an error message. */
export function tail(file: string, lines = 15): string {
  if (!fs.existsSync(file)) return "(no log)";
  return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** Polls `check` every `everyMs` until it holds; throws `what` after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The binaries of the newest PostgreSQL installed under /usr/lib/postgresql. */
function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => fs.existsSync(path.join(root, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error(`no PostgreSQL under ${root}/*/bin (apt-get install postgresql)`);
  return path.join(root, versions[0], "bin");
}

/** initdb refuses to run as root: when we are root, PostgreSQL runs as the `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/** A PostgreSQL cluster of this run, in a temporary directory, on a free port; `stop` and `start` restart it. */
export class OwnPostgres {
  private child: ChildProcess | undefined;
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
    private readonly user: { uid: number; gid: number } | undefined,
  ) {}

  /** `postgres://` URL of the run's database. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/oddsgate`;
  }

  static async create(): Promise<OwnPostgres> {
    const bin = postgresBin();
    const dir = tempDir("pg");
    const user = postgresUser();
    if (user) fs.chownSync(dir, user.uid, user.gid);
    const data = path.join(dir, "data");
    const init = spawnSync(
      path.join(bin, "initdb"),
      ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
      { encoding: "utf8", ...(user ?? {}) },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const made = new OwnPostgres(bin, dir, await freePort(), user);
    await made.start();
    const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${made.port}/postgres` });
    await admin.connect();
    try {
      await admin.query("create database oddsgate");
    } finally {
      await admin.end();
    }
    return made;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const log = path.join(this.dir, "postgres.log");
    this.child = spawnLogged(
      path.join(this.bin, "postgres"),
      // No fsync: nothing here survives an operating-system crash, and the disk is shared with others.
      [
        "-D",
        path.join(this.dir, "data"),
        "-p",
        String(this.port),
        "-k",
        this.dir,
        "-h",
        "127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "max_connections=200",
      ],
      { logFile: log, ...(this.user ?? {}), finalSignal: "SIGQUIT" },
    );
    const child = this.child;
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`postgres exited: ${tail(log)}`);
        const probe = new Client({
          connectionString: `postgres://postgres@127.0.0.1:${this.port}/postgres`,
          connectionTimeoutMillis: 1_000,
        });
        probe.on("error", () => {});
        try {
          await probe.connect();
          await probe.query("select 1");
          return true;
        } catch {
          return false;
        } finally {
          await probe.end().catch(() => {});
        }
      },
      30_000,
      "postgres to accept connections",
      200,
    );
  }

  /** A fast shutdown (SIGINT: sessions are ended, then a checkpoint), as `pg_ctl stop -m fast` does. */
  async stop(): Promise<void> {
    if (this.child) await stopChild(this.child, "SIGINT");
    this.child = undefined;
  }
}

/** A Redis of this run on a free port, without persistence: a restart comes back empty. */
export class OwnRedis {
  private child: ChildProcess | undefined;
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<OwnRedis> {
    const made = new OwnRedis(tempDir("redis"), await freePort());
    await made.start();
    return made;
  }

  async start(): Promise<void> {
    const log = path.join(this.dir, "redis.log");
    this.child = spawnLogged(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--dir",
        this.dir,
        "--save",
        "",
        "--appendonly",
        "no",
      ],
      { logFile: log },
    );
    const child = this.child;
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited: ${tail(log)}`);
        const redis = new Redis(this.url, {
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          connectTimeout: 500,
        });
        redis.on("error", () => {});
        try {
          await redis.connect();
          return (await redis.ping()) === "PONG";
        } catch {
          return false;
        } finally {
          redis.disconnect();
        }
      },
      10_000,
      "redis-server to answer PING",
    );
  }

  async stop(): Promise<void> {
    if (this.child) await stopChild(this.child, "SIGTERM");
    this.child = undefined;
  }
}
