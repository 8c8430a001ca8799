/**
 * Split brain (issue 15): two instances on one PostgreSQL database must not each run a sandbox
 * chain on the shared state, or the same funds could be spent once through each. The second
 * instance refuses to start and names the SOLANA_RPC_URL to use; and when a second chain is started
 * anyway (the first's lease lapsed while it still runs), at most one of two spends of the same funds
 * lands, storage holds only that one, and the balances add up.
 */
import { spawnSync } from "node:child_process";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/app/start-server.js";
import { encodeBase58 } from "../../src/chain/base58.js";
import { faucet } from "../../src/chain/faucet.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { Storage } from "../../src/storage/database.js";
import {
  rpcSend,
  solTransfer,
  startTestChain,
  storedSupplies,
  type TestChain,
  usdcAccountOf,
  usdcTransfer,
} from "../chain/harness.js";
import { BACKENDS, tempDir } from "../support/backends.js";
import { startTestServer } from "../support/server.js";
import { createPostgresDatabase, postgresAvailable } from "../support/services.js";

const POSTGRES = BACKENDS.find((backend) => backend.name === "postgres");
const FEE = 5_000n;
const signatureOf = (wire: Uint8Array) => encodeBase58(wire.subarray(1, 65));

// Makes the lease row look left by a crashed process of this host, which the next chain to start
// takes over at once, while the chain that holds it still runs (a renewal or commit of its own
// cannot undo this, as it could an expiry).
async function orphanLease(storage: Storage): Promise<void> {
  const dead = spawnSync(process.execPath, ["-e", ""]).pid;
  await storage.db.updateTable("chain_lease").set({ pid: dead }).execute();
}

async function storedSignatures(storage: Storage, wires: readonly Uint8Array[]): Promise<string[]> {
  const rows = await storage.db
    .selectFrom("chain_transactions")
    .select("signature")
    .where("signature", "in", wires.map(signatureOf))
    .execute();
  return rows.map((row) => row.signature).sort();
}

async function storedLamports(storage: Storage, address: Address): Promise<bigint> {
  const row = await storage.db
    .selectFrom("chain_accounts")
    .select("lamports")
    .where("address", "=", address)
    .executeTakeFirst();
  return BigInt(row?.lamports ?? 0);
}

describe.skipIf(!postgresAvailable)("one chain writer per database (PostgreSQL)", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  // A database and a DATA_DIR for chains started as if by instances of one deployment.
  async function sharedDatabase(): Promise<{ DATA_DIR: string; DATABASE_URL: string }> {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    return { DATA_DIR: dir.dir, DATABASE_URL: database.url };
  }

  async function chainOn(settings: { DATA_DIR: string; DATABASE_URL: string }): Promise<TestChain> {
    const started = await startTestChain(settings);
    cleanups.push(() => started.stop());
    return started;
  }

  // A first chain on a fresh shared database, and a wallet there with 1 SOL for two payees.
  async function walletOnFirstChain() {
    const settings = await sharedDatabase();
    const first = await chainOn(settings);
    const wallet = await generateKeyPairSigner();
    const x = await generateKeyPairSigner();
    const y = await generateKeyPairSigner();
    await first.chain.requestAirdrop(wallet.address, 1_000_000_000n);
    return { settings, first, wallet, x, y };
  }

  it("refuses a second server on the database, naming the SOLANA_RPC_URL of the first", async () => {
    const first = await startTestServer({ backend: POSTGRES });
    cleanups.push(() => first.stop());
    const sandbox = first.server.chain.sandbox;
    const rpcUrl = first.server.chain.rpcUrl;
    const other = tempDir();
    cleanups.push(other.cleanup);
    const settings = { ...first.settings, PORT: "0", DATA_DIR: other.dir };

    const refusal = await startServer(loadConfig({}, settings)).catch((error: unknown) => error);
    expect((refusal as Error).message).toBe(
      `the sandbox chain of this database is run by another instance (holder ${sandbox?.chain.lease.holder}, ` +
        `JSON-RPC at ${rpcUrl}); set SOLANA_RPC_URL=${rpcUrl} to use it, or stop that instance`,
    );

    // Told where the chain runs, it starts, and uses it.
    const second = await startServer(loadConfig({}, { ...settings, SOLANA_RPC_URL: rpcUrl }));
    cleanups.push(() => second.close());
    expect(second.chain.sandbox).toBeUndefined();
    const wallet = await generateKeyPairSigner();
    await second.chain.chain.requestAirdrop(wallet.address, 1_000_000n);
    expect(await sandbox?.chain.getBalance(wallet.address)).toBe(1_000_000n);
  });

  it("lets one of two spends of the same SOL land when a second chain takes over a live one", async () => {
    const { settings, first, wallet, x, y } = await walletOnFirstChain();

    // The first chain is taken for dead while it runs, and a second takes over.
    await orphanLease(first.storage);
    const second = await chainOn(settings);
    const toX = await solTransfer(first.chain, wallet, x.address, 900_000_000n);
    const toY = await solTransfer(second.chain, wallet, y.address, 900_000_000n);
    const [viaFirst, viaSecond] = await Promise.all([
      rpcSend(first.rpcUrl, toX),
      rpcSend(second.rpcUrl, toY),
    ]);
    expect(viaFirst.error?.code).toBe(-32005);
    expect(viaFirst.error?.message).toMatch(/lease/);
    expect(viaSecond.result).toBe(signatureOf(toY));

    expect(await storedSignatures(second.storage, [toX, toY])).toEqual([signatureOf(toY)]);
    const stored = {
      wallet: await storedLamports(second.storage, wallet.address),
      x: await storedLamports(second.storage, x.address),
      y: await storedLamports(second.storage, y.address),
    };
    expect(stored).toEqual({ wallet: 100_000_000n - FEE, x: 0n, y: 900_000_000n });
    expect(await second.chain.getBalance(wallet.address)).toBe(stored.wallet);
    // The first chain takes nothing more.
    const more = await solTransfer(first.chain, wallet, x.address, 1n);
    expect((await rpcSend(first.rpcUrl, more)).error?.code).toBe(-32005);
  });

  it("gives the chain that takes over every commit of the one before it", async () => {
    const { settings, first, wallet, x, y } = await walletOnFirstChain();
    const toX = await solTransfer(first.chain, wallet, x.address, 900_000_000n);
    expect((await rpcSend(first.rpcUrl, toX)).result).toBe(signatureOf(toX));

    await orphanLease(first.storage);
    const second = await chainOn(settings);
    const toY = await solTransfer(second.chain, wallet, y.address, 900_000_000n);
    // The funds are gone on the chain it loaded after taking the lease: the spend fails its preflight.
    expect((await rpcSend(second.rpcUrl, toY)).error?.code).toBe(-32002);
    expect(await storedSignatures(second.storage, [toX, toY])).toEqual([signatureOf(toX)]);
    expect(await storedLamports(second.storage, y.address)).toBe(0n);
  });

  it("spends each wallet's USDC at most once while a takeover races a stream of sends", async () => {
    const settings = await sharedDatabase();
    const first = await chainOn(settings);
    const amount = 1_000_000n;
    const pairs: { wallet: KeyPairSigner; x: Address; y: Address }[] = [];
    for (let i = 0; i < 8; i++) {
      const wallet = await generateKeyPairSigner();
      const x = (await generateKeyPairSigner()).address;
      const y = (await generateKeyPairSigner()).address;
      await first.chain.requestAirdrop(wallet.address, 1_000_000_000n);
      await faucet(first.chain, first.signers, wallet.address, USDC_MINT, amount);
      // The recipients' accounts exist, with 1 unit each.
      await faucet(first.chain, first.signers, x, USDC_MINT, 1n);
      await faucet(first.chain, first.signers, y, USDC_MINT, 1n);
      pairs.push({ wallet, x, y });
    }
    const toX = await Promise.all(pairs.map((p) => usdcTransfer(first.chain, p.wallet, p.x, amount)));
    const toY = await Promise.all(pairs.map((p) => usdcTransfer(first.chain, p.wallet, p.y, amount)));

    // The first chain takes one spend every few milliseconds while a second chain takes over.
    const viaFirst = (async () => {
      const answers: { result?: string }[] = [];
      for (const wire of toX) {
        answers.push(await rpcSend(first.rpcUrl, wire));
        // Pacing, not waiting: spreads the spends over the takeover so that it lands among them.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return answers;
    })();
    // Pacing, not waiting: a few spends reach the first chain before its lease is orphaned.
    await new Promise((resolve) => setTimeout(resolve, 15));
    await orphanLease(first.storage);
    const second = await chainOn(settings);
    const viaSecond = await Promise.all(toY.map((wire) => rpcSend(second.rpcUrl, wire)));
    const firstAnswers = await viaFirst;

    const stored = new Set(await storedSignatures(second.storage, [...toX, ...toY]));
    // Some spend was acknowledged, so the acknowledged-is-stored checks below bite.
    expect([...firstAnswers, ...viaSecond].some((answer) => answer?.result)).toBe(true);
    for (const [i, pair] of pairs.entries()) {
      const landedX = stored.has(signatureOf(toX[i] as Uint8Array));
      const landedY = stored.has(signatureOf(toY[i] as Uint8Array));
      // Exactly one: the second chain refuses what the first committed before it took over.
      expect(Number(landedX) + Number(landedY), `wallet ${i}`).toBe(1);
      // What either chain acknowledged is stored.
      if (firstAnswers[i]?.result) expect(landedX).toBe(true);
      if (viaSecond[i]?.result) expect(landedY).toBe(true);
      const held = async (owner: Address) =>
        (await second.chain.getTokenAccount(await usdcAccountOf(owner)))?.amount ?? 0n;
      expect((await held(pair.wallet.address)) + (await held(pair.x)) + (await held(pair.y))).toBe(
        amount + 2n,
      );
    }
    const { supplies, held } = await storedSupplies(second.storage);
    for (const [mint, supply] of supplies) expect(held.get(mint) ?? 0n, mint).toBe(supply);
  });
});
