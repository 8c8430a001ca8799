/** Starts the embedded chain: state from storage, genesis, JSON-RPC on :8899 and PubSub on :8900. */
import type http from "node:http";
import { hasKeyInQuery } from "../../api-keys/url-keys.js";
import type { Storage } from "../../storage/database.js";
import { buildAirdropTransaction } from "../faucet.js";
import type { GenesisMarket } from "../market-ledger.js";
import { loadVenueKeys, type VenueKeys, type VenueSigners, venueSigners } from "../venue-keys.js";
import { applyGenesis } from "./genesis.js";
import { type PubSubLimits, startPubSubServer } from "./pubsub-server.js";
import {
  type AccessGate,
  createRpcServer,
  type HttpListenerLimits,
  type ListenerLogger,
  type RpcLimits,
} from "./rpc-server.js";
import { SandboxChain } from "./sandbox-chain.js";
import type { WallClock } from "./slot-clock.js";

export interface SandboxChainSettings {
  /** The full `Storage` lets SQLite commits run on a worker thread (see sqlite-writer.ts). */
  storage: Pick<Storage, "db"> & Partial<Pick<Storage, "dialect" | "location">>;
  dataDir: string;
  venueSeed: string;
  markets: readonly GenesisMarket[];
  /** JSON-RPC port (default 8899; 0 picks a free one). */
  rpcPort?: number;
  /** PubSub port (default rpcPort + 1, as Solana clients assume; 0 picks a free one). */
  wsPort?: number;
  host?: string;
  clock?: WallClock;
  logger?: ListenerLogger;
  /**
   * `production` closes the chain (default `development`): `requestAirdrop` is refused, and every
   * JSON-RPC request and PubSub upgrade needs a key `authorize` accepts; without `authorize` the
   * listeners bind to 127.0.0.1 only, whatever `host` says.
   */
  mode?: "development" | "production";
  /** Whether a request's headers carry an accepted API key (`x-api-key`); used in production. */
  authorize?: (headers: http.IncomingHttpHeaders) => Promise<boolean>;
  /**
   * Hears the hashes of secrets `authorize` stopped accepting (revoked, rotated away, past their
   * grace), so that PubSub sockets opened with them are closed (1008); returns a function that stops
   * listening. Used in production with `authorize`.
   */
  onInvalidated?: (listener: (secretHashes: ReadonlySet<string>) => void) => () => void;
  /** Overrides of src/limits.ts for the listeners; tests shorten timeouts with it. */
  limits?: SandboxListenerLimits;
  /** Transactions per step of the history index (HISTORY_MERGE_EVERY); tests lower it to cross steps. */
  historyMergeEvery?: number;
}

/** Listener bounds that override src/limits.ts (HTTP_LIMITS, RPC_LIMITS, PUBSUB_LIMITS). */
export interface SandboxListenerLimits {
  http?: Partial<HttpListenerLimits>;
  rpc?: Partial<RpcLimits>;
  pubsub?: Partial<PubSubLimits>;
}

export interface StartedSandboxChain {
  chain: SandboxChain;
  rpcUrl: string;
  wsUrl: string;
  venueKeys: VenueKeys;
  signers: VenueSigners;
  /** Creates the accounts of markets tokenized after start (idempotent). */
  addMarkets(markets: readonly GenesisMarket[]): Promise<number>;
  /** Open PubSub sockets and live subscriptions. */
  pubsubStats(): { sockets: number; subscriptions: number };
  close(): Promise<void>;
}

const DEFAULT_RPC_PORT = 8899;
const LOOPBACK = "127.0.0.1";

/** The production access check of the chain's listeners: an `x-api-key` header `authorize` accepts. */
export function apiKeyGate(authorize: NonNullable<SandboxChainSettings["authorize"]>): AccessGate {
  return async (request) => {
    if (hasKeyInQuery(request.url ?? "")) {
      return "API keys go in the x-api-key header, never in the URL (URLs end up in logs); rotate a key sent this way";
    }
    if (request.headers["x-api-key"] === undefined) {
      return "this chain requires an API key in the x-api-key header";
    }
    return (await authorize(request.headers)) ? null : "unknown or revoked API key in x-api-key";
  };
}

/** Opens the sandbox chain on `storage`, applies genesis and starts its RPC and PubSub servers. */
export async function startSandboxChain(settings: SandboxChainSettings): Promise<StartedSandboxChain> {
  const mode = settings.mode ?? "development";
  const access = mode === "production" && settings.authorize ? apiKeyGate(settings.authorize) : undefined;
  let host = settings.host ?? LOOPBACK;
  if (mode === "production" && !access) {
    // Nothing would check who calls: only this machine may.
    settings.logger?.info(
      { requestedHost: host, host: LOOPBACK },
      "sandbox chain in production without an API key check: JSON-RPC and PubSub listen on 127.0.0.1 only",
    );
    host = LOOPBACK;
  }
  const venueKeys = loadVenueKeys(settings.dataDir);
  const signers = await venueSigners(venueKeys);
  const chain = await SandboxChain.open({
    storage: settings.storage,
    clock: settings.clock,
    logger: settings.logger,
    historyMergeEvery: settings.historyMergeEvery,
  });
  chain.setAirdropBuilder((recipient, lamports, lifetime) =>
    buildAirdropTransaction(signers.treasury, recipient, lamports, lifetime),
  );
  const addMarkets = (markets: readonly GenesisMarket[]) =>
    applyGenesis(chain, { venueSeed: settings.venueSeed, keys: venueKeys, markets });
  const created = await addMarkets(settings.markets);
  if (created > 0) settings.logger?.info({ accounts: created }, "sandbox chain genesis accounts created");

  const limits = settings.limits ?? {};
  const rpc = createRpcServer(chain, { mode, access, limits: { http: limits.http, rpc: limits.rpc } });
  const rpcPort = settings.rpcPort ?? DEFAULT_RPC_PORT;
  let boundRpcPort: number;
  let pubsub: Awaited<ReturnType<typeof startPubSubServer>>;
  try {
    boundRpcPort = await rpc.listen({ host, port: rpcPort });
    pubsub = await startPubSubServer(chain, {
      host,
      port: settings.wsPort ?? (rpcPort === 0 ? 0 : rpcPort + 1),
      access,
      ...(access && settings.onInvalidated ? { onInvalidated: settings.onInvalidated } : {}),
      logger: settings.logger,
      limits: { http: limits.http, pubsub: limits.pubsub },
    });
  } catch (error) {
    await rpc.close();
    await chain.close();
    throw error;
  }
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    chain,
    rpcUrl: `http://${urlHost}:${boundRpcPort}`,
    wsUrl: `ws://${urlHost}:${pubsub.port}`,
    venueKeys,
    signers,
    addMarkets,
    pubsubStats: () => pubsub.stats(),
    async close() {
      await rpc.close();
      await pubsub.close();
      await chain.close();
    },
  };
}
