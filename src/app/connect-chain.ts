/**
 * Chooses the chain from the configuration: `SOLANA_RPC_URL` when set, else the embedded sandbox
 * (LiteSVM, durable in the venue's storage, JSON-RPC on `RPC_PORT` and PubSub on `RPC_PORT + 1`).
 * Either way trading code sees the same `Chain` interface. One process at a time runs the sandbox
 * of a database (it holds the database's chain lease, see sandbox/lease.ts); another instance on the
 * same database refuses to start its own and says which SOLANA_RPC_URL to use instead.
 */

import type { Chain } from "../chain/chain.js";
import type { GenesisMarket } from "../chain/market-ledger.js";
import { RpcChain } from "../chain/rpc-client.js";
import type { ChainLogger } from "../chain/sandbox/sandbox-chain.js";
import {
  type SandboxChainSettings,
  type StartedSandboxChain,
  startSandboxChain,
} from "../chain/sandbox/start.js";
import type { Config } from "../config.js";
import type { Storage } from "../storage/database.js";

export interface ChainConnection {
  chain: Chain;
  /** The embedded sandbox, when no SOLANA_RPC_URL is configured. */
  sandbox?: StartedSandboxChain;
  /** JSON-RPC URL of the chain, for clients. */
  rpcUrl: string;
  /** Creates the on-chain accounts of tokenized markets (sandbox only; a real cluster has them). */
  addMarkets(markets: readonly GenesisMarket[]): Promise<number>;
  close(): Promise<void>;
}

type ChainSettings = Pick<Config, "HOST" | "DATA_DIR" | "SOLANA_RPC_URL" | "SOLANA_RPC_KEY" | "RPC_PORT">;

/**
 * Connects to the configured chain, starting the sandbox when none is configured; throws
 * ChainLeaseHeldError (its message names the SOLANA_RPC_URL to set) when another live instance
 * runs the sandbox of this database.
 */
export async function connectChain(
  config: ChainSettings,
  deps: {
    storage: Pick<Storage, "db"> & Partial<Pick<Storage, "dialect" | "location">>;
    venueSeed: string;
    logger?: ChainLogger;
    /** Further settings of the sandbox chain, passed through as they are. */
    sandbox?: Partial<Omit<SandboxChainSettings, "storage" | "dataDir" | "venueSeed" | "markets">>;
  },
): Promise<ChainConnection> {
  if (config.SOLANA_RPC_URL) {
    return {
      chain: new RpcChain({
        url: config.SOLANA_RPC_URL,
        ...(config.SOLANA_RPC_KEY ? { apiKey: config.SOLANA_RPC_KEY } : {}),
      }),
      rpcUrl: config.SOLANA_RPC_URL,
      addMarkets: async () => 0,
      close: async () => {},
    };
  }
  const sandbox = await startSandboxChain({
    storage: deps.storage,
    dataDir: config.DATA_DIR,
    venueSeed: deps.venueSeed,
    // Markets are added once the catalog has loaded; see addMarkets.
    markets: [],
    host: config.HOST,
    rpcPort: config.RPC_PORT,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...deps.sandbox,
  });
  try {
    // Another instance that finds the lease held names this URL in its refusal.
    await sandbox.chain.lease.publishRpcUrl(sandbox.rpcUrl);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return {
    chain: sandbox.chain,
    sandbox,
    rpcUrl: sandbox.rpcUrl,
    addMarkets: (markets) => sandbox.addMarkets(markets),
    close: () => sandbox.close(),
  };
}
