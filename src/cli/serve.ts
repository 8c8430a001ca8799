/** `oddsgate serve`: the venue itself. */
import v8 from "node:v8";
import type { Command } from "commander";
import type { Config } from "../config.js";
import { type Cli, CliError, configFrom, withSettings } from "./support.js";

/**
 * How far, in percent, V8 lets the heap grow past what survived its last full collection before it
 * collects again. Its own factor goes up to 4x when collecting is fast; a venue's syncs and reloads
 * allocate in bursts of hundreds of MB, and that headroom stays resident (50,000 markets in the soak:
 * 595 MB after the first minute with V8's factor, 517 MB with this; the trading benches' ratios no
 * lower within their runs' noise).
 */
const HEAP_GROWING_PERCENT = 30;

/**
 * The node flags `npm start` runs `serve` with: they size V8's heap before any code runs, so `serve`
 * cannot set them itself. A semi-space of 4 MB instead of V8's 16 caps the young generation at 8 MB
 * (V8 grows it to 32 MB within a start and keeps it): 50,810 markets 447 -> 408 MB at ready and
 * 578 -> 453 MB 20 s later, past the first sync (one run each). Server CPU per request, three
 * alternating runs each: event reads 61.6 against 64.3 µs, events lists 1,073 against 1,028,
 * `/health-check` 41.2 against 32.9 (one run at 51); a keyed production `/health-check` 42.1 against
 * 49.6; `/order` with a transaction 423 against 400 over two runs, within those runs' spread.
 */
export const SERVE_NODE_FLAGS = ["--max-semi-space-size=4"] as const;

/** Whether node's command line or NODE_OPTIONS sets the heap's growth itself. */
export function nodeSetsHeapGrowth(execArgv: readonly string[], nodeOptions = ""): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => /^--heap[-_]growing[-_]percent/.test(arg));
}

/**
 * Bounds the heap's growth (HEAP_GROWING_PERCENT) unless node is told otherwise (nodeSetsHeapGrowth).
 * Reads the process's own NODE_OPTIONS, not the run's env: they are how this process was started.
 */
function boundHeapGrowth(): void {
  if (nodeSetsHeapGrowth(process.execArgv, process.env.NODE_OPTIONS)) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** Adds `serve`, which runs until told to stop (the bin: SIGINT or SIGTERM) and then closes the venue cleanly. */
export function registerServeCommand(program: Command, cli: Cli): void {
  withSettings(
    program.command("serve").description("start the venue (HTTP API, demo catalogue on a fresh database)"),
  ).action(async (options) => {
    const config = configFrom(cli, options);
    boundHeapGrowth();
    const { startServer } = await import("../app/start-server.js");
    const server = await startServer(config).catch((error: unknown) => {
      throw portTaken(config, error) ?? error;
    });
    try {
      await cli.io.untilStopped();
    } finally {
      await server.close();
    }
  });
}

/**
 * A listener's port already in use, as one line naming the port and the setting that chose it, so the
 * person can free it or pick another; undefined for any other failure.
 */
export function portTaken(config: Config, error: unknown): CliError | undefined {
  const { code, port } = (error ?? {}) as { code?: unknown; port?: unknown };
  if (code !== "EADDRINUSE") return undefined;
  const taken =
    typeof port === "number" ? port : Number(/:(\d+)$/.exec(String((error as Error).message))?.[1]);
  const chosenBy: [keyof Config, number | undefined][] = [
    ["MARKETS_PORT", config.MARKETS_PORT],
    ["TRADE_PORT", config.TRADE_PORT],
    ["PORT", config.PORT],
    ["RPC_PORT", config.RPC_PORT],
    ["RPC_PORT", config.RPC_PORT + 1],
    ["SIMULATOR_PORT", config.SIMULATOR_PORT],
  ];
  const setting = chosenBy.find(([, value]) => value === taken)?.[0] ?? "PORT";
  const flag = `--${setting.toLowerCase().replaceAll("_", "-")}`;
  const what =
    setting === "RPC_PORT" && taken === config.RPC_PORT + 1 ? " (the chain's PubSub, RPC_PORT + 1)" : "";
  return new CliError(
    `port ${taken}${what} on ${config.HOST} is taken (another venue running?): stop it, or set ${setting} (or ${flag}) to a free port`,
  );
}
