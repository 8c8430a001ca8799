/**
 * Every setting, parsed once at start from the environment and command-line flags by one schema
 * (contract §1). A bad value stops start-up with a message naming the setting to fix.
 */
import path from "node:path";
import { z } from "zod";
import { RESERVATION_LIMITS } from "./limits.js";

const port = z.coerce.number().int().min(0).max(65_535);
const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .url()
    .refine((value) => protocols.some((p) => value.startsWith(`${p}:`)), {
      message: `must start with ${protocols.map((p) => `${p}://`).join(" or ")}`,
    })
    .optional();

const booleanSetting = z
  .enum(["true", "false", "1", "0"])
  .transform((value) => value === "true" || value === "1");

export const ConfigSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: port.default(8080),
  MODE: z.enum(["development", "production"]).default("development"),
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: optionalUrl(["postgres", "postgresql"]),
  REDIS_URL: optionalUrl(["redis", "rediss"]),
  UPSTREAM_URL: optionalUrl(["http", "https"]),
  SIMULATOR_PORT: port.default(8090),
  /**
   * Days the simulator's live endpoints reach back (fractions allowed, down to a minute): markets settled
   * and trades made before then are served only under `/historical`, as Kalshi keeps about three months.
   */
  SIMULATOR_LIVE_DAYS: z.coerce
    .number()
    .min(1 / 1440)
    .max(36_500)
    .default(90),
  /** The whole time a relayed upstream call may take, sending to last byte. */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Kalshi API key id; with UPSTREAM_PRIVATE_KEY_FILE, upstream requests are signed. */
  UPSTREAM_KEY_ID: z.string().min(1).optional(),
  /** PEM file of the RSA private key belonging to UPSTREAM_KEY_ID. */
  UPSTREAM_PRIVATE_KEY_FILE: z.string().min(1).optional(),
  /**
   * Whether each prediction-market fill is executed on the upstream first (Kalshi's portfolio API, with
   * UPSTREAM_KEY_ID's account), the venue then filling what the upstream filled; unset, on with the
   * embedded simulator (an account of its own) and off against an UPSTREAM_URL.
   */
  UPSTREAM_TRADING: booleanSetting.optional(),
  /** Seconds between syncs of the catalogue from the upstream; 0 turns periodic sync off. */
  SYNC_INTERVAL: z.coerce.number().int().min(0).max(86_400).default(60),
  /** Which markets new to a sync get outcome tokens: none, those open for trading (tradable), or all. */
  SYNC_TOKENIZE: z.enum(["none", "tradable", "all"]).default("tradable"),
  SOLANA_RPC_URL: optionalUrl(["http", "https"]),
  /** An API key sent as `x-api-key` to SOLANA_RPC_URL: the chain of an Oddsgate instance in production wants one. */
  SOLANA_RPC_KEY: z.string().min(1).optional(),
  RPC_PORT: port.default(8899),
  MARKETS_PORT: port.optional(),
  TRADE_PORT: port.optional(),
  CORS_ORIGINS: z.string().optional(),
  /**
   * Proxies in front of the service: their number (hops, e.g. 1) or their addresses/CIDRs, comma
   * separated. Only addresses added by these are believed in X-Forwarded-For; 0 believes none.
   */
  TRUST_PROXY: z
    .string()
    .default("0")
    .refine((value) => value !== "true", {
      message:
        "give the number of proxies in front (e.g. 1) or their addresses, not true: trusting every hop lets clients spoof their address",
    })
    .transform((value): number | string[] =>
      /^\d+$/.test(value) ? Number(value) : value.split(",").map((entry) => entry.trim()),
    ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Log lines for people (pretty) or for collectors (json); unset, pretty on a terminal and json otherwise. */
  LOG_FORMAT: z.enum(["pretty", "json"]).optional(),
  /** Seeds the derived market account addresses; fixed by the database on first start when unset. */
  VENUE_SEED: z.string().min(8).optional(),
  /** Requests per minute per client IP without a key (development mode); 0 means unlimited. */
  RATE_LIMIT_ANONYMOUS: z.coerce.number().int().min(0).default(60),
  /** Requests per minute per key of the standard tier; 0 means unlimited. */
  RATE_LIMIT_STANDARD: z.coerce.number().int().min(0).default(600),
  /** Requests per minute per key of the pro tier; 0 means unlimited. */
  RATE_LIMIT_PRO: z.coerce.number().int().min(0).default(6000),
  /** How long a settled intent's escrow stays open for its client to read before it is swept back (ms). */
  ESCROW_SWEEP_DELAY_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** Live firm quotes (output reserved) one client may hold for one wallet; 0 means unbounded. */
  FIRM_QUOTES_PER_WALLET: z.coerce.number().int().min(0).default(RESERVATION_LIMITS.perWallet),
  /** Live firm quotes one client (API key, or address without a key) may hold; 0 means unbounded. */
  FIRM_QUOTES_PER_CLIENT: z.coerce.number().int().min(0).default(RESERVATION_LIMITS.perClientAddress),
  /** The most of one pool's output reserve one client's live firm quotes may hold, in basis points; 0 means unbounded. */
  FIRM_QUOTE_POOL_SHARE_BPS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(RESERVATION_LIMITS.poolShareBpsPerClient),
  /** The most of one pool's output reserve all live firm quotes together may hold, in basis points; 0 means unbounded. */
  FIRM_QUOTE_POOL_HOLD_BPS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(RESERVATION_LIMITS.poolHoldBps),
  /** Prefix of every Redis key this deployment writes, so deployments can share a Redis. */
  REDIS_PREFIX: z.string().min(1).default("oddsgate:"),
  /**
   * Whether prediction-market buys must go to a verified wallet (the reference's Proof check,
   * `oddsgate wallets verify`); unset, on in production and off in development.
   */
  WALLET_VERIFICATION: booleanSetting.optional(),
  /**
   * The ed25519 keypair file (solana-keygen format) signing responses for `x-sign-request`; unset,
   * DATA_DIR/chain/response-signing.json, created on first start. Give every instance the same file.
   */
  RESPONSE_SIGNING_KEY_FILE: z.string().min(1).optional(),
  /** Whether `serve` loads the bundled demo catalogue into an empty database. */
  DEMO_CATALOGUE: booleanSetting.default(true),
  /** Whether the explorer web app is served at `/` (its assets hold no data, so they need no key). */
  EXPLORER: booleanSetting.default(true),
  /** Whether the venue archives what it observes and serves into Parquet files (docs/archive.md). */
  ARCHIVE: booleanSetting.default(true),
  /** Where the archive's Parquet files go; unset, DATA_DIR/archive. Instances may share it. */
  ARCHIVE_DIR: z.string().min(1).optional(),
  /** Seconds between the archive's flushes: what a crash can lose at most. */
  ARCHIVE_FLUSH_SECONDS: z.coerce.number().min(0.1).max(3_600).default(10),
  /** Days of archive kept (by the day a row is dated); 0 keeps everything. */
  ARCHIVE_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(0),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = Partial<Record<keyof Config, string | undefined>>;

export const SETTING_NAMES = Object.keys(ConfigSchema.shape) as (keyof Config)[];

/** Raised when a setting has a value the schema refuses; its message names the setting. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses settings from the environment, with explicit (flag) values taking precedence. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigInput = {}): Config {
  const input: ConfigInput = {};
  for (const name of SETTING_NAMES) {
    const value = overrides[name] ?? env[name];
    // An empty variable means "unset", as shells make it easy to export one by accident.
    if (value !== undefined && value !== "") input[name] = value;
  }
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      const flag = `--${name.toLowerCase().replaceAll("_", "-")}`;
      return `${name} (flag ${flag}): ${issue.message}, got ${JSON.stringify(input[name as keyof Config])}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  return parsed.data;
}

/** Absolute path of the embedded SQLite database for a configuration. */
/** Where the archive's files are: ARCHIVE_DIR, else DATA_DIR/archive. */
export function archiveDir(config: Pick<Config, "DATA_DIR" | "ARCHIVE_DIR">): string {
  return path.resolve(config.ARCHIVE_DIR ?? path.join(config.DATA_DIR, "archive"));
}

export function sqlitePath(config: Pick<Config, "DATA_DIR">): string {
  return path.resolve(config.DATA_DIR, "oddsgate.db");
}
