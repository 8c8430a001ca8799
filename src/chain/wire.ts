/**
 * A direct reader of Solana's wire transaction format (legacy and v0). The sandbox's hot path needs
 * only offsets and account indexes, which is cheaper to read by hand than through kit's codecs.
 */
import { hash } from "node:crypto";
import type { Signature } from "@solana/kit";
import { WIRE_LIMITS } from "../limits.js";
import { Base58Error, decodeBase58, encodeSignature } from "./base58.js";
import { ChainError } from "./errors.js";

export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
}

export interface CompiledInstruction {
  programIdIndex: number;
  accounts: Uint8Array;
  data: Uint8Array;
}

export interface AddressTableLookup {
  tableKey: Uint8Array;
  writableIndexes: Uint8Array;
  readonlyIndexes: Uint8Array;
}

export interface WireTransaction {
  signatures: Uint8Array[];
  /** The signed bytes. */
  message: Uint8Array;
  version: "legacy" | 0;
  header: MessageHeader;
  accountKeys: Uint8Array[];
  recentBlockhash: Uint8Array;
  instructions: CompiledInstruction[];
  lookups: AddressTableLookup[];
}

class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  byte(): number {
    const value = this.bytes[this.offset];
    if (value === undefined) throw malformed("unexpected end of transaction");
    this.offset += 1;
    return value;
  }

  /** Solana's compact-u16 ("shortvec") length prefix. */
  shortVec(): number {
    let value = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const byte = this.byte();
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        // As Agave's short_vec: one encoding per value (LiteSVM aborts the process on another) and u16.
        if (shift > 0 && byte === 0) throw malformed("length prefix is not minimally encoded");
        if (value > 0xffff) throw malformed("length prefix is beyond u16");
        return value;
      }
    }
    throw malformed("length prefix is too long");
  }

  take(length: number): Uint8Array {
    if (this.offset + length > this.bytes.length) throw malformed("unexpected end of transaction");
    const slice = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return slice;
  }
}

function malformed(reason: string): ChainError {
  return ChainError.invalidParams(`invalid transaction: ${reason}`);
}

/** Parses a signed wire transaction; throws a -32602 ChainError when it is not one. */
export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  const reader = new Reader(bytes);
  const signatureCount = reader.shortVec();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < signatureCount; i++) signatures.push(reader.take(64));
  const messageStart = reader.offset;
  const first = reader.byte();
  let version: "legacy" | 0 = "legacy";
  let numRequiredSignatures = first;
  if (first & 0x80) {
    if ((first & 0x7f) !== 0) throw malformed(`unsupported transaction version ${first & 0x7f}`);
    version = 0;
    numRequiredSignatures = reader.byte();
  }
  const header: MessageHeader = {
    numRequiredSignatures,
    numReadonlySigned: reader.byte(),
    numReadonlyUnsigned: reader.byte(),
  };
  const keyCount = reader.shortVec();
  const accountKeys: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i++) accountKeys.push(reader.take(32));
  const recentBlockhash = reader.take(32);
  const instructionCount = reader.shortVec();
  const instructions: CompiledInstruction[] = [];
  for (let i = 0; i < instructionCount; i++) {
    const programIdIndex = reader.byte();
    const accounts = reader.take(reader.shortVec());
    const data = reader.take(reader.shortVec());
    instructions.push({ programIdIndex, accounts, data });
  }
  const lookups: AddressTableLookup[] = [];
  if (version === 0) {
    const lookupCount = reader.shortVec();
    for (let i = 0; i < lookupCount; i++) {
      const tableKey = reader.take(32);
      const writableIndexes = reader.take(reader.shortVec());
      const readonlyIndexes = reader.take(reader.shortVec());
      lookups.push({ tableKey, writableIndexes, readonlyIndexes });
    }
  }
  if (reader.offset !== bytes.length) throw malformed("trailing bytes after the message");
  const message = bytes.subarray(messageStart);
  sanitize({ signatures, header, accountKeys, instructions, lookups });
  return { signatures, message, version, header, accountKeys, recentBlockhash, instructions, lookups };
}

// The structural checks Solana's sanitize() makes, so that indexes can be trusted afterwards.
function sanitize(
  tx: Pick<WireTransaction, "signatures" | "header" | "accountKeys" | "instructions" | "lookups">,
) {
  const { header, accountKeys } = tx;
  const loadedCount = tx.lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  const totalKeys = accountKeys.length + loadedCount;
  if (header.numRequiredSignatures === 0) throw malformed("a transaction needs a fee payer signature");
  if (tx.signatures.length !== header.numRequiredSignatures) {
    throw malformed(
      `expected ${header.numRequiredSignatures} signatures, got ${tx.signatures.length} (signature count mismatch)`,
    );
  }
  if (
    header.numReadonlySigned >= header.numRequiredSignatures ||
    header.numRequiredSignatures + header.numReadonlyUnsigned > accountKeys.length ||
    totalKeys > 256
  ) {
    throw malformed("Transaction failed to sanitize accounts offsets correctly");
  }
  for (const instruction of tx.instructions) {
    if (instruction.programIdIndex === 0 || instruction.programIdIndex >= accountKeys.length) {
      throw malformed("Transaction failed to sanitize accounts offsets correctly");
    }
    for (const index of instruction.accounts) {
      if (index >= totalKeys) throw malformed("Transaction failed to sanitize accounts offsets correctly");
    }
  }
}

/** Whether the static account key at `index` is writable according to the message header. */
export function isStaticKeyWritable(tx: WireTransaction, index: number): boolean {
  const { numRequiredSignatures, numReadonlySigned, numReadonlyUnsigned } = tx.header;
  if (index < numRequiredSignatures) return index < numRequiredSignatures - numReadonlySigned;
  return index < tx.accountKeys.length - numReadonlyUnsigned;
}

// Each parsed transaction's id, encoded once: the RPC answer and the executor both name it.
const ids = new WeakMap<WireTransaction, Signature>();

/** The first signature, base58: the transaction's id. */
export function transactionId(tx: WireTransaction): Signature {
  const known = ids.get(tx);
  if (known !== undefined) return known;
  const first = tx.signatures[0];
  if (!first) throw malformed("a transaction needs a fee payer signature");
  const id = encodeSignature(first);
  ids.set(tx, id);
  return id;
}

/**
 * The hash a transaction's message is known by however often it is re-signed: Ed25519 lets a signer
 * make many valid signatures of one message, so a chain that remembers only signatures executes a
 * re-signed copy again (Agave's status cache keeps both; it hashes with BLAKE3, which node:crypto
 * lacks, and the hash never leaves the sandbox). SHA-256, base64.
 */
export function messageHash(tx: Pick<WireTransaction, "message">): string {
  return hash("sha256", tx.message, "base64");
}

/**
 * Decodes a base58 or base64 wire transaction as sent to `sendTransaction`. Its length is checked
 * before it is decoded (WIRE_LIMITS): a transaction never exceeds Solana's packet size.
 */
export function decodeWireTransaction(encoded: string, encoding: "base58" | "base64"): Uint8Array {
  const maxChars =
    encoding === "base64" ? WIRE_LIMITS.transactionBase64Chars : WIRE_LIMITS.transactionBase58Chars;
  if (encoded.length > maxChars) throw tooLarge(encoding, encoded.length, maxChars);
  if (encoding === "base64") {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw malformed("invalid base64 encoding");
    const bytes = new Uint8Array(Buffer.from(encoded, "base64"));
    if (bytes.length > WIRE_LIMITS.transactionBytes) throw tooLarge(encoding, encoded.length, maxChars);
    return bytes;
  }
  try {
    return decodeBase58(encoded, WIRE_LIMITS.transactionBytes);
  } catch (error) {
    if (error instanceof Base58Error && error.kind === "size")
      throw tooLarge(encoding, encoded.length, maxChars);
    throw malformed("invalid base58 encoding");
  }
}

// Solana's own words for an oversized transaction.
function tooLarge(encoding: string, chars: number, maxChars: number): ChainError {
  return ChainError.invalidParams(
    `${encoding} encoded solana_transaction::versioned::VersionedTransaction too large: ${chars} bytes (max: encoded/raw ${maxChars}/${WIRE_LIMITS.transactionBytes})`,
  );
}
