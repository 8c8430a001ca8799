/**
 * A landed transaction and its status meta in the encodings of the Solana JSON-RPC (`json`,
 * `jsonParsed`, `base64`, `base58`), in Agave's `EncodedTransactionWithStatusMeta` shapes: what
 * getTransaction answers, and what getBlock answers per transaction.
 */
import type { Address } from "@solana/kit";
import { addressOf, encodeBase58 } from "../base58.js";
import { ChainError, type TransactionError } from "../errors.js";
import { isStaticKeyWritable, parseWireTransaction, type WireTransaction } from "../wire.js";
import { parseInstruction } from "./parsed-instructions.js";
import { tokenAmount } from "./rpc-encoding.js";
import type {
  InnerInstructionGroup,
  ReturnDataRecord,
  TokenBalance,
  TransactionMetaExtras,
} from "./transaction-meta.js";

export type TransactionEncoding = "json" | "jsonParsed" | "base64" | "base58";

/** What a landed transaction holds that its encoding reads. */
export interface EncodableTransaction {
  wire: Uint8Array;
  err: TransactionError | null;
  fee: bigint;
  preBalances: readonly bigint[];
  postBalances: readonly bigint[];
  logs: readonly string[];
  computeUnitsConsumed: bigint;
  meta: TransactionMetaExtras;
}

/** The client's `encoding`, checked: -32602 for any other value (a string cut short in the message). */
export function transactionEncodingOf(value: unknown): TransactionEncoding {
  const encoding = value ?? "json";
  if (encoding === "json" || encoding === "jsonParsed" || encoding === "base64" || encoding === "base58") {
    return encoding;
  }
  const shown = typeof encoding === "string" ? JSON.stringify(encoding.slice(0, 40)) : typeof encoding;
  throw ChainError.invalidParams(`Invalid params: unknown encoding ${shown}`);
}

/**
 * `{transaction, meta, version}` as Agave encodes one transaction. `version` is given only when the
 * client named a `maxSupportedTransactionVersion`; a v0 transaction without one is -32015, as Agave.
 */
export function encodeTransactionWithMeta(
  record: EncodableTransaction,
  encoding: TransactionEncoding,
  maxSupportedTransactionVersion: number | undefined,
) {
  const tx = parseWireTransaction(record.wire);
  if (
    tx.version === 0 &&
    (maxSupportedTransactionVersion === undefined || maxSupportedTransactionVersion < 0)
  ) {
    throw new ChainError(
      -32015,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  const encoded = {
    transaction: encodeTransaction(tx, record, encoding),
    meta: encoding === "jsonParsed" ? parsedMeta(tx, record) : jsonMeta(record),
  };
  return maxSupportedTransactionVersion === undefined ? encoded : { ...encoded, version: tx.version };
}

function encodeTransaction(tx: WireTransaction, record: EncodableTransaction, encoding: TransactionEncoding) {
  if (encoding === "base64") return [Buffer.from(record.wire).toString("base64"), "base64"];
  if (encoding === "base58") return [encodeBase58(record.wire), "base58"];
  const signatures = tx.signatures.map((signature) => encodeBase58(signature));
  const message = encoding === "jsonParsed" ? parsedMessage(tx, record.meta) : jsonMessage(tx);
  return { signatures, message };
}

// The `json` message: keys as strings, instructions compiled.
function jsonMessage(tx: WireTransaction) {
  const message: Record<string, unknown> = {
    accountKeys: tx.accountKeys.map((key) => encodeBase58(key)),
    header: {
      numReadonlySignedAccounts: tx.header.numReadonlySigned,
      numReadonlyUnsignedAccounts: tx.header.numReadonlyUnsigned,
      numRequiredSignatures: tx.header.numRequiredSignatures,
    },
    recentBlockhash: encodeBase58(tx.recentBlockhash),
    instructions: tx.instructions.map((instruction) => ({
      programIdIndex: instruction.programIdIndex,
      accounts: Array.from(instruction.accounts),
      data: encodeBase58(instruction.data),
      stackHeight: null,
    })),
  };
  return withLookups(tx, message);
}

// Agave's `UiParsedMessage`: keys as `{pubkey, writable, signer, source}`, instructions parsed.
function parsedMessage(tx: WireTransaction, meta: TransactionMetaExtras) {
  const keys = accountKeysOf(tx, meta);
  const staticKeys = tx.accountKeys.map((key, i) => ({
    pubkey: addressOf(key),
    writable: isStaticKeyWritable(tx, i),
    signer: i < tx.header.numRequiredSignatures,
    source: "transaction",
  }));
  const loaded = [
    ...meta.loadedAddresses.writable.map((pubkey) => ({ pubkey, writable: true })),
    ...meta.loadedAddresses.readonly.map((pubkey) => ({ pubkey, writable: false })),
  ].map((key) => ({ ...key, signer: false, source: "lookupTable" }));
  const message: Record<string, unknown> = {
    accountKeys: [...staticKeys, ...loaded],
    recentBlockhash: encodeBase58(tx.recentBlockhash),
    instructions: tx.instructions.map((instruction) =>
      parseInstruction({
        programId: keyAt(keys, instruction.programIdIndex),
        accounts: resolveAccounts(keys, instruction.accounts),
        data: instruction.data,
        stackHeight: null,
      }),
    ),
  };
  return withLookups(tx, message);
}

// A v0 message's lookups; a legacy message has no such field.
function withLookups(tx: WireTransaction, message: Record<string, unknown>) {
  if (tx.version !== 0) return message;
  message.addressTableLookups = tx.lookups.map((lookup) => ({
    accountKey: encodeBase58(lookup.tableKey),
    writableIndexes: Array.from(lookup.writableIndexes),
    readonlyIndexes: Array.from(lookup.readonlyIndexes),
  }));
  return message;
}

// Every account key in message order: static, then loaded writable, then loaded read-only.
function accountKeysOf(tx: WireTransaction, meta: TransactionMetaExtras): Address[] {
  return [
    ...tx.accountKeys.map((key) => addressOf(key)),
    ...meta.loadedAddresses.writable,
    ...meta.loadedAddresses.readonly,
  ];
}

// A key by index. Rows stored before migration 0014 lack loaded addresses: such an index has none.
function keyAt(keys: readonly Address[], index: number): Address {
  return keys[index] ?? ("" as Address);
}

function resolveAccounts(keys: readonly Address[], indexes: Iterable<number>): Address[] {
  return Array.from(indexes, (index) => keyAt(keys, index));
}

function statusOf(err: TransactionError | null) {
  return err === null ? { Ok: null } : { Err: err };
}

// The fields `json` and `jsonParsed` meta share.
function commonMeta(record: EncodableTransaction) {
  const { meta } = record;
  const common: Record<string, unknown> = {
    err: record.err,
    status: statusOf(record.err),
    fee: Number(record.fee),
    preBalances: record.preBalances.map(Number),
    postBalances: record.postBalances.map(Number),
    logMessages: [...record.logs],
    preTokenBalances: meta.preTokenBalances.map(tokenBalanceJson),
    postTokenBalances: meta.postTokenBalances.map(tokenBalanceJson),
    rewards: [],
    computeUnitsConsumed: Number(record.computeUnitsConsumed),
  };
  // Agave leaves returnData out when no program set any.
  if (meta.returnData) common.returnData = returnDataJson(meta.returnData);
  return common;
}

/** Agave's `UiTransactionStatusMeta` for the `json` and binary encodings. */
function jsonMeta(record: EncodableTransaction) {
  return {
    ...commonMeta(record),
    innerInstructions: record.meta.innerInstructions.map(compiledInnerGroup),
    loadedAddresses: {
      writable: [...record.meta.loadedAddresses.writable],
      readonly: [...record.meta.loadedAddresses.readonly],
    },
  };
}

/** The `jsonParsed` meta: inner instructions parsed; Agave leaves loadedAddresses out (the keys say it). */
function parsedMeta(tx: WireTransaction, record: EncodableTransaction) {
  const keys = accountKeysOf(tx, record.meta);
  return {
    ...commonMeta(record),
    innerInstructions: parsedInnerInstructions(record.meta.innerInstructions, keys),
  };
}

/** Inner instructions parsed as `jsonParsed` answers them (simulateTransaction too), keys resolved. */
export function parsedInnerInstructions(groups: readonly InnerInstructionGroup[], keys: readonly Address[]) {
  return groups.map((group) => ({
    index: group.index,
    instructions: group.instructions.map((instruction) =>
      parseInstruction({
        programId: keyAt(keys, instruction.programIdIndex),
        accounts: resolveAccounts(keys, instruction.accounts),
        data: instruction.data,
        stackHeight: instruction.stackHeight,
      }),
    ),
  }));
}

function compiledInnerGroup(group: InnerInstructionGroup) {
  return {
    index: group.index,
    instructions: group.instructions.map((instruction) => ({
      programIdIndex: instruction.programIdIndex,
      accounts: instruction.accounts,
      data: encodeBase58(instruction.data),
      stackHeight: instruction.stackHeight,
    })),
  };
}

/** Agave's `UiTransactionReturnData`. */
export function returnDataJson(returnData: ReturnDataRecord) {
  return {
    programId: returnData.programId,
    data: [Buffer.from(returnData.data).toString("base64"), "base64"],
  };
}

/** Agave's `UiTransactionTokenBalance`. */
export function tokenBalanceJson(balance: TokenBalance) {
  return {
    accountIndex: balance.accountIndex,
    mint: balance.mint,
    owner: balance.owner,
    programId: balance.programId,
    uiTokenAmount: tokenAmount(balance.amount, balance.decimals),
  };
}
