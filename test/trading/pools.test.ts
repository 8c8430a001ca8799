/**
 * Pools and the token registry in storage, on SQLite and PostgreSQL: the demo pools are created once
 * per database, a pool created beside a running venue is traded within a few slots, a removed pool
 * stops trading while its mints stay listed, and all of it survives a restart.
 */
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { loadVenueKeys, venueSigners } from "../../src/chain/venue-keys.js";
import { TradeClient } from "../../src/client/trade.js";
import { type Config, loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { PoolAuthorities } from "../../src/trading/spot/pools/authority.js";
import { createPool } from "../../src/trading/spot/pools/create.js";
import { listPools, removePool } from "../../src/trading/spot/pools/store.js";
import { BACKENDS } from "../support/backends.js";

describe.each(BACKENDS)("pools on $name", (backend) => {
  let config: Config;
  let server: RunningServer | undefined;
  let cleanup = async () => {};

  beforeAll(async () => {
    if (!backend.available) return;
    const storage = await backend.create();
    cleanup = storage.cleanup;
    config = loadConfig(
      {},
      {
        PORT: "0",
        LOG_LEVEL: "silent",
        RATE_LIMIT_ANONYMOUS: "0",
        SIMULATOR_PORT: "0",
        RPC_PORT: "0",
        SYNC_INTERVAL: "0",
        ...storage.settings,
      },
    );
    server = await startServer(config);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await cleanup();
  });

  const client = () => new TradeClient({ baseUrl: (server as RunningServer).url });

  it.skipIf(!backend.available)(
    "creates a pool beside the running venue, trades it, removes it, and keeps its mints listed after a restart",
    async () => {
      const running = server as RunningServer;
      expect(await listPools(running.storage.db)).toHaveLength(30);
      const chain = new RpcChain({ url: running.chain.rpcUrl });
      const pool = await createPool(
        {
          db: running.storage.db,
          chain,
          signers: await venueSigners(loadVenueKeys(config.DATA_DIR)),
          authorities: PoolAuthorities.load(config.DATA_DIR),
        },
        {
          mintA: USDC_MINT,
          mintB: WRAPPED_SOL_MINT,
          amountA: 90_000_000_000_000n,
          amountB: 500_000_000_000_000n,
          feeBps: 0,
        },
      );
      // At 180 USDC per SOL the demo pools charge a fee; this one, deeper and free, wins the direct route.
      const routedThrough = async () =>
        (await client().order({ inputMint: WRAPPED_SOL_MINT, outputMint: USDC_MINT, amount: 1_000_000_000n }))
          .routePlan[0]?.marketKey;
      await eventually(async () => expect(await routedThrough()).toBe(pool.address));

      expect(await removePool(running.storage.db, pool.address)).toBe(true);
      expect(await removePool(running.storage.db, pool.address)).toBe(false);
      await eventually(async () => expect(await routedThrough()).not.toBe(pool.address));

      await running.close();
      server = await startServer(config);
      const restarted = server;
      expect(await listPools(restarted.storage.db)).toHaveLength(30);
      const tokens = await client().tokensWithDecimals();
      expect(tokens).toContainEqual([USDC_MINT, 6]);
      expect(new Set(tokens.map(([mint]) => mint)).size).toBe(tokens.length);
      expect(await routedThrough()).not.toBe(pool.address);
      expect((await client().venues()).sort()).toEqual(["cpmm", "prediction"]);
      // The demo pools were not created a second time.
      const demoPoolMints = (await listPools(restarted.storage.db)).flatMap((p) => [p.mintA, p.mintB]);
      expect(new Set<Address>(demoPoolMints).size).toBe(12);
    },
    120_000,
  );
});

/** Resolves once `check` passes (the venue reads its pools again at its next refresh). */
async function eventually(check: () => Promise<void>): Promise<void> {
  await vi.waitFor(check, { timeout: 15_000, interval: 50 });
}
