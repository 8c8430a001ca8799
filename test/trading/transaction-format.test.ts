/**
 * The legacy layout of compileMessage, checked against the two decoders clients use: web3.js 1.x's
 * `Message.from` / `Transaction.from` (which throw on a versioned message, hence the legacy format
 * for them) and @solana/kit's. A v0 message must stay exactly what it was.
 */
import { randomBytes } from "node:crypto";
import {
  AccountRole,
  type Address,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Instruction,
} from "@solana/kit";
import { Message, Transaction, VersionedMessage, Keypair as Web3Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { addressOf, encodeBlockhash } from "../../src/chain/base58.js";
import { generateKeypair } from "../../src/chain/ed25519.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { compileMessage, signedTransaction } from "../../src/trading/tx/transaction.js";

const randomAddress = (): Address => addressOf(randomBytes(32));

const payer = generateKeypair();
const cosigner = generateKeypair();
const writable = randomAddress();
const readonly = randomAddress();
const programA = randomAddress();
const programB = randomAddress();
const blockhash = encodeBlockhash(randomBytes(32));

// Each account keeps one role throughout, so a decoder's merged roles can be compared one to one.
const instructions: Instruction[] = [
  {
    programAddress: programA,
    accounts: [
      { address: payer.address, role: AccountRole.WRITABLE_SIGNER },
      { address: writable, role: AccountRole.WRITABLE },
      { address: cosigner.address, role: AccountRole.READONLY_SIGNER },
    ],
    data: Uint8Array.from([1, 2, 3]),
  },
  {
    programAddress: programB,
    accounts: [
      { address: readonly, role: AccountRole.READONLY },
      { address: writable, role: AccountRole.WRITABLE },
    ],
    // Long enough that its length prefix takes two bytes.
    data: Uint8Array.from(randomBytes(200)),
  },
];

/** Expected order: fee payer, read-only signer, writable non-signer, then read-only accounts and programs. */
const expectedKeys = [payer.address, cosigner.address, writable, readonly, programA, programB];

describe("compileMessage legacy layout", () => {
  const legacy = compileMessage(payer.address, instructions, blockhash, "legacy");

  it("reads back through web3.js 1.x Message.from, byte for byte", () => {
    expect(VersionedMessage.deserializeMessageVersion(legacy.bytes)).toBe("legacy");
    const message = Message.from(legacy.bytes);
    expect(message.header).toEqual({
      numRequiredSignatures: 2,
      numReadonlySignedAccounts: 1,
      numReadonlyUnsignedAccounts: 3,
    });
    expect(message.accountKeys.map((key) => key.toBase58())).toEqual(expectedKeys);
    expect(message.recentBlockhash).toBe(blockhash);
    const decoded = message.compiledInstructions.map((instruction) => ({
      programAddress: message.accountKeys[instruction.programIdIndex]?.toBase58(),
      accounts: instruction.accountKeyIndexes.map((index) => ({
        address: message.accountKeys[index]?.toBase58(),
        role: (message.isAccountSigner(index) ? 0b10 : 0) | (message.isAccountWritable(index) ? 0b01 : 0),
      })),
      data: Uint8Array.from(instruction.data),
    }));
    expect(decoded).toEqual(instructions);
    expect(Buffer.from(message.serialize()).equals(Buffer.from(legacy.bytes))).toBe(true);
    expect(legacy.signers).toEqual([payer.address, cosigner.address]);
  });

  it("reads back through @solana/kit's decoder as a legacy message with the same instructions", () => {
    const compiled = getCompiledTransactionMessageDecoder().decode(legacy.bytes);
    expect(compiled.version).toBe("legacy");
    expect(compiled.staticAccounts).toEqual(expectedKeys);
    const message = decompileTransactionMessage(compiled);
    expect(message.feePayer.address).toBe(payer.address);
    expect(message.lifetimeConstraint).toMatchObject({ blockhash });
    // kit's data are views into the bytes it decoded (a Buffer here): compare their contents.
    const decoded = [...message.instructions].map((instruction) => ({
      ...instruction,
      data: Uint8Array.from(instruction.data ?? []),
    }));
    expect(decoded).toEqual(instructions);
  });

  it("is the v0 message without its version prefix and empty lookup-table list (v0 stays the default)", () => {
    const v0 = compileMessage(payer.address, instructions, blockhash);
    expect(compileMessage(payer.address, instructions, blockhash, "v0")).toEqual(v0);
    expect(Buffer.from(v0.bytes)).toEqual(
      Buffer.concat([Buffer.from([0x80]), legacy.bytes, Buffer.from([0])]),
    );
    expect(v0.signers).toEqual(legacy.signers);
  });

  it("signs as web3.js 1.x does; web3.js cannot read the v0 transaction at all", () => {
    const wire = signedTransaction(legacy, [payer, cosigner]);
    const tx = Transaction.from(wire);
    expect(tx.verifySignatures()).toBe(true);
    expect(Buffer.from(tx.serialize()).equals(Buffer.from(wire))).toBe(true);

    // web3.js signing the unsigned transaction gives the same bytes as the venue's signer.
    const unsigned = Transaction.from(signedTransaction(legacy, []));
    unsigned.partialSign(
      Web3Keypair.fromSecretKey(payer.secretKey),
      Web3Keypair.fromSecretKey(cosigner.secretKey),
    );
    expect(Buffer.from(unsigned.serialize()).equals(Buffer.from(wire))).toBe(true);

    const parsed = parseWireTransaction(wire);
    expect(parsed.version).toBe("legacy");
    expect(parsed.lookups).toEqual([]);
    expect(parsed.accountKeys.map(addressOf)).toEqual(expectedKeys);
    expect(Buffer.from(getTransactionDecoder().decode(wire).messageBytes)).toEqual(Buffer.from(legacy.bytes));

    const v0 = signedTransaction(compileMessage(payer.address, instructions, blockhash), [payer, cosigner]);
    expect(() => Transaction.from(v0)).toThrow(/Versioned messages/);
  });
});
