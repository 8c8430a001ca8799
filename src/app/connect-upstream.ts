/**
 * Chooses the upstream exchange from the configuration: `UPSTREAM_URL` when set, else the embedded
 * simulator started on `SIMULATOR_PORT` over the demo catalogue. Either way the rest of the program
 * talks to it through the same HTTP client.
 */
import { type Config, ConfigError } from "../config.js";
import type { CatalogueFile } from "../contract/markets.js";
import type { RunningSimulator } from "../simulator/index.js";
import { UpstreamClient } from "../upstream/client.js";
import { loadKalshiCredentials } from "../upstream/signing.js";

export interface UpstreamConnection {
  client: UpstreamClient;
  /** The embedded simulator, when no UPSTREAM_URL is configured. */
  simulator?: RunningSimulator;
  /** Base URL the client talks to. */
  url: string;
  close(): Promise<void>;
}

type UpstreamSettings = Pick<
  Config,
  | "HOST"
  | "MODE"
  | "UPSTREAM_URL"
  | "SIMULATOR_PORT"
  | "SIMULATOR_LIVE_DAYS"
  | "UPSTREAM_TIMEOUT_MS"
  | "UPSTREAM_KEY_ID"
  | "UPSTREAM_PRIVATE_KEY_FILE"
>;

/**
 * Connects to the configured upstream, starting the simulator when none is configured; it calls
 * `demo()` for its catalogue on its first request.
 */
export async function connectUpstream(
  config: UpstreamSettings,
  demo: () => CatalogueFile,
): Promise<UpstreamConnection> {
  if (Boolean(config.UPSTREAM_KEY_ID) !== Boolean(config.UPSTREAM_PRIVATE_KEY_FILE)) {
    throw new ConfigError(
      "invalid configuration:\n  UPSTREAM_KEY_ID (flag --upstream-key-id) and UPSTREAM_PRIVATE_KEY_FILE " +
        "(flag --upstream-private-key-file) sign upstream requests together: set both or neither",
    );
  }
  const credentials =
    config.UPSTREAM_KEY_ID && config.UPSTREAM_PRIVATE_KEY_FILE
      ? loadKalshiCredentials(config.UPSTREAM_KEY_ID, config.UPSTREAM_PRIVATE_KEY_FILE)
      : undefined;

  let simulator: RunningSimulator | undefined;
  let url = config.UPSTREAM_URL;
  if (!url) {
    // Loaded only when used: a deployment with a real upstream never needs the simulator's code.
    const { startSimulator } = await import("../simulator/index.js");
    simulator = await startSimulator({
      catalogue: demo,
      host: config.HOST,
      port: config.SIMULATOR_PORT,
      historyWindowSeconds: Math.round(config.SIMULATOR_LIVE_DAYS * 86_400),
      // Testers' controls (settle, pause, the clock, faults) are for development only.
      controls: config.MODE === "development",
    });
    url = simulator.url;
  }
  const client = new UpstreamClient({
    baseUrl: url,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    ...(credentials ? { credentials } : {}),
  });
  return {
    client,
    ...(simulator ? { simulator } : {}),
    url,
    async close() {
      await client.close();
      await simulator?.close();
    },
  };
}
