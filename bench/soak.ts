/**
 * Memory under a steady mixed load. Starts the built server (`dist/`) on the demo catalogue or a
 * generated one of `--markets` markets, reports when reads are answered (/health-check 200) and when
 * everything is ready (/health-check/ready 200) with the RSS then, and runs, for `--duration` seconds:
 * event reads with nested markets, quote-only `GET /order` buys of the prediction venue's outcome mints,
 * `--clients` stream clients (half on /api/v1/ws following five markets' prices and trades, half on
 * /quote-stream following one outcome pair each) and the periodic sync from the upstream every `--sync`
 * seconds, which changes prices and so reloads the catalogue. It prints the RSS every ten seconds,
 * the catalogue reloads seen and the requests answered, then RSS after the first minute against the end.
 * The upstream is the simulator in a process of its own, its markets moving (the seeded makers' books
 * and takers' trades every quote and sync reads), so its CPU is measured apart from the venue's: both
 * are printed beside the `/health-check` rate measured in the same run.
 *
 *   npx tsx bench/soak.ts                                   (demo catalogue, 60 s: "RSS after 60 s")
 *   npx tsx bench/soak.ts --markets 50000 --duration 600     (the soak: 10 minutes, a reload a minute)
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import type { CatalogueFile } from "../src/contract/markets.js";
import { generateDemoCatalogue, sizedCatalogue } from "../src/demo/generate.js";
import { startSimulator } from "../src/simulator/index.js";
import {
  cpuTimeUs,
  healthCheckRate,
  importCatalogue,
  rssMb,
  runAutocannon,
  type StartedServer,
  startServer,
  stopServer,
  tempDataDir,
  untilReady,
} from "./support.js";

const { values: args } = parseArgs({
  options: {
    markets: { type: "string", default: "0" },
    duration: { type: "string", default: "60" },
    sync: { type: "string", default: "60" },
    clients: { type: "string", default: "200" },
    /** Requests per second of each of the two HTTP loads (reads, quotes): steady, not saturating. */
    rate: { type: "string", default: "200" },
    /** Internal: serve the simulator over the catalogue in this file, in this process. */
    "serve-simulator": { type: "string" },
  },
});

// The simulator this bench starts as its own child process: `--serve-simulator CATALOGUE_FILE`.
if (args["serve-simulator"]) {
  const catalogue = JSON.parse(fs.readFileSync(args["serve-simulator"], "utf8")) as CatalogueFile;
  const simulator = await startSimulator({ catalogue, host: "127.0.0.1", port: 0 });
  process.stdout.write(`READY ${simulator.url}\n`);
  process.once("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}
const MARKETS = Number(args.markets);
const DURATION_S = Number(args.duration);
const SYNC_S = Number(args.sync);
const CLIENTS = Number(args.clients);
const RATE = Number(args.rate);
const ANCHOR = Math.floor(Date.now() / 86_400_000) * 86_400;
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
// Generated catalogues hold about this many markets per unit of scale.
const MARKETS_PER_SCALE = 3_300;

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

async function catalogueVersion(url: string): Promise<number | undefined> {
  const report = await json<{ parts?: { catalogue?: { version?: number } } }>(`${url}/health-check/live`);
  return report.parts?.catalogue?.version;
}

interface Workload {
  eventPaths: string[];
  quotePaths: string[];
  tickers: string[];
  outcomeMints: string[];
}

/** Event reads, outcome-mint buys and tickers to follow, from the server's own catalogue. */
async function workload(url: string): Promise<Workload> {
  const { events } = await json<{ events: { ticker: string }[] }>(
    `${url}/api/v1/events?status=active&limit=200&sort=volume`,
  );
  const { markets } = await json<{
    markets: { ticker: string; accounts: Record<string, { yesMint: string; noMint: string }> }[];
  }>(`${url}/api/v1/markets?status=active&isInitialized=true&limit=200&sort=volume`);
  const outcomeMints = markets.flatMap((m) => {
    const usdc = m.accounts[USDC];
    return usdc ? [usdc.yesMint, usdc.noMint] : [];
  });
  if (events.length === 0 || outcomeMints.length === 0)
    throw new Error("the catalogue has no active events or tokenized active markets to load");
  return {
    eventPaths: events.map((e) => `/api/v1/event/${e.ticker}?withNestedMarkets=true`),
    quotePaths: outcomeMints.map(
      (mint) => `/order?inputMint=${USDC}&outputMint=${mint}&amount=1000000&slippageBps=100`,
    ),
    tickers: markets.map((m) => m.ticker),
    outcomeMints,
  };
}

/** Opens the stream clients; returns how many frames they have received so far, and a closer. */
function streamClients(server: StartedServer, load: Workload): { frames: () => number; close: () => void } {
  let frames = 0;
  const sockets: WebSocket[] = [];
  const wsUrl = server.url.replace("http", "ws");
  for (let i = 0; i < CLIENTS; i++) {
    const onMarkets = i % 2 === 0;
    const socket = new WebSocket(onMarkets ? `${wsUrl}/api/v1/ws` : `${wsUrl}/quote-stream`);
    socket.on("open", () => {
      if (onMarkets) {
        const tickers = Array.from({ length: 5 }, (_, k) => load.tickers[(i * 5 + k) % load.tickers.length]);
        for (const channel of ["prices", "trades"])
          socket.send(JSON.stringify({ type: "subscribe", channel, tickers }));
      } else {
        const mint = load.outcomeMints[i % load.outcomeMints.length];
        socket.send(JSON.stringify({ op: "subscribe", base_mint: mint, quote_mint: USDC }));
      }
    });
    socket.on("message", () => frames++);
    socket.on("error", () => {});
    sockets.push(socket);
  }
  return {
    frames: () => frames,
    close: () => {
      for (const socket of sockets) socket.terminate();
    },
  };
}

/** The simulator over `catalogue` in a child process of its own; resolves with it once it listens. */
function startSimulatorProcess(
  dataDir: string,
  catalogue: CatalogueFile,
): Promise<{ child: ChildProcess; url: string }> {
  const file = path.join(dataDir, "simulator-catalogue.json");
  fs.writeFileSync(file, JSON.stringify(catalogue));
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ["--import", "tsx", self, "--serve-simulator", file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  process.once("exit", () => child.kill("SIGTERM"));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (line.startsWith("READY ")) resolve({ child, url: line.slice("READY ".length) });
    });
    child.once("exit", (code) => reject(new Error(`the simulator exited (${code})`)));
  });
}

async function main(): Promise<void> {
  const dataDir = tempDataDir();
  let label = "demo catalogue";
  let catalogue = generateDemoCatalogue({ anchor: ANCHOR });
  if (MARKETS > 0) {
    const scale = Math.max(1, Math.ceil((MARKETS * 1.1) / MARKETS_PER_SCALE));
    const generated = generateDemoCatalogue({ anchor: ANCHOR, scale });
    catalogue = sizedCatalogue(generated, Math.ceil(generated.events.length), MARKETS);
    const count = catalogue.events.reduce((n, e) => n + e.markets.length, 0);
    label = `${catalogue.events.length} events / ${count} markets`;
    console.log(`importing ${label} ...`);
    importCatalogue(dataDir, catalogue);
  }
  const simulator = await startSimulatorProcess(dataDir, catalogue);
  const simulatorPid = simulator.child.pid as number;
  const server = await startServer({
    dataDir,
    env: { SYNC_INTERVAL: String(SYNC_S), UPSTREAM_URL: simulator.url },
  });
  const pid = server.child.pid as number;
  try {
    const readyMs = await untilReady(server);
    const loadedRss = rssMb(pid);
    console.log(
      `\n${label}: mixed load for ${DURATION_S} s (sync every ${SYNC_S} s, ${CLIENTS} stream clients)`,
    );
    console.log(
      `  reads answered at ${(server.readyMs / 1000).toFixed(2)} s, ready (/health-check/ready) at ${(readyMs / 1000).toFixed(2)} s, RSS then ${loadedRss.toFixed(0)} MB`,
    );
    const load = await workload(server.url);
    const streams = streamClients(server, load);
    const firstVersion = await catalogueVersion(server.url);
    const versions = new Set<number | undefined>([firstVersion]);
    const samples: { t: number; rss: number }[] = [];
    const cpuBefore = { venue: cpuTimeUs(pid), simulator: cpuTimeUs(simulatorPid) };
    const started = performance.now();
    const sampler = setInterval(async () => {
      const t = (performance.now() - started) / 1000;
      const rss = rssMb(pid);
      samples.push({ t, rss });
      versions.add(await catalogueVersion(server.url).catch(() => undefined));
      if (samples.length % 2 === 0)
        console.log(
          `  ${t.toFixed(0).padStart(5)} s   RSS ${rss.toFixed(0).padStart(5)} MB   catalogue versions seen ${versions.size}   stream frames ${streams.frames()}`,
        );
    }, 5_000);
    const [reads, quotes] = await Promise.all([
      runAutocannon({
        url: server.url,
        connections: 4,
        overallRate: RATE,
        duration: DURATION_S,
        requests: load.eventPaths.map((path) => ({ method: "GET", path })),
      }),
      runAutocannon({
        url: server.url,
        connections: 4,
        overallRate: RATE,
        duration: DURATION_S,
        requests: load.quotePaths.map((path) => ({ method: "GET", path })),
      }),
    ]);
    clearInterval(sampler);
    const loadSeconds = (performance.now() - started) / 1000;
    const cpu = {
      venue: (cpuTimeUs(pid) - cpuBefore.venue) / 1e6,
      simulator: (cpuTimeUs(simulatorPid) - cpuBefore.simulator) / 1e6,
    };
    const endRss = rssMb(pid);
    streams.close();
    // Measured after the load, away from the start-up sync, which holds the event loop for a while.
    const baseline = await healthCheckRate(server.url, 3, 20);
    console.log(`  baseline: /health-check ${baseline.toFixed(0)} req/s at 20 connections`);
    const share = cpu.simulator / (cpu.simulator + cpu.venue);
    console.log(
      `  CPU over the load: venue ${(cpu.venue / loadSeconds).toFixed(2)} cores, simulator ${(cpu.simulator / loadSeconds).toFixed(2)} cores ` +
        `(${(share * 100).toFixed(1)}% of the two; the simulator's CPU a second = ${((cpu.simulator / loadSeconds) * baseline).toFixed(0)} /health-check answers' worth)`,
    );
    const firstMinute = samples.find((s) => s.t >= Math.min(60, DURATION_S - 5))?.rss ?? endRss;
    console.log(
      `  event reads ${reads.requests.total} (${reads.non2xx} not 2xx, ${reads.errors} errors); ` +
        `quotes ${quotes.requests.total} (${quotes.non2xx} not 2xx, ${quotes.errors} errors); ` +
        `catalogue reloads ${versions.size - 1}; stream frames ${streams.frames()}`,
    );
    console.log(
      `  RSS after load ${loadedRss.toFixed(0)} MB, after the first minute ${firstMinute.toFixed(0)} MB, ` +
        `at the end ${endRss.toFixed(0)} MB (end / first minute = ${(endRss / firstMinute).toFixed(3)}; target <= 1.10)`,
    );
  } finally {
    await stopServer(server);
    simulator.child.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
