/**
 * The parts of a transaction's status meta that only execution knows and the stored row did not
 * hold before migration 0014: token balances before and after, inner instructions, return data and
 * the addresses loaded from lookup tables. Captured by the executor (meta-capture.ts), stored as
 * JSON with the transaction, and answered by getTransaction in Agave's `UiTransactionStatusMeta` shapes.
 */
import type { Address } from "@solana/kit";
import { parseAddress } from "../base58.js";

/** One token account's balance, as Agave's `TransactionTokenBalance` holds it. */
export interface TokenBalance {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  amount: bigint;
  decimals: number;
}

/** An instruction a program invoked, its keys as indexes into the transaction's account keys. */
export interface InnerInstructionRecord {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

/** The inner instructions of the top-level instruction at `index` (only those that invoked any). */
export interface InnerInstructionGroup {
  index: number;
  instructions: InnerInstructionRecord[];
}

export interface ReturnDataRecord {
  programId: Address;
  data: Uint8Array;
}

/** What execution adds to the stored transaction (see the module comment). */
export interface TransactionMetaExtras {
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  innerInstructions: InnerInstructionGroup[];
  returnData: ReturnDataRecord | null;
  loadedAddresses: LoadedAddresses;
}

/** The addresses a v0 transaction loaded from lookup tables, as Agave's `loadedAddresses`. */
export interface LoadedAddresses {
  readonly writable: readonly Address[];
  readonly readonly: readonly Address[];
}

/** What a transaction without lookup tables loaded: shared, as nothing may change it. */
export const NOTHING_LOADED: LoadedAddresses = Object.freeze({
  writable: Object.freeze([]),
  readonly: Object.freeze([]),
});

/** What rows stored before migration 0014 answer with: nothing was captured for them. */
export function emptyMetaExtras(): TransactionMetaExtras {
  return {
    preTokenBalances: [],
    postTokenBalances: [],
    innerInstructions: [],
    returnData: null,
    loadedAddresses: { writable: [], readonly: [] },
  };
}

/**
 * The stored form: JSON, amounts as strings and bytes as base64. A balance after whose account held
 * the same mint, owner and program before is stored as its index and amount alone.
 */
export function encodeMetaExtras(extras: TransactionMetaExtras): string {
  const pre = extras.preTokenBalances;
  return JSON.stringify({
    pre: pre.map(storedBalance),
    post: extras.postTokenBalances.map((b) => storedBalanceAfter(b, pre)),
    inner: extras.innerInstructions.map((group) => [
      group.index,
      group.instructions.map((i) => [i.programIdIndex, i.accounts, base64(i.data), i.stackHeight]),
    ]),
    ret: extras.returnData ? [extras.returnData.programId, base64(extras.returnData.data)] : null,
    loaded: [extras.loadedAddresses.writable, extras.loadedAddresses.readonly],
  });
}

// The helpers of the stored form live here, not inside `encodeMetaExtras`: it runs for every
// transaction, and closures made per call are garbage per call.
function storedBalance(b: TokenBalance): StoredBalance {
  return [b.accountIndex, b.mint, b.owner, b.programId, b.amount.toString(), b.decimals];
}

// A transaction holds a few token balances: a scan costs less than building a map of them.
function storedBalanceAfter(b: TokenBalance, pre: readonly TokenBalance[]): StoredBalance | StoredAmount {
  const was = pre.find((one) => one.accountIndex === b.accountIndex);
  const same =
    was !== undefined &&
    was.mint === b.mint &&
    was.owner === b.owner &&
    was.programId === b.programId &&
    was.decimals === b.decimals;
  return same ? [b.accountIndex, b.amount.toString()] : storedBalance(b);
}

type StoredBalance = [number, string, string, string, string, number];
/** A balance after whose mint, owner, program and decimals are its balance before's. */
type StoredAmount = [number, string];
type StoredInner = [number, [number, number[], string, number][]];
interface StoredExtras {
  pre: StoredBalance[];
  post: (StoredBalance | StoredAmount)[];
  inner: StoredInner[];
  ret: [string, string] | null;
  loaded: [string[], string[]];
}

/** Reads the stored form back; a row stored before migration 0014 (null) reads as empty. */
export function decodeMetaExtras(stored: string | null): TransactionMetaExtras {
  if (stored === null) return emptyMetaExtras();
  const json = JSON.parse(stored) as StoredExtras;
  const balance = ([
    accountIndex,
    mint,
    owner,
    programId,
    amount,
    decimals,
  ]: StoredBalance): TokenBalance => ({
    accountIndex,
    mint: parseAddress(mint),
    owner: parseAddress(owner),
    programId: parseAddress(programId),
    amount: BigInt(amount),
    decimals,
  });
  const preTokenBalances = json.pre.map(balance);
  const before = new Map(preTokenBalances.map((b) => [b.accountIndex, b]));
  const after = (stored: StoredBalance | StoredAmount): TokenBalance => {
    if (stored.length !== 2) return balance(stored);
    const [accountIndex, amount] = stored;
    const was = before.get(accountIndex);
    if (!was) throw new Error(`stored token balance of account ${accountIndex} names no balance before`);
    return { ...was, amount: BigInt(amount) };
  };
  return {
    preTokenBalances,
    postTokenBalances: json.post.map(after),
    innerInstructions: json.inner.map(([index, instructions]) => ({
      index,
      instructions: instructions.map(([programIdIndex, accounts, data, stackHeight]) => ({
        programIdIndex,
        accounts,
        data: fromBase64(data),
        stackHeight,
      })),
    })),
    returnData: json.ret ? { programId: parseAddress(json.ret[0]), data: fromBase64(json.ret[1]) } : null,
    loadedAddresses: {
      writable: json.loaded[0].map(parseAddress),
      readonly: json.loaded[1].map(parseAddress),
    },
  };
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "base64"));
}
