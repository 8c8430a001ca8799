/** Starts the embedded chain: state from storage, genesis, JSON-RPC on :8899 and PubSub on :8900. */
import type { Storage } from "../../storage/database.js";
import { buildAirdropTransaction } from "../faucet.js";
import { applyGenesis, type GenesisMarket } from "./genesis.js";
import { startPubSubServer } from "./pubsub-server.js";
import { createRpcServer } from "./rpc-server.js";
import { type ChainLogger, SandboxChain } from "./sandbox-chain.js";
import type { WallClock } from "./slot-clock.js";
import { loadVenueKeys, type VenueKeys, type VenueSigners, venueSigners } from "./venue-keys.js";

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
  logger?: ChainLogger;
}

export interface StartedSandboxChain {
  chain: SandboxChain;
  rpcUrl: string;
  wsUrl: string;
  venueKeys: VenueKeys;
  signers: VenueSigners;
  /** Creates the accounts of markets tokenized after start (idempotent). */
  addMarkets(markets: readonly GenesisMarket[]): Promise<number>;
  close(): Promise<void>;
}

const DEFAULT_RPC_PORT = 8899;

/** Opens the sandbox chain on `storage`, applies genesis and starts its RPC and PubSub servers. */
export async function startSandboxChain(settings: SandboxChainSettings): Promise<StartedSandboxChain> {
  const host = settings.host ?? "127.0.0.1";
  const venueKeys = loadVenueKeys(settings.dataDir);
  const signers = await venueSigners(venueKeys);
  const chain = await SandboxChain.open({
    storage: settings.storage,
    clock: settings.clock,
    logger: settings.logger,
  });
  chain.setAirdropBuilder((recipient, lamports, lifetime) =>
    buildAirdropTransaction(signers.treasury, recipient, lamports, lifetime),
  );
  const addMarkets = (markets: readonly GenesisMarket[]) =>
    applyGenesis(chain, { venueSeed: settings.venueSeed, keys: venueKeys, markets });
  const created = await addMarkets(settings.markets);
  if (created > 0) settings.logger?.info({ accounts: created }, "sandbox chain genesis accounts created");

  const rpc = createRpcServer(chain);
  const rpcPort = settings.rpcPort ?? DEFAULT_RPC_PORT;
  const boundRpcPort = await rpc.listen({ host, port: rpcPort });
  let pubsub: Awaited<ReturnType<typeof startPubSubServer>>;
  try {
    pubsub = await startPubSubServer(chain, host, settings.wsPort ?? (rpcPort === 0 ? 0 : rpcPort + 1));
  } catch (error) {
    await rpc.close();
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
    async close() {
      await rpc.close();
      await pubsub.close();
      await chain.close();
    },
  };
}
