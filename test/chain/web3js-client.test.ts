import { generateKeyPairSigner } from "@solana/kit";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { faucet } from "../../src/chain/faucet.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { startTestChain, type TestChain, usdcTransfer } from "./harness.js";

describe("sandbox chain with @solana/web3.js 1.x Connection as the client", () => {
  const dir = tempDir();
  let chain: TestChain;
  let connection: Connection;
  const clock = new ManualClock();

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir }, { clock });
    connection = new Connection(chain.rpcUrl, { commitment: "confirmed", wsEndpoint: chain.wsUrl });
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  it("airdrops and confirms, transfers SOL and USDC, and reads parsed token accounts", async () => {
    const payer = Keypair.generate();
    const airdrop = await connection.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
    let latest = await connection.getLatestBlockhash();
    const confirmed = await connection.confirmTransaction({ signature: airdrop, ...latest });
    expect(confirmed.value.err).toBeNull();
    expect(await connection.getBalance(payer.publicKey)).toBe(2 * LAMPORTS_PER_SOL);

    const recipient = Keypair.generate().publicKey;
    latest = await connection.getLatestBlockhash();
    const transfer = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: recipient,
        lamports: LAMPORTS_PER_SOL / 2,
      }),
    );
    transfer.sign(payer);
    const signature = await connection.sendRawTransaction(transfer.serialize());
    expect((await connection.confirmTransaction({ signature, ...latest })).value.err).toBeNull();
    expect(await connection.getBalance(recipient)).toBe(LAMPORTS_PER_SOL / 2);
    const status = await connection.getSignatureStatus(signature);
    expect(status.value?.confirmationStatus).toBe("finalized");
    const fetched = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(fetched?.meta?.fee).toBe(5000);

    // An SPL token transfer built with kit, sent and confirmed through web3.js.
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 3_000_000n);
    await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 1n);
    latest = await connection.getLatestBlockhash();
    const wire = await usdcTransfer(chain.chain, alice, bob.address, 1_000_000n);
    const usdcSignature = await connection.sendRawTransaction(wire);
    expect(
      (await connection.confirmTransaction({ signature: usdcSignature, ...latest })).value.err,
    ).toBeNull();

    const parsed = await connection.getParsedTokenAccountsByOwner(new PublicKey(bob.address), {
      mint: new PublicKey(USDC_MINT),
    });
    expect(parsed.value).toHaveLength(1);
    expect(parsed.value[0]?.account.data.program).toBe("spl-token");
    expect(parsed.value[0]?.account.data.parsed.info.tokenAmount).toEqual({
      amount: "1000001",
      decimals: 6,
      uiAmount: 1.000001,
      uiAmountString: "1.000001",
    });
  });

  it("refuses a replay and a bad signature with Solana's errors", async () => {
    const payer = Keypair.generate();
    await chain.chain.requestAirdrop(payer.publicKey.toBase58() as never, 1_000_000_000n);
    const latest = await connection.getLatestBlockhash();
    const transfer = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    );
    transfer.sign(payer);
    const raw = transfer.serialize();
    await connection.sendRawTransaction(raw);
    await expect(connection.sendRawTransaction(raw)).rejects.toThrow(/already been processed/);
    const forged = Buffer.from(raw);
    forged[5] = (forged[5] ?? 0) ^ 0x01;
    await expect(connection.sendRawTransaction(forged, { skipPreflight: true })).rejects.toThrow(
      /signature verification failure/,
    );

    const stale = new Transaction({
      feePayer: payer.publicKey,
      ...(await connection.getLatestBlockhash()),
    }).add(
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 2_000_000,
      }),
    );
    stale.sign(payer);
    clock.advanceSlots(151);
    await expect(connection.sendRawTransaction(stale.serialize())).rejects.toThrow(/Blockhash not found/);
  });

  it("notifies account changes and new slots over the PubSub WebSocket", async () => {
    const owner = Keypair.generate().publicKey;
    const subscribed = chain.pubsubStats().subscriptions;
    const accountChange = new Promise<number>((resolve) => {
      const id = connection.onAccountChange(owner, (account) => {
        void connection.removeAccountChangeListener(id);
        resolve(account.lamports);
      });
    });
    const slot = await connection.getSlot();
    const slotChange = new Promise<number>((resolve) => {
      const id = connection.onSlotChange((info) => {
        if (info.slot <= slot) return;
        void connection.removeSlotChangeListener(id);
        resolve(info.slot);
      });
    });
    // Both subscriptions have reached the server before anything happens.
    await vi.waitFor(() => expect(chain.pubsubStats().subscriptions).toBe(subscribed + 2), {
      timeout: 10_000,
      interval: 10,
    });
    await chain.chain.requestAirdrop(owner.toBase58() as never, 3_000_000n);
    expect(await accountChange).toBe(3_000_000);
    clock.advanceSlots(1);
    expect(await slotChange).toBe(slot + 1);
    // Nothing left subscribed: web3.js closes its socket (after its idle half second). One still open
    // when the chain stops would reconnect, and log its failure, for the rest of the worker's files.
    await vi.waitFor(() => expect(chain.pubsubStats().sockets).toBe(0), { timeout: 10_000, interval: 20 });
  });
});
