/**
 * Chooses the chain from the configuration: `SOLANA_RPC_URL` when set, else the embedded sandbox
 * (LiteSVM, durable in the venue's storage, JSON-RPC on `RPC_PORT` and PubSub on `RPC_PORT + 1`).
 * Either way trading code sees the same `Chain` interface.
 */
import type { Config } from "../config.js";
import type { Storage } from "../storage/database.js";
import type { Chain } from "./chain.js";
import { RpcChain } from "./rpc-client.js";
import type { GenesisMarket } from "./sandbox/genesis.js";
import type { ChainLogger } from "./sandbox/sandbox-chain.js";
import { type StartedSandboxChain, startSandboxChain } from "./sandbox/start.js";

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

type ChainSettings = Pick<Config, "HOST" | "DATA_DIR" | "SOLANA_RPC_URL" | "RPC_PORT">;

/** Connects to the configured chain, starting the sandbox when none is configured. */
export async function connectChain(
  config: ChainSettings,
  deps: {
    storage: Pick<Storage, "db"> & Partial<Pick<Storage, "dialect" | "location">>;
    venueSeed: string;
    logger?: ChainLogger;
  },
): Promise<ChainConnection> {
  if (config.SOLANA_RPC_URL) {
    return {
      chain: new RpcChain({ url: config.SOLANA_RPC_URL }),
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
  });
  return {
    chain: sandbox.chain,
    sandbox,
    rpcUrl: sandbox.rpcUrl,
    addMarkets: (markets) => sandbox.addMarkets(markets),
    close: () => sandbox.close(),
  };
}
