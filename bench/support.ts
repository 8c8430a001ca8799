/**
 * What the benches share: the built server started and stopped, a process's CPU time, autocannon runs,
 * and baselines of the machine's speed (`/health-check` req/s, a bare LiteSVM's transfers per second).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type Blockhash, generateKeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import type autocannon from "autocannon";
import { addressBytes } from "../src/chain/base58.js";
import { buildSignedTransaction } from "../src/chain/build-transaction.js";
import { createSvm, FailedTransactionMetadata } from "../src/chain/sandbox/svm.js";
import { SERVE_NODE_FLAGS } from "../src/cli/serve.js";
import type { CatalogueFile } from "../src/contract/markets.js";

const MAIN = path.resolve("dist/cli/main.js");

/** The node flags a bench's server runs with: BENCH_NODE_FLAGS when set ("" for none), else `npm start`'s. */
export function serverNodeFlags(): string[] {
  return process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [...SERVE_NODE_FLAGS];
}

export interface StartedServer {
  child: ChildProcess;
  url: string;
  rpcUrl: string;
  dataDir: string;
  /** When the process was spawned (`performance.now()`). */
  startedAt: number;
  /** From spawning the process until /health-check answered 200. */
  readyMs: number;
  /** Whether `dataDir` was made for this server (and goes with it). */
  ownsDataDir: boolean;
}

export interface ServerOptions {
  /** Settings over the bench defaults. */
  env?: Record<string, string>;
  /** An existing DATA_DIR to serve (the caller removes it), instead of a fresh one. */
  dataDir?: string;
  /** Headers of the readiness probe (a production server wants a key). */
  headers?: Record<string, string>;
  /** The command and its options (default `serve`): `replay --from ...` serves a recorded window. */
  command?: string[];
}

/** A fresh temporary DATA_DIR, removed by `stopServer`. */
export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-bench-"));
}

/** A random even port above `base`; the sandbox's PubSub takes the next one. */
export function pickPort(base: number): number {
  return base + Math.floor(Math.random() * 1000) * 2;
}

const stopping = new WeakSet<ChildProcess>();

/** Starts `oddsgate serve` (a fresh DATA_DIR and limits off unless told) and waits until /health-check answers 200. */
export async function startServer(options: ServerOptions = {}): Promise<StartedServer> {
  const { env = {}, headers = {} } = options;
  const dataDir = options.dataDir ?? tempDataDir();
  const started = performance.now();
  const port = pickPort(18_000);
  const rpcPort = pickPort(21_000);
  const child = spawn(process.execPath, [...serverNodeFlags(), MAIN, ...(options.command ?? ["serve"])], {
    env: {
      ...process.env,
      PORT: String(port),
      SIMULATOR_PORT: "0",
      RPC_PORT: String(rpcPort),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      // Limits off: this measures serving, and one client address would drain the anonymous bucket at once.
      RATE_LIMIT_ANONYMOUS: "0",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  child.once("exit", (code, signal) => {
    if (!stopping.has(child))
      console.error(`the server exited unexpectedly (code ${code}, signal ${signal})`);
  });
  // A bench that dies before `stopServer` (an exception, its output piped to `head`) must not leave
  // the server running to skew the benches after it.
  const stopWithBench = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stopWithBench);
  child.once("exit", () => process.off("exit", stopWithBench));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const healthy = await fetch(`${url}/health-check`, { headers }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (healthy) break;
    await sleep(20);
  }
  return {
    child,
    url,
    rpcUrl: `http://127.0.0.1:${rpcPort}`,
    dataDir,
    startedAt: started,
    readyMs: performance.now() - started,
    ownsDataDir: options.dataDir === undefined,
  };
}

/** Stops the server and removes its DATA_DIR if it made one. */
export async function stopServer(server: StartedServer): Promise<void> {
  const { child } = server;
  if (child.exitCode === null && child.signalCode === null) {
    stopping.add(child);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  if (server.ownsDataDir) fs.rmSync(server.dataDir, { recursive: true, force: true });
}

/** User plus system CPU time of a process so far, in microseconds (Linux /proc). */
export function cpuTimeUs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Nanoseconds on a CPU of each thread of `pid` (Linux scheduler statistics), by thread id. */
export function threadsRunNs(pid: number | "self" = "self"): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(tid, Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so every run does the same work. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const AUTOCANNON = pathToFileURL(path.resolve("node_modules/autocannon/autocannon.js")).href;
// It runs in its own plain Node process (not this tsx-loaded one), so the load generator is as fast as
// it can be and competes with the server only as a separate process would.
const AUTOCANNON_SCRIPT = `
import autocannon from ${JSON.stringify(AUTOCANNON)};
const result = await autocannon(JSON.parse(process.argv[1]));
process.stdout.write(JSON.stringify(result));
`;

/** Runs autocannon with `options` in a process of its own; resolves with its result. */
export function runAutocannon(options: autocannon.Options): Promise<autocannon.Result> {
  const argv = ["--input-type=module", "-e", AUTOCANNON_SCRIPT, JSON.stringify(options)];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(error);
      resolve(JSON.parse(stdout) as autocannon.Result);
    });
  });
}

/** GET /health-check req/s of the server at `url` over `seconds` (after a one-second warm-up): the HTTP baseline. */
export async function healthCheckRate(url: string, seconds = 5, connections = 50): Promise<number> {
  await runAutocannon({ url: `${url}/health-check`, duration: 1, connections });
  const result = await runAutocannon({ url: `${url}/health-check`, duration: seconds, connections });
  if (result.errors + result.timeouts + result.non2xx > 0) throw new Error("/health-check failed under load");
  return result.requests.average;
}

/** This machine's baselines, measured now: a demo server's `/health-check` req/s and raw LiteSVM tx/s. */
export async function machineBaselines(): Promise<string> {
  const health = await machineHealthRate();
  const litesvm = await rawLiteSvmRate();
  return `/health-check ${health.toFixed(0)} req/s, raw LiteSVM ${litesvm.toFixed(0)} tx/s`;
}

/** A demo server's `/health-check` req/s, measured now on a server started for it. */
export async function machineHealthRate(): Promise<number> {
  const server = await startServer();
  return healthCheckRate(server.url, 3).finally(() => stopServer(server));
}

/**
 * SOL transfers per second a bare LiteSVM executes in this process, configured as the sandbox runs it
 * (signatures verified): the chain baseline.
 */
export async function rawLiteSvmRate(transactions = 5_000): Promise<number> {
  const svm = createSvm();
  const payer = await generateKeyPairSigner();
  const recipient = (await generateKeyPairSigner()).address;
  svm.airdrop(addressBytes(payer.address), 1_000_000_000_000n);
  const lifetime = { blockhash: svm.latestBlockhash() as Blockhash, lastValidBlockHeight: 0n };
  const wires: Uint8Array[] = [];
  for (let i = 0; i < transactions; i++) {
    // Distinct amounts keep every signature unique.
    const transfer = getTransferSolInstruction({
      source: payer,
      destination: recipient,
      amount: 1_000_000 + i,
    });
    wires.push(await buildSignedTransaction(payer, [transfer], lifetime));
  }
  const started = performance.now();
  for (const wire of wires) {
    if (svm.sendVersionedTransaction(wire) instanceof FailedTransactionMetadata)
      throw new Error("a raw LiteSVM transfer failed");
  }
  return (transactions * 1000) / (performance.now() - started);
}

/** Imports `catalogue` into the data directory with the built CLI, as an operator would. */
export function importCatalogue(dataDir: string, catalogue: CatalogueFile): void {
  const file = path.join(dataDir, "catalogue.json");
  fs.writeFileSync(file, JSON.stringify(catalogue));
  execFileSync(process.execPath, [MAIN, "import", file], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ["ignore", "ignore", "inherit"],
  });
  fs.rmSync(file);
}

/** The resident memory of process `pid` in MB (VmRSS from /proc). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Milliseconds from the server's spawn until /health-check/ready answered 200 (everything started). */
export async function untilReady(server: StartedServer): Promise<number> {
  for (;;) {
    const ready = await fetch(`${server.url}/health-check/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return performance.now() - server.startedAt;
    await sleep(20);
  }
}
