/**
 * The signature worker's verdicts: valid and invalid only when it is sure, "unchecked" (left to the
 * main thread's LiteSVM) for anything else, and no verdict at all when it is busy.
 */
import { type Address, address, type Blockhash, generateKeyPairSigner, lamports } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterEach, describe, expect, it } from "vitest";
import { buildSignedTransaction } from "../../src/chain/build-transaction.js";
import { faucet } from "../../src/chain/faucet.js";
import { type SignatureVerdict, SignatureVerifier } from "../../src/chain/sandbox/signature-verifier.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { rpcSend, startTestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

const LIFETIME = { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 0n };

async function transfer(destination: Address, amount = 1_000n): Promise<Uint8Array> {
  const payer = await generateKeyPairSigner();
  return buildSignedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination, amount: lamports(amount) })],
    LIFETIME,
  );
}

describe("signature verifier", () => {
  const verifiers: SignatureVerifier[] = [];
  // The verdict as a promise, or undefined when the verifier does not take the transaction.
  const verify = (verifier: SignatureVerifier, wire: Uint8Array, queuedAhead = 0) => {
    let settle: (verdict: SignatureVerdict) => void = () => {};
    const verdict = new Promise<SignatureVerdict>((resolve) => {
      settle = resolve;
    });
    return verifier.verify(wire, parseWireTransaction(wire), queuedAhead, settle) ? verdict : undefined;
  };
  const open = () => {
    const verifier = new SignatureVerifier();
    verifiers.push(verifier);
    return verifier;
  };
  afterEach(async () => {
    for (const verifier of verifiers.splice(0)) await verifier.close();
  });

  it("finds signed transactions valid and altered signatures or messages invalid", async () => {
    const verifier = open();
    const receiver = (await generateKeyPairSigner()).address;
    const good = await transfer(receiver);
    const forged = Uint8Array.from(good);
    forged[10] = (forged[10] as number) ^ 1;
    const altered = Uint8Array.from(good);
    // A byte of the first account key in the signed message (after one signature and the header).
    altered[1 + 64 + 10] = (altered[1 + 64 + 10] as number) ^ 1;
    const verdicts = [verify(verifier, good), verify(verifier, forged), verify(verifier, altered)];
    verifier.flush();
    expect(await Promise.all(verdicts)).toEqual(["valid", "invalid", "invalid"]);
  });

  it("leaves transactions naming a signature-verifying precompile to LiteSVM", async () => {
    const verifier = open();
    const precompileUser = await transfer(address("Ed25519SigVerify111111111111111111111111111"));
    expect(verify(verifier, precompileUser)).toBeUndefined();
  });

  it("declines once enough signatures wait, and takes more after they are answered", async () => {
    const verifier = open();
    const wire = await transfer((await generateKeyPairSigner()).address);
    const taken: Promise<unknown>[] = [];
    for (;;) {
      const verdict = verify(verifier, wire);
      if (!verdict) break;
      taken.push(verdict);
      expect(taken.length).toBeLessThan(10_000);
    }
    expect(taken.length).toBeGreaterThan(0);
    verifier.flush();
    await Promise.all(taken);
    expect(verify(verifier, wire)).toBeDefined();
  });

  it("takes more while more sends are queued ahead of them, up to as many signatures as those sends", async () => {
    const verifier = open();
    const wire = await transfer((await generateKeyPairSigner()).address);
    const taken: Promise<unknown>[] = [];
    const queuedAhead = 1000;
    while (taken.length <= queuedAhead) {
      const verdict = verify(verifier, wire, queuedAhead);
      if (!verdict) break;
      taken.push(verdict);
    }
    expect(taken).toHaveLength(queuedAhead);
    verifier.flush();
    await Promise.all(taken);
  });

  it('answers "unchecked" for whatever is outstanding when it closes', async () => {
    const verifier = new SignatureVerifier();
    const verdict = verify(verifier, await transfer((await generateKeyPairSigner()).address));
    await verifier.close();
    expect(await verdict).toBe("unchecked");
  });
});

describe("sandbox sends beyond the signature worker's capacity", () => {
  it("lands every signed transfer and refuses every forged one alike, on either path", async () => {
    const dir = tempDir();
    const started = await startTestChain({ DATA_DIR: dir.dir });
    try {
      const chain = started.chain;
      const alice = await generateKeyPairSigner();
      const bob = await generateKeyPairSigner();
      await chain.requestAirdrop(alice.address, 1_000_000_000n);
      await faucet(chain, started.signers, alice.address, USDC_MINT, 1_000_000n);
      await faucet(chain, started.signers, bob.address, USDC_MINT, 1n);
      // Far more signatures at once than the worker always takes: beyond those, about every other one
      // is checked by LiteSVM.
      const transfers = await Promise.all(
        Array.from({ length: 400 }, (_, i) => usdcTransfer(chain, alice, bob.address, BigInt(i + 1))),
      );
      const forge = (wire: Uint8Array) => {
        const forged = Uint8Array.from(wire);
        forged[20] = (forged[20] as number) ^ 1;
        return forged;
      };
      const forgedFirst = forge(transfers[0] as Uint8Array);
      const forgedLast = forge(transfers[399] as Uint8Array);
      const outcomes = await Promise.allSettled([
        chain.sendTransaction(forgedFirst),
        ...transfers.map((wire) => chain.sendTransaction(wire)),
        chain.sendTransaction(forgedLast),
      ]);
      const refused = [outcomes[0], outcomes[outcomes.length - 1]];
      for (const outcome of refused) {
        expect(outcome?.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: -32003 });
      }
      expect(outcomes.slice(1, -1).every((outcome) => outcome.status === "fulfilled")).toBe(true);
      const sent = (400n * 401n) / 2n;
      expect((await chain.getTokenAccount(await usdcAccountOf(alice.address)))?.amount).toBe(
        1_000_000n - sent,
      );
      expect((await chain.getTokenAccount(await usdcAccountOf(bob.address)))?.amount).toBe(1n + sent);
    } finally {
      await started.stop();
      await dir.cleanup();
    }
  });

  it("takes a caller's word that signatures were checked only in process, and never for a precompile", async () => {
    const dir = tempDir();
    const started = await startTestChain({ DATA_DIR: dir.dir });
    try {
      const chain = started.chain;
      const alice = await generateKeyPairSigner();
      await chain.requestAirdrop(alice.address, 1_000_000_000n);
      await faucet(chain, started.signers, alice.address, USDC_MINT, 10n);
      const forge = (wire: Uint8Array) => {
        const forged = Uint8Array.from(wire);
        forged[20] = (forged[20] as number) ^ 1;
        return forged;
      };
      const { blockhash } = await chain.getLatestBlockhash();
      const toPrecompile = await buildSignedTransaction(
        alice,
        [
          getTransferSolInstruction({
            source: alice,
            destination: address("Ed25519SigVerify111111111111111111111111111"),
            amount: lamports(1_000n),
          }),
        ],
        { blockhash, lastValidBlockHeight: 0n },
      );
      await expect(
        chain.sendTransaction(forge(toPrecompile), { signaturesChecked: true }),
      ).rejects.toMatchObject({ code: -32003 });

      // Over JSON-RPC the option is no option: the forged transfer is refused, and nothing lands.
      const forged = forge(await usdcTransfer(chain, alice, (await generateKeyPairSigner()).address, 1n));
      const answer = await rpcSend(started.rpcUrl, forged, { skipPreflight: true, signaturesChecked: true });
      expect(answer.result).toBeUndefined();
      expect(answer.error?.code).toBe(-32003);
      expect((await chain.getTokenAccount(await usdcAccountOf(alice.address)))?.amount).toBe(10n);
    } finally {
      await started.stop();
      await dir.cleanup();
    }
  });
});
