/**
 * The sandbox chain's lease: one holder at a time, renewed while it runs, taken over once it expires
 * (at once from a crashed process of this host), released on close; a chain whose lease was taken
 * refuses every send and stores nothing more.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSigner } from "@solana/kit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import { ChainError, NodeUnhealthyError } from "../../src/chain/errors.js";
import { SYSTEM_PROGRAM } from "../../src/chain/programs.js";
import {
  ChainLease,
  ChainLeaseHeldError,
  ChainLeaseLostError,
  type ChainLeaseSettings,
} from "../../src/chain/sandbox/lease.js";
import { SandboxChain, type SandboxChainOptions } from "../../src/chain/sandbox/sandbox-chain.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { BACKENDS } from "../support/backends.js";
import { solTransfer } from "./harness.js";

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`sandbox chain lease on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function freshStorage(): Promise<Storage> {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      const storage = await openStorage(settings);
      cleanups.push(() => storage.close());
      return storage;
    }

    function leaseOn(storage: Storage, settings: ChainLeaseSettings = {}): ChainLease {
      const lease = new ChainLease(storage.db, { dialect: storage.dialect, ...settings });
      cleanups.push(() => lease.release());
      return lease;
    }

    async function openChain(options: SandboxChainOptions): Promise<SandboxChain> {
      const chain = await SandboxChain.open(options);
      cleanups.push(() => chain.close());
      return chain;
    }

    const isStored = async (storage: Storage, wire: Uint8Array) =>
      (await storage.db
        .selectFrom("chain_transactions")
        .select("signature")
        .where("signature", "=", encodeBase58(wire.subarray(1, 65)))
        .executeTakeFirst()) !== undefined;

    it("is held by one holder at a time, kept by renewal past its TTL, and handed over on release", async () => {
      const storage = await freshStorage();
      const first = leaseOn(storage, { ttlMs: 800, renewMs: 50 });
      await first.acquire();
      const acquiredUntil = Number(
        (await storage.db.selectFrom("chain_lease").select("expires_at").executeTakeFirstOrThrow())
          .expires_at,
      );
      expect(first.heldEpoch).toBe(1);
      await first.publishRpcUrl("http://127.0.0.1:18899");
      expect(await first.current()).toEqual({
        holder: first.holder,
        rpcUrl: "http://127.0.0.1:18899",
        epoch: 1,
        live: true,
      });

      const second = leaseOn(storage);
      const refusal = await second.acquire().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ChainLeaseHeldError);
      expect((refusal as Error).message).toBe(
        `the sandbox chain of this database is run by another instance (holder ${first.holder}, ` +
          "JSON-RPC at http://127.0.0.1:18899); set SOLANA_RPC_URL=http://127.0.0.1:18899 to use it, " +
          "or stop that instance",
      );
      // Renewed every 50 ms, it outlives its 800 ms TTL: wait (by the same machine's clock the database
      // reads) until the expiry it was acquired with has passed, a little more than that TTL.
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(acquiredUntil + 50), {
        timeout: 10_000,
        interval: 20,
      });
      await expect(second.acquire()).rejects.toBeInstanceOf(ChainLeaseHeldError);
      expect(await first.renew()).toBe(true);

      await first.release();
      expect((await second.current())?.live).toBe(false);
      await second.acquire();
      expect(second.heldEpoch).toBe(2);
      expect(await second.current()).toEqual({ holder: second.holder, rpcUrl: null, epoch: 2, live: true });
    });

    it("is taken over once expired; the old holder learns it on renewal and can prove nothing", async () => {
      const storage = await freshStorage();
      // Not renewed during the test: it expires after 500 ms, as when its process hangs.
      const stale = leaseOn(storage, { ttlMs: 500, renewMs: 3_600_000 });
      await stale.acquire();
      const lost = vi.fn();
      stale.onLost(lost);
      const next = leaseOn(storage);
      await expect(next.acquire()).rejects.toBeInstanceOf(ChainLeaseHeldError);
      // Taken as soon as it has expired.
      await vi.waitFor(() => next.acquire(), { timeout: 10_000, interval: 20 });
      expect(next.heldEpoch).toBe(2);

      expect(await stale.renew()).toBe(false);
      expect(stale.lost).toBeInstanceOf(ChainLeaseLostError);
      expect(stale.heldEpoch).toBeNull();
      expect(lost).toHaveBeenCalledTimes(1);
      expect(() => stale.fenceToken()).toThrow(ChainLeaseLostError);
      await expect(storage.db.transaction().execute((trx) => stale.fence(trx))).rejects.toBeInstanceOf(
        ChainLeaseLostError,
      );
      await expect(stale.publishRpcUrl("http://127.0.0.1:1")).rejects.toBeInstanceOf(ChainLeaseLostError);
      // Its release leaves the new holder's lease alone.
      await stale.release();
      expect(await next.current()).toMatchObject({ holder: next.holder, epoch: 2, live: true });
      expect(lost).toHaveBeenCalledTimes(1);
    });

    it("is taken at once from a crashed process of this host, not from another host's", async () => {
      const storage = await freshStorage();
      const crashed = leaseOn(storage);
      await crashed.acquire();
      // As after a kill -9: the row (10 s TTL, unexpired) names a process that no longer exists.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      await storage.db.updateTable("chain_lease").set({ pid: dead }).execute();
      const restarted = leaseOn(storage);
      await restarted.acquire();
      expect(restarted.heldEpoch).toBe(2);

      // A predecessor with this very PID (a restarted container's process often has the same one)
      // that is none of this process's own holders.
      await storage.db
        .updateTable("chain_lease")
        .set({ holder: "gone/1/00000000", pid: process.pid })
        .execute();
      const again = leaseOn(storage);
      await again.acquire();
      expect(again.heldEpoch).toBe(3);

      // Whether another host's process lives cannot be told from here: its lease must expire first.
      await storage.db.updateTable("chain_lease").set({ host: "elsewhere", pid: dead }).execute();
      await expect(leaseOn(storage).acquire()).rejects.toBeInstanceOf(ChainLeaseHeldError);
    });

    it("lets one chain open at a time; a closed chain's successor opens at once", async () => {
      const storage = await freshStorage();
      const first = await SandboxChain.open({ storage });
      const refusal = await SandboxChain.open({ storage }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ChainLeaseHeldError);
      expect((refusal as ChainLeaseHeldError).current.holder).toBe(first.lease.holder);
      await first.close();
      const second = await openChain({ storage });
      expect(second.lease.heldEpoch).toBe(2);
    });

    it("refuses the sends of a chain whose lease was taken, and stores none of them", async () => {
      const storage = await freshStorage();
      const errors: string[] = [];
      const logger = { info() {}, error: (_object: object, message?: string) => errors.push(message ?? "") };
      const chain = await openChain({ storage, logger, lease: { renewMs: 3_600_000 } });
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      await chain.installAccounts([
        {
          address: alice.address,
          lamports: 2_000_000_000n,
          owner: SYSTEM_PROGRAM,
          executable: false,
          data: new Uint8Array(0),
        },
      ]);
      const landed = await solTransfer(chain, alice, bob.address, 1_000_000n);
      await chain.sendTransaction(landed);
      expect(await isStored(storage, landed)).toBe(true);

      // Another process takes the chain over (this one's lease had lapsed, say while it was paused).
      await storage.db.updateTable("chain_lease").set({ expires_at: 0 }).execute();
      await leaseOn(storage).acquire();
      const refused = await solTransfer(chain, alice, bob.address, 2_000_000n);
      const refusal = await chain.sendTransaction(refused).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ChainError);
      expect((refusal as ChainError).code).toBe(-32005);
      expect((refusal as ChainError).message).toMatch(/no longer runs the sandbox chain.*lease/);
      expect(await isStored(storage, refused)).toBe(false);
      const bobStored = await storage.db
        .selectFrom("chain_accounts")
        .select("lamports")
        .where("address", "=", bob.address)
        .executeTakeFirst();
      expect(String(bobStored?.lamports)).toBe("1000000");
      expect(errors).toContain("sandbox chain lost its lease; it takes no more transactions");

      // Every later send is refused the same way, without executing.
      const later = await solTransfer(chain, alice, bob.address, 3_000_000n);
      await expect(chain.sendTransaction(later)).rejects.toMatchObject({ code: -32005 });
      expect(await isStored(storage, later)).toBe(false);
    });

    it("stops taking sends once a renewal finds the lease taken, with nothing in flight", async () => {
      const storage = await freshStorage();
      const chain = await openChain({ storage, lease: { ttlMs: 300, renewMs: 50 } });
      const alice = await generateKeyPairSigner();
      const transfer = await solTransfer(chain, alice, (await generateKeyPairSigner()).address, 1n);
      // Its renewals would undo an expiry: the row is made to look left by a crashed process instead.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      await storage.db.updateTable("chain_lease").set({ pid: dead }).execute();
      await leaseOn(storage).acquire();
      await vi.waitFor(() => expect(chain.lease.lost).toBeInstanceOf(ChainLeaseLostError), {
        timeout: 10_000,
        interval: 20,
      });
      await expect(chain.sendTransaction(transfer)).rejects.toMatchObject({ code: -32005 });
      await expect(chain.installAccounts([])).rejects.toMatchObject({ code: -32005 });
    });

    it("is unconfirmed once unrenewed for a TTL by its own clock, until a renewal proves or loses it", async () => {
      const storage = await freshStorage();
      let now = 1_000_000;
      // Never renewed on its own during the test: as when its process is paused.
      const lease = leaseOn(storage, { ttlMs: 10_000, renewMs: 3_600_000, clock: () => now });
      expect(lease.standing()).toBe("none");
      await lease.acquire();
      expect(lease.standing()).toBe("held");
      now += 9_999;
      expect(lease.standing()).toBe("held");
      // A TTL since it was taken: another process may have taken it meanwhile. A renewal starts at once.
      now += 1;
      expect(lease.standing()).toBe("unconfirmed");
      // No one did: the renewal (sent at this moment) proves it for another TTL.
      expect(await lease.renew()).toBe(true);
      expect(lease.standing()).toBe("held");

      now += 10_000;
      await storage.db.updateTable("chain_lease").set({ expires_at: 0 }).execute();
      await leaseOn(storage).acquire();
      expect(lease.standing()).toBe("unconfirmed");
      // The renewal it started finds the lease taken.
      expect(await lease.renew()).toBe(false);
      expect(lease.standing()).toBe("lost");
      now += 1_000_000;
      expect(lease.standing()).toBe("lost");
    });

    it("serves no state from a chain whose lease is unconfirmed or lost, and says which", async () => {
      const storage = await freshStorage();
      let now = 1_000_000;
      const chain = await openChain({ storage, lease: { renewMs: 3_600_000, clock: () => now } });
      const alice = await generateKeyPairSigner();
      await chain.installAccounts([
        {
          address: alice.address,
          lamports: 5_000_000n,
          owner: SYSTEM_PROGRAM,
          executable: false,
          data: new Uint8Array(0),
        },
      ]);
      expect(chain.unhealthy()).toBeNull();
      expect(await chain.getBalance(alice.address)).toBe(5_000_000n);
      const changes = vi.fn();
      chain.onUnhealthy(changes);

      // Paused past its TTL: nothing is read until a renewal proves the lease again (the first look
      // starts one, so these reads are made before it can answer).
      now += chain.lease.ttlMs;
      expect(chain.unhealthy()).toMatchObject({ code: -32005, state: "unconfirmed" });
      const balance = chain.getBalance(alice.address);
      const info = chain.getAccountInfo(alice.address);
      expect(() => chain.peekAccount(alice.address)).toThrow(NodeUnhealthyError);
      await expect(balance).rejects.toMatchObject({ state: "unconfirmed" });
      await expect(info).rejects.toBeInstanceOf(NodeUnhealthyError);
      expect(await chain.lease.renew()).toBe(true);
      expect(await chain.getBalance(alice.address)).toBe(5_000_000n);

      // Taken over: fenced for good, and its listeners hear it once.
      await storage.db.updateTable("chain_lease").set({ expires_at: 0 }).execute();
      await leaseOn(storage).acquire();
      expect(await chain.lease.renew()).toBe(false);
      expect(changes).toHaveBeenCalledTimes(1);
      const fenced = chain.unhealthy();
      expect(fenced).toMatchObject({ code: -32005, state: "fenced" });
      expect(fenced?.message).toMatch(/another instance took over this sandbox chain's lease/);
      for (const read of [
        () => chain.getBalance(alice.address),
        () => chain.getMultipleAccounts([alice.address]),
        () => chain.getTokenAccountsByOwner(alice.address, { programId: SYSTEM_PROGRAM }),
        () => chain.getSignatureStatuses([]),
      ])
        await expect(read()).rejects.toMatchObject({ code: -32005, state: "fenced" });
      // The slot clock is the shared genesis clock's, the same on every instance.
      expect(typeof (await chain.getSlot())).toBe("bigint");
    });
  });
}
