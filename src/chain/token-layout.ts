/**
 * The binary layouts of SPL Token and Token-2022 mints and token accounts (the base part both
 * programs share; Token-2022 extensions follow it and are not read).
 */
import type { Address } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "./base58.js";
import type { MintInfo, TokenAccount, TokenAccountState } from "./chain.js";
import { isTokenProgram } from "./programs.js";

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
// Token-2022 pads extended mints to the token-account size and tags both kinds at this offset.
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

/** What a token program's account holds, judged from its size (and Token-2022's type tag). */
export function tokenAccountKind(owner: string, data: Uint8Array): "mint" | "account" | null {
  if (!isTokenProgram(owner)) return null;
  if (data.length === MINT_SIZE) return "mint";
  if (data.length === TOKEN_ACCOUNT_SIZE) return "account";
  if (data.length > ACCOUNT_TYPE_OFFSET) {
    const tag = data[ACCOUNT_TYPE_OFFSET];
    if (tag === ACCOUNT_TYPE_MINT) return "mint";
    if (tag === ACCOUNT_TYPE_ACCOUNT) return "account";
  }
  return null;
}

/**
 * Whether `data` is shaped like a token account of either token program (its owner not checked):
 * lets a hot path skip reading the owner of accounts that cannot be one.
 */
export function hasTokenAccountShape(data: Uint8Array): boolean {
  return (
    data.length === TOKEN_ACCOUNT_SIZE ||
    (data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === ACCOUNT_TYPE_ACCOUNT)
  );
}

/** The amount of an initialized token account owned by `programId`; null when the data is not one. */
export function tokenAccountAmount(programId: string, data: Uint8Array): bigint | null {
  if (tokenAccountKind(programId, data) !== "account" || !data[108]) return null;
  return view(data).getBigUint64(64, true);
}

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

function key(data: Uint8Array, offset: number): Address {
  return addressOf(data.subarray(offset, offset + 32));
}

function optionalKey(data: Uint8Array, tagOffset: number): Address | null {
  return view(data).getUint32(tagOffset, true) === 1 ? key(data, tagOffset + 4) : null;
}

const STATES: TokenAccountState[] = ["uninitialized", "initialized", "frozen"];

/** Decodes a token account owned by `programId`; null when the data is not an initialized token account. */
export function decodeTokenAccount(
  address: Address,
  programId: Address,
  data: Uint8Array,
): TokenAccount | null {
  if (tokenAccountKind(programId, data) !== "account") return null;
  const dv = view(data);
  const state = STATES[data[108] ?? 0] ?? "uninitialized";
  if (state === "uninitialized") return null;
  const isNative = dv.getUint32(109, true) === 1;
  return {
    address,
    programId,
    mint: key(data, 0),
    owner: key(data, 32),
    amount: dv.getBigUint64(64, true),
    delegate: optionalKey(data, 72),
    state,
    isNative,
    rentExemptReserve: isNative ? dv.getBigUint64(113, true) : null,
    delegatedAmount: dv.getBigUint64(121, true),
    closeAuthority: optionalKey(data, 129),
  };
}

/** Decodes a mint owned by `programId`; null when the data is not a mint. */
export function decodeMint(address: Address, programId: Address, data: Uint8Array): MintInfo | null {
  if (tokenAccountKind(programId, data) !== "mint") return null;
  const dv = view(data);
  return {
    address,
    programId,
    mintAuthority: optionalKey(data, 0),
    supply: dv.getBigUint64(36, true),
    decimals: data[44] ?? 0,
    isInitialized: data[45] === 1,
    freezeAuthority: optionalKey(data, 46),
  };
}

/** The token account's mint and owner, read without decoding the rest (for indexing). */
export function tokenAccountMintAndOwner(data: Uint8Array): { mint: Address; owner: Address } {
  return { mint: addressOf(data.subarray(0, 32)), owner: addressOf(data.subarray(32, 64)) };
}

/** Encodes an initialized mint with no extensions (valid for both token programs). */
export function encodeMint(mint: {
  mintAuthority: Address | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: Address | null;
}): Uint8Array {
  const data = new Uint8Array(MINT_SIZE);
  const dv = view(data);
  if (mint.mintAuthority) {
    dv.setUint32(0, 1, true);
    data.set(decodeAddressBytes(mint.mintAuthority), 4);
  }
  dv.setBigUint64(36, mint.supply, true);
  data[44] = mint.decimals;
  data[45] = 1;
  if (mint.freezeAuthority) {
    dv.setUint32(46, 1, true);
    data.set(decodeAddressBytes(mint.freezeAuthority), 50);
  }
  return data;
}
