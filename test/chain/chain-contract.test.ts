/**
 * One scenario run against both implementations of the chain interface: the embedded sandbox
 * directly, and the Solana RPC client talking to that sandbox's own :8899. Production
 * (`SOLANA_RPC_URL`) runs the second path.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Chain } from "../../src/chain/chain.js";
import { ChainError } from "../../src/chain/errors.js";
import { faucet } from "../../src/chain/faucet.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { TOKEN_ACCOUNT_SIZE } from "../../src/chain/token-layout.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { startTestChain, TEST_MARKETS, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

const IMPLEMENTATIONS: { name: string; connect(started: TestChain): Chain }[] = [
  { name: "the embedded sandbox", connect: (started) => started.chain },
  {
    name: "the Solana RPC client against :8899",
    connect: (started) => new RpcChain({ url: started.rpcUrl, pollIntervalMs: 20 }),
  },
];

async function refusal(promise: Promise<unknown>): Promise<ChainError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ChainError);
  return error as ChainError;
}

for (const implementation of IMPLEMENTATIONS) {
  describe(`chain interface through ${implementation.name}`, () => {
    const dir = tempDir();
    const clock = new ManualClock();
    let started: TestChain;
    let chain: Chain;

    beforeAll(async () => {
      started = await startTestChain({ DATA_DIR: dir.dir }, { clock });
      chain = implementation.connect(started);
    });
    afterAll(async () => {
      await started?.stop();
      await dir.cleanup();
    });

    it("airdrops, grants USDC, transfers it and reports statuses, records and balances", async () => {
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      const airdrop = await chain.requestAirdrop(alice.address, 1_000_000_000n);
      expect(await chain.getBalance(alice.address)).toBe(1_000_000_000n);
      await faucet(chain, started.signers, alice.address, USDC_MINT, 25_000_000n);
      await faucet(chain, started.signers, bob.address, USDC_MINT, 1n);

      const wire = await usdcTransfer(chain, alice, bob.address, 5_000_000n);
      const signature = await chain.sendTransaction(wire);
      const [status, airdropStatus, unknown] = await chain.getSignatureStatuses([
        signature,
        airdrop,
        // A well-formed signature nobody sent.
        "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoLuHoQa9TR2VpsMnXjmCPYJM2X5g" as never,
      ]);
      expect(status).toMatchObject({ err: null, confirmationStatus: "finalized" });
      expect(airdropStatus?.err).toBeNull();
      expect(unknown).toBeNull();

      const record = await chain.getTransaction(signature);
      expect(record).toMatchObject({ signature, err: null, fee: 5_000n });
      expect(record?.wire).toEqual(wire);
      expect(record?.preBalances[0]).toBe(1_000_000_000n);
      expect(record?.postBalances[0]).toBe(1_000_000_000n - 5_000n);
      expect(record?.slot).toBe(status?.slot);

      const bobUsdc = await chain.getTokenAccount(await usdcAccountOf(bob.address));
      expect(bobUsdc).toMatchObject({
        mint: USDC_MINT,
        owner: bob.address,
        amount: 5_000_001n,
        state: "initialized",
      });
      const byMint = await chain.getTokenAccountsByOwner(alice.address, { mint: USDC_MINT });
      const byProgram = await chain.getTokenAccountsByOwner(alice.address, { programId: TOKEN_PROGRAM });
      expect(byMint.map((token) => token.amount)).toEqual([20_000_000n]);
      expect(byProgram).toEqual(byMint);
      expect((await chain.getMint(USDC_MINT))?.supply).toBe(25_000_001n);
      expect(await chain.getBalance(alice.address)).toBe(1_000_000_000n - 5_000n);

      const [usdc, missing, ledger] = await chain.getMultipleAccounts([
        USDC_MINT,
        (await generateKeyPairSigner()).address,
        TEST_MARKETS[0]?.marketLedger as Address,
      ]);
      expect(usdc?.owner).toBe(TOKEN_PROGRAM);
      expect(missing).toBeNull();
      expect(ledger?.data.length).toBe(136);
      const rent = await chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE);
      expect(rent).toBe(2_039_280n);
      expect((await chain.getAccountInfo(await usdcAccountOf(bob.address)))?.lamports).toBe(rent);
    });

    it("simulates without landing, and refuses replays, bad signatures and expired blockhashes", async () => {
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      await chain.requestAirdrop(alice.address, 1_000_000_000n);
      await faucet(chain, started.signers, alice.address, USDC_MINT, 10n);
      await faucet(chain, started.signers, bob.address, USDC_MINT, 10n);

      const tooMuch = await usdcTransfer(chain, alice, bob.address, 11n);
      const simulated = await chain.simulateTransaction(tooMuch, { sigVerify: true });
      expect(simulated.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
      expect(simulated.logs.some((line) => line.includes("insufficient funds"))).toBe(true);
      const failed = await refusal(chain.sendTransaction(tooMuch));
      expect(failed).toMatchObject({ code: -32002, kind: "InstructionError", customCode: 1 });
      expect(failed.logs.length).toBeGreaterThan(0);
      expect(await chain.getBalance(alice.address)).toBe(1_000_000_000n);

      const wire = await usdcTransfer(chain, alice, bob.address, 3n);
      expect((await chain.simulateTransaction(wire)).err).toBeNull();
      await chain.sendTransaction(wire);
      expect(await refusal(chain.sendTransaction(wire))).toMatchObject({
        code: -32002,
        kind: "AlreadyProcessed",
      });
      expect((await chain.simulateTransaction(wire)).err).toBe("AlreadyProcessed");

      const forged = await usdcTransfer(chain, alice, bob.address, 4n);
      forged[10] = (forged[10] ?? 0) ^ 0x01;
      expect(await refusal(chain.sendTransaction(forged))).toMatchObject({
        code: -32003,
        kind: "SignatureFailure",
      });

      const latest = await chain.getLatestBlockhash();
      const stale = await usdcTransfer(chain, alice, bob.address, 5n);
      clock.advanceSlots(150);
      expect(await chain.isBlockhashValid(latest.blockhash)).toBe(true);
      expect(await chain.getBlockHeight()).toBe(latest.lastValidBlockHeight);
      clock.advanceSlots(1);
      expect(await chain.isBlockhashValid(latest.blockhash)).toBe(false);
      expect(await refusal(chain.sendTransaction(stale))).toMatchObject({
        code: -32002,
        kind: "BlockhashNotFound",
      });
      expect((await chain.getTokenAccount(await usdcAccountOf(bob.address)))?.amount).toBe(13n);
    });
  });
}
