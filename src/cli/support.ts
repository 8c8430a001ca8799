/**
 * What every command group shares: settings as flags, storage and the chain opened on demand, and
 * failures reported as one line. Only light modules are imported here: the CLI must start fast, so
 * storage, the chain client and the domain modules are loaded by the commands that use them.
 */
import type { Console } from "node:console";
import fs from "node:fs";
import { type Command, Option } from "commander";
import type { RpcChain } from "../chain/rpc-client.js";
import {
  type Config,
  ConfigError,
  type ConfigInput,
  ConfigSchema,
  loadConfig,
  SETTING_NAMES,
} from "../config.js";
import type { Storage } from "../storage/database.js";

/**
 * Where one run of the CLI reads its settings and input and writes its output: the process's own for
 * the bin, a test's for the in-process runner. Nothing below reads process.env or prints to the console.
 */
export interface CliIo {
  /** The environment settings are read from (a command's flags take precedence). */
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Read only by `reset`'s question: the bin passes a getter, as opening stdin costs a handle. */
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Resolves when a command that runs until stopped (`serve`) should stop and close what it opened. */
  untilStopped(): Promise<void>;
}

/** What a command is given: the run's I/O, and a console printing to its streams. */
export interface Cli {
  readonly io: CliIo;
  readonly console: Console;
}

/** A failure the user can fix, reported as its message alone. */
export class CliError extends Error {}

/** The settings of the commands that only read and write storage. */
export const STORAGE_SETTINGS: (keyof Config)[] = ["DATA_DIR", "DATABASE_URL"];

/** The settings of the commands that talk to the chain. */
export const CHAIN_SETTINGS: (keyof Config)[] = ["DATA_DIR", "HOST", "SOLANA_RPC_URL", "RPC_PORT"];

/** Parses a JSON file, naming the file in the error when it cannot be read or parsed. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

const flagOf = (name: string) => `--${name.toLowerCase().replaceAll("_", "-")}`;
const optionKey = (name: string) =>
  name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Adds one `--kebab-case <value>` flag per setting (or only the listed ones). */
export function withSettings(command: Command, names: readonly (keyof Config)[] = SETTING_NAMES): Command {
  for (const name of names) {
    const description = ConfigSchema.shape[name].description ?? `overrides ${name}`;
    command.addOption(new Option(`${flagOf(name)} <value>`, description));
  }
  return command;
}

/** The configuration from the run's environment, with the command's setting flags taking precedence. */
export function configFrom(cli: Cli, options: Record<string, string | undefined>): Config {
  const overrides: ConfigInput = {};
  for (const name of SETTING_NAMES) overrides[name] = options[optionKey(name)];
  return loadConfig(cli.io.env, overrides);
}

/** Runs `task` against the configured storage, closing it afterwards. */
export async function withStorage<T>(config: Config, task: (storage: Storage) => Promise<T>): Promise<T> {
  const { openStorage } = await import("../storage/database.js");
  const storage = await openStorage(config);
  try {
    return await task(storage);
  } finally {
    await storage.close();
  }
}

/** The venue seed: VENUE_SEED, else the one the database fixed on first start. */
export async function venueSeedFrom(config: Config): Promise<string> {
  const { resolveVenueSeed } = await import("../markets/accounts.js");
  return withStorage(config, (storage) => resolveVenueSeed(storage.db, config.VENUE_SEED));
}

/**
 * The chain a command talks to: SOLANA_RPC_URL, else the local venue's sandbox on RPC_PORT; with
 * SOLANA_RPC_KEY as `x-api-key` unless `sendKey` is false.
 */
export async function chainFrom(config: Config, { sendKey = true } = {}): Promise<RpcChain> {
  const { RpcChain } = await import("../chain/rpc-client.js");
  // A production venue's chain answers only requests with its key (from the environment: never a flag).
  const key = sendKey ? config.SOLANA_RPC_KEY : undefined;
  return new RpcChain({ url: chainUrlOf(config), ...(key ? { apiKey: key } : {}) });
}

/** The JSON-RPC URL of the chain: SOLANA_RPC_URL, else the local sandbox's on RPC_PORT. */
export function chainUrlOf(config: Config): string {
  return config.SOLANA_RPC_URL ?? `http://${hostOf(config)}:${config.RPC_PORT}`;
}

/** HOST as it goes into a URL: an IPv6 address in brackets. */
export function hostOf(config: Config): string {
  return config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
}

/** The version of this package, as `oddsgate --version` prints it. */
export function packageVersion(): string {
  // src/cli/ and dist/cli/ both sit two levels below the package's root.
  const manifest = new URL("../../package.json", import.meta.url);
  return (JSON.parse(fs.readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** Prints `value` as JSON (bigints as strings): what `--json` prints instead of the lines for people. */
export function printJson(cli: Cli, value: unknown): void {
  cli.console.log(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2));
}

/**
 * What a failed call to the venue's HTTP API means to the person who ran the command: nothing
 * listening ("fetch failed" says nothing), or a key it does not take, or its own answer. Anything
 * else is returned as it was.
 */
export function venueFailure(url: string, error: unknown, apiKey?: string): unknown {
  if (!(error instanceof Error)) return error;
  const cause = (error as { cause?: { code?: string } }).cause;
  if (error.message === "fetch failed" || /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(String(cause?.code))) {
    return new CliError(
      `no venue at ${url}: start it with \`npm start\` (or \`oddsgate serve\`), or point PORT/--port (TRADE_PORT, HOST) at the one running`,
    );
  }
  const status = (error as { status?: unknown }).status;
  if (error.name === "OddsgateApiError" && (status === 401 || status === 403)) {
    const msg = (error as { msg?: string }).msg ?? error.message;
    return new CliError(
      apiKey
        ? `the venue at ${url} refused the API key (${status}: ${msg}): check --api-key or ODDSGATE_API_KEY (\`oddsgate keys list\` on the venue)`
        : `the venue at ${url} asks for an API key (${status}: ${msg}): pass --api-key or set ODDSGATE_API_KEY`,
    );
  }
  if (error.name === "OddsgateApiError") {
    const { code, msg } = error as unknown as { code: string; msg: string };
    return new CliError(`the venue refused: ${msg} (${code})`);
  }
  return error;
}

/**
 * Wraps a command whose failures (bad input, an unreachable chain or venue) are all the user's to fix,
 * so that any error it raises is reported as one line rather than a stack trace.
 */
export function failingAsMessages<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (error) {
      if (error instanceof CliError || !(error instanceof Error)) throw error;
      throw new CliError(error.message);
    }
  };
}

/**
 * Prints why a command failed and returns the exit status, 1: the message alone for a failure the user
 * can fix, the whole error (with its stack) for anything else.
 */
export async function reportFailure(cli: Cli, error: unknown): Promise<number> {
  if (await isUserError(error)) cli.console.error(`oddsgate: ${(error as Error).message}`);
  else cli.console.error("oddsgate:", error);
  return 1;
}

async function isUserError(error: unknown): Promise<boolean> {
  if (error instanceof CliError || error instanceof ConfigError) return true;
  if (!(error instanceof Error)) return false;
  // Loaded only on failure: a command that succeeds should not pay for the modules of the others.
  const [{ ImportFormatError }, { KeyError }, { ApiError }, { ChainLeaseHeldError }, { UpstreamError }] =
    await Promise.all([
      import("../markets/import/parse.js"),
      import("../api-keys/store.js"),
      import("../contract/errors.js"),
      import("../chain/sandbox/lease.js"),
      import("../upstream/errors.js"),
    ]);
  return (
    error instanceof ImportFormatError ||
    error instanceof KeyError ||
    error instanceof ApiError ||
    error instanceof ChainLeaseHeldError ||
    error instanceof UpstreamError
  );
}
