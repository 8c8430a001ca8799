/**
 * Chooses the upstream exchange from the configuration: `UPSTREAM_URL` when set, else the embedded
 * simulator started on `SIMULATOR_PORT` over the demo catalogue. Either way the rest of the program
 * talks to it through the same HTTP client.
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import { type Config, ConfigError } from "../config.js";
import type { CatalogueFile } from "../contract/markets.js";
import type { RunningSimulator } from "../simulator/index.js";
import { UpstreamClient } from "../upstream/client.js";
import { KalshiPortfolio, type UpstreamPortfolio } from "../upstream/portfolio.js";
import { type KalshiCredentials, loadKalshiCredentials } from "../upstream/signing.js";

export interface UpstreamConnection {
  client: UpstreamClient;
  /** The embedded simulator, when no UPSTREAM_URL is configured. */
  simulator?: RunningSimulator;
  /** Base URL the client talks to. */
  url: string;
  /** The venue's account there, when prediction-market fills are executed upstream (UPSTREAM_TRADING). */
  portfolio?: UpstreamPortfolio;
  close(): Promise<void>;
}

/** The embedded simulator's account for the venue: its key id, and the balance it opens with (cents). */
const VENUE_ACCOUNT = { keyId: "oddsgate-venue", balanceCents: 100_000_000 };

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
  | "UPSTREAM_TRADING"
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

  const trading = config.UPSTREAM_TRADING ?? !config.UPSTREAM_URL;
  if (trading && config.UPSTREAM_URL && !credentials) {
    throw new ConfigError(
      "invalid configuration:\n  UPSTREAM_TRADING executes fills with an account on UPSTREAM_URL: set UPSTREAM_KEY_ID and UPSTREAM_PRIVATE_KEY_FILE",
    );
  }
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
  const accountKey = simulator ? venueAccountOn(simulator) : credentials && (async () => credentials);
  const portfolio =
    trading && accountKey ? new KalshiPortfolio(url, accountKey, config.UPSTREAM_TIMEOUT_MS) : undefined;
  return {
    client,
    ...(simulator ? { simulator } : {}),
    ...(portfolio ? { portfolio } : {}),
    url,
    async close() {
      await portfolio?.close();
      await client.close();
      await simulator?.close();
    },
  };
}

/**
 * The venue's account on the embedded simulator, opened for a key made when the first upstream fill
 * needs it: making an RSA key takes ~0.1 s of CPU, which every start paid before the venue was
 * ready, and most venues never fill upstream. Its accounts live as long as it does.
 */
function venueAccountOn(simulator: RunningSimulator): () => Promise<KalshiCredentials> {
  let opened: Promise<KalshiCredentials> | undefined;
  const open = async (): Promise<KalshiCredentials> => {
    const { publicKey, privateKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 2048 });
    simulator.openAccount(VENUE_ACCOUNT.keyId, {
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
      balanceCents: VENUE_ACCOUNT.balanceCents,
    });
    return { keyId: VENUE_ACCOUNT.keyId, privateKey };
  };
  return () => {
    // A failed attempt is not kept: the next fill tries again.
    opened ??= open().catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
}
