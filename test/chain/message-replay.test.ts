/**
 * One message, one execution (issue 36, item 1): a signer can sign one message many times, each
 * signature valid and different, so the chain remembers executed messages by hash as Agave's status
 * cache does. A re-signed copy is refused with AlreadyProcessed through sendTransaction and
 * simulateTransaction, after a restart, after another chain takes over the database, and for rows
 * stored before message hashes were.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSigner } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { faucet } from "../../src/chain/faucet.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { BackendSettings } from "../support/backends.js";
import { BACKENDS } from "../support/backends.js";
import { newResignableSigner, resign } from "../support/resign.js";
import {
  rpcSend,
  rpcSimulatedError,
  startTestChain,
  type TestChain,
  usdcAccountOf,
  usdcTransfer,
} from "./harness.js";

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`one execution per message on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function chainOn(settings: BackendSettings): Promise<TestChain> {
      const chain = await startTestChain(settings);
      cleanups.push(() => chain.stop());
      return chain;
    }

    // A transfer of 5 USDC from a wallet holding 100 that the test can re-sign, landed once.
    async function landedTransfer(chain: TestChain) {
      const alice = await newResignableSigner();
      const bob = await generateKeyPairSigner();
      await chain.chain.requestAirdrop(alice.signer.address, 1_000_000_000n);
      await faucet(chain.chain, chain.signers, alice.signer.address, USDC_MINT, 100_000_000n);
      await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 1n);
      const wire = Buffer.from(await usdcTransfer(chain.chain, alice.signer, bob.address, 5_000_000n));
      const sent = await rpcSend(chain.rpcUrl, wire);
      expect(sent.error).toBeUndefined();
      const bobUsdc = async () =>
        (await chain.chain.getTokenAccount(await usdcAccountOf(bob.address)))?.amount;
      expect(await bobUsdc()).toBe(5_000_001n);
      return { alice, transaction: wire.toString("base64"), bobUsdc };
    }

    async function expectRefused(chain: TestChain, copy: string): Promise<void> {
      const answer = await rpcSend(chain.rpcUrl, copy);
      expect(answer.error).toMatchObject({ code: -32002 });
      expect(answer.error?.message).toContain("This transaction has already been processed");
      expect(await rpcSimulatedError(chain.rpcUrl, copy)).toBe("AlreadyProcessed");
      await expect(chain.chain.sendTransaction(Buffer.from(copy, "base64"))).rejects.toMatchObject({
        kind: "AlreadyProcessed",
      });
    }

    it("refuses a re-signed copy of an executed message, however often it is re-signed", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      const chain = await chainOn(settings);
      const { alice, transaction, bobUsdc } = await landedTransfer(chain);
      for (let copy = 0; copy < 3; copy++) await expectRefused(chain, resign(transaction, alice));
      // Sent with skipPreflight too, it never executes.
      const skipped = await rpcSend(chain.rpcUrl, resign(transaction, alice), { skipPreflight: true });
      expect(skipped.error).toMatchObject({ code: -32002 });
      expect(await bobUsdc()).toBe(5_000_001n);
    });

    it("keeps refusing it after a restart, also for rows stored before message hashes were", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      const first = await startTestChain(settings);
      const { alice, transaction } = await landedTransfer(first);
      await first.stop();
      const restarted = await chainOn(settings);
      await expectRefused(restarted, resign(transaction, alice));
      // A row as an older release stored it: the hash is taken from its wire at load.
      await restarted.storage.db.updateTable("chain_transactions").set({ message_hash: null }).execute();
      await restarted.stop();
      cleanups.pop();
      const again = await chainOn(settings);
      await expectRefused(again, resign(transaction, alice));
    });

    // Two instances share one database only on PostgreSQL.
    if (backend.name === "postgres") {
      it("keeps refusing it when another chain takes over the database", async () => {
        const { settings, cleanup } = await backend.create();
        cleanups.push(cleanup);
        const first = await chainOn(settings);
        const { alice, transaction } = await landedTransfer(first);
        // The lease row looks left by a crashed process of this host: the next chain takes it at once.
        const dead = spawnSync(process.execPath, ["-e", ""]).pid;
        await first.storage.db.updateTable("chain_lease").set({ pid: dead }).execute();
        const second = await chainOn(settings);
        await expectRefused(second, resign(transaction, alice));
      });
    }
  });
}
