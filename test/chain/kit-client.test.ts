import {
  type Address,
  assertIsTransactionWithBlockhashLifetime,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  devnet,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  isSolanaError,
  lamports,
  type Signature,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  sendAndConfirmTransactionFactory,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faucet } from "../../src/chain/faucet.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import {
  startTestChain,
  type TestChain,
  usdcAccountOf,
  usdcTransfer,
  usdcTransferTransaction,
} from "./harness.js";

describe("sandbox chain with @solana/kit as the client", () => {
  const dir = tempDir();
  const clock = new ManualClock();
  let chain: TestChain;
  let rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>;

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir }, { clock });
    // devnet() only types the RPC as a test cluster's, which has requestAirdrop.
    rpc = createSolanaRpc(devnet(chain.rpcUrl));
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  async function waitForStatus(signature: Signature) {
    for (let i = 0; i < 100; i++) {
      const { value } = await rpc.getSignatureStatuses([signature]).send();
      if (value[0]) return value[0];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no status for ${signature}`);
  }

  it("airdrops, grants USDC, and lands a transfer sent with sendAndConfirmTransaction", async () => {
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    const airdrop = await rpc.requestAirdrop(alice.address, lamports(2_000_000_000n)).send();
    expect((await waitForStatus(airdrop)).err).toBeNull();
    expect((await rpc.getBalance(alice.address).send()).value).toBe(2_000_000_000n);

    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 50_000_000n);
    await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 1n);
    const aliceUsdc = await usdcAccountOf(alice.address);
    expect((await rpc.getTokenAccountBalance(aliceUsdc).send()).value.uiAmountString).toBe("50");

    const transaction = await usdcTransferTransaction(chain.chain, alice, bob.address, 12_500_000n);
    assertIsTransactionWithBlockhashLifetime(transaction);
    const sendAndConfirm = sendAndConfirmTransactionFactory({
      rpc,
      rpcSubscriptions: createSolanaRpcSubscriptions(devnet(chain.wsUrl)),
    });
    await sendAndConfirm(transaction, { commitment: "confirmed" });

    expect((await rpc.getTokenAccountBalance(await usdcAccountOf(bob.address)).send()).value.amount).toBe(
      "12500001",
    );
    expect((await rpc.getTokenAccountBalance(aliceUsdc).send()).value.amount).toBe("37500000");
    expect((await rpc.getBalance(alice.address).send()).value).toBe(2_000_000_000n - 5_000n);

    const parsed = await rpc
      .getTokenAccountsByOwner(alice.address, { mint: USDC_MINT }, { encoding: "jsonParsed" })
      .send();
    expect(parsed.value).toHaveLength(1);
    expect(parsed.value[0]?.account.data).toMatchObject({
      program: "spl-token",
      parsed: {
        type: "account",
        info: { mint: USDC_MINT, owner: alice.address, state: "initialized", isNative: false },
      },
      space: 165n,
    });
  });

  it("refuses a replayed transaction, a bad signature and a blockhash older than 150 blocks", async () => {
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 10n);
    await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 10n);
    const wire = await usdcTransfer(chain.chain, alice, bob.address, 1n);
    const encoded = Buffer.from(wire).toString("base64");
    const send = (tx: string) => rpc.sendTransaction(tx as never, { encoding: "base64" }).send();

    await send(encoded);
    await expect(send(encoded)).rejects.toMatchObject({
      context: { __code: -32002 },
    });
    const replayError = await send(encoded).catch((error: { cause?: unknown }) => error.cause);
    expect(isSolanaError(replayError, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)).toBe(true);

    const forged = new Uint8Array(wire);
    forged[1] = (forged[1] ?? 0) ^ 0xff;
    await expect(send(Buffer.from(forged).toString("base64"))).rejects.toMatchObject({
      context: { __code: -32003 },
    });

    const stale = await usdcTransfer(chain.chain, alice, bob.address, 2n);
    clock.advanceSlots(151);
    const staleError = await send(Buffer.from(stale).toString("base64")).catch((error) => error);
    expect(staleError.context.__code).toBe(-32002);
    expect(isSolanaError(staleError.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
    const fresh = await usdcTransfer(chain.chain, alice, bob.address, 2n);
    await expect(send(Buffer.from(fresh).toString("base64"))).resolves.toBeTypeOf("string");
  });

  it("answers a failing transaction's preflight with -32002 and the instruction error as numbers", async () => {
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 5n);
    await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 5n);
    const wire = await usdcTransfer(chain.chain, alice, bob.address, 6n);
    const before = await chain.chain.getBalance(alice.address as Address);
    const error = await chain.chain.sendTransaction(wire).catch((e) => e);
    expect(error.code).toBe(-32002);
    expect(error.kind).toBe("InstructionError");
    expect(error.instructionIndex).toBe(0);
    expect(error.customCode).toBe(1);
    expect(error.message).toBe(
      "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
    );
    expect(await chain.chain.getBalance(alice.address as Address)).toBe(before);

    const landed = await rpc
      .sendTransaction(getBase64EncodedWireTransaction(getTransactionDecoder().decode(wire)), {
        encoding: "base64",
        skipPreflight: true,
      })
      .send();
    const status = await waitForStatus(landed);
    // kit reads every integer as a bigint; compare the codes as numbers.
    const [index, detail] = (status.err as unknown as { InstructionError: [bigint, { Custom: bigint }] })
      .InstructionError;
    expect(Number(index)).toBe(0);
    expect(Number(detail.Custom)).toBe(1);
    expect(await chain.chain.getBalance(alice.address as Address)).toBe(before - 5_000n);
  });
});
