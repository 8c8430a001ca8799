/**
 * The wire parser reads Solana's compact-u16 length prefixes as Agave's short_vec does: one encoding
 * per value, at most u16. Another encoding of the same message once reached LiteSVM, which aborts
 * the whole process on it.
 */
import { Keypair, SystemProgram, Transaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { ChainError } from "../../src/chain/errors.js";
import { parseWireTransaction } from "../../src/chain/wire.js";

function signedTransfer(): Uint8Array {
  const payer = Keypair.generate();
  const tx = new Transaction({
    feePayer: payer.publicKey,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
  });
  tx.add(
    SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 1,
    }),
  );
  tx.sign(payer);
  return new Uint8Array(tx.serialize());
}

function refusal(bytes: Uint8Array): ChainError {
  try {
    parseWireTransaction(bytes);
  } catch (error) {
    return error as ChainError;
  }
  throw new Error("parsed");
}

describe("the wire parser's length prefixes", () => {
  it("reads a transaction whose prefixes are minimal, and refuses the same bytes with a longer prefix", () => {
    const wire = signedTransfer();
    expect(wire[0]).toBe(1);
    expect(parseWireTransaction(wire).signatures).toHaveLength(1);
    // The signature count 1 written in two bytes (0x81 0x00): the same value, another encoding.
    const padded = new Uint8Array([0x81, 0x00, ...wire.subarray(1)]);
    const error = refusal(padded);
    expect(error).toBeInstanceOf(ChainError);
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("not minimally encoded");
  });

  it("refuses a prefix beyond u16", () => {
    const error = refusal(new Uint8Array([0xff, 0xff, 0x04, 0x00]));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("beyond u16");
  });
});
