/**
 * A commit that storage refuses: every send in it (and any executed on top of it) is refused with
 * -32603, LiteSVM is rebuilt from what was stored, and the chain goes on. The refusal is forced by
 * storing a row with the first transfer's signature behind the chain's back (a primary-key clash).
 */
import { type Address, generateKeyPairSigner, type Signature } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import { ChainError } from "../../src/chain/errors.js";
import { faucet } from "../../src/chain/faucet.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { BACKENDS } from "../support/backends.js";
import { startTestChain, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`sandbox chain commit failure on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it("refuses every send of the failed commit, rolls LiteSVM back, and recovers", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      const started: TestChain = await startTestChain(settings);
      cleanups.push(() => started.stop());
      const chain = started.chain;
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      await chain.requestAirdrop(alice.address, 1_000_000_000n);
      await faucet(chain, started.signers, alice.address, USDC_MINT, 100n);
      await faucet(chain, started.signers, bob.address, USDC_MINT, 1n);
      const balance = async (owner: Address) =>
        (await chain.getTokenAccount(await usdcAccountOf(owner)))?.amount;

      const first = await usdcTransfer(chain, alice, bob.address, 5n);
      const second = await usdcTransfer(chain, alice, bob.address, 7n);
      const clash = encodeBase58(first.subarray(1, 65));
      await started.storage.db
        .insertInto("chain_transactions")
        .values({
          signature: clash,
          slot: Number(await chain.getSlot()),
          block_time: 0,
          err: null,
          fee: "5000",
          compute_units: "0",
          logs: "[]",
          balances: '{"pre":[],"post":[]}',
          wire: Buffer.from(first).toString("base64"),
          position: 1_000_000,
        })
        .execute();

      // Both sends execute in one group, so both fall with its commit.
      const outcomes = await Promise.allSettled([
        chain.sendTransaction(first),
        chain.sendTransaction(second),
      ]);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        const error = (outcome as PromiseRejectedResult).reason as ChainError;
        expect(error).toBeInstanceOf(ChainError);
        expect(error.code).toBe(-32603);
      }

      // The refused second transfer can be sent again (it queues behind the reload), and lands on the
      // state as stored: without the first transfer, whose effects LiteSVM no longer holds.
      await chain.sendTransaction(second);
      expect(await balance(alice.address)).toBe(93n);
      expect(await balance(bob.address)).toBe(8n);
      const [stored, landed] = await chain.getSignatureStatuses([
        clash as Signature,
        encodeBase58(second.subarray(1, 65)) as Signature,
      ]);
      expect(stored).not.toBeNull();
      expect(landed?.err).toBeNull();
      await expect(chain.sendTransaction(first)).rejects.toMatchObject({ code: -32002 });
    });
  });
}
