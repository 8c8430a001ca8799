/**
 * Account encodings of the Solana JSON-RPC: `base64`, `base58`, `base64+zstd` and `jsonParsed`, with
 * SPL Token and Token-2022 mints and token accounts parsed the way a real node parses them.
 */
import type { Address, Blockhash, Signature } from "@solana/kit";
import { Base58Error, decodeAddressBytes, decodeSignatureBytes, encodeBase58 } from "../base58.js";
import type { AccountInfo } from "../chain.js";
import { ChainError } from "../errors.js";
import { SYSTEM_PROGRAM, TOKEN_2022_PROGRAM } from "../programs.js";
import { decodeMint, decodeTokenAccount, tokenAccountKind } from "../token-layout.js";
import { uiAmountString } from "../ui-amount.js";
import { parseTokenExtensions } from "./token-extensions.js";
import { zstdCompress } from "./zstd.js";

export type AccountEncoding = "base64" | "base58" | "jsonParsed" | "base64+zstd";

export interface DataSlice {
  offset: number;
  length: number;
}

/** Reads a mint's decimals, for parsing the token accounts of that mint. */
export type DecimalsLookup = (mint: Address) => number | undefined;

// Base58 is only offered for small accounts, as on a real node.
const MAX_BASE58_BYTES = 128;

// A node's words for a bad key or signature: "WrongSize" for a bad length, "Invalid" for bad digits.
function paramError(error: unknown): ChainError {
  const size = error instanceof Base58Error && error.kind === "size";
  return ChainError.invalidParams(`Invalid param: ${size ? "WrongSize" : "Invalid"}`);
}

/** The 32 bytes of a client's base58 address, its length checked first; -32602 when it is not one. */
export function decodeAddressParam(text: string): Uint8Array {
  try {
    return decodeAddressBytes(text);
  } catch (error) {
    throw paramError(error);
  }
}

/** Checks a client's text is a base58 address (see decodeAddressParam). */
export function assertAddressParam(text: string): asserts text is Address {
  decodeAddressParam(text);
}

/** Checks a client's text is a base58 blockhash: 32 bytes, like an address. */
export function assertBlockhashParam(text: string): asserts text is Blockhash {
  decodeAddressParam(text);
}

/** Checks a client's text is a base58 signature, its length first; -32602 when it is not one. */
export function assertSignatureParam(text: string): asserts text is Signature {
  try {
    decodeSignatureBytes(text);
  } catch (error) {
    throw paramError(error);
  }
}

/** Solana's `UiTokenAmount`. */
export function tokenAmount(amount: bigint, decimals: number) {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
}

/** An account in the JSON-RPC's `UiAccount` shape. */
export function encodeAccount(
  address: Address,
  account: AccountInfo,
  encoding: AccountEncoding,
  decimalsOf: DecimalsLookup,
  slice?: DataSlice,
) {
  const base = {
    lamports: Number(account.lamports),
    owner: account.owner,
    executable: account.executable,
    rentEpoch: 0,
    space: account.data.length,
  };
  if (encoding === "jsonParsed") {
    const parsed = parseTokenData(address, account, decimalsOf) ?? parseNonceData(account);
    if (parsed) return { ...base, data: parsed };
  }
  const data = slice ? account.data.subarray(slice.offset, slice.offset + slice.length) : account.data;
  if (encoding === "base58") {
    if (data.length > MAX_BASE58_BYTES) {
      throw ChainError.invalidParams(
        "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
      );
    }
    return { ...base, data: [encodeBase58(data), "base58"] };
  }
  if (encoding === "base64+zstd") {
    return { ...base, data: [Buffer.from(zstdCompress(data)).toString("base64"), "base64+zstd"] };
  }
  return { ...base, data: [Buffer.from(data).toString("base64"), "base64"] };
}

function parseTokenData(address: Address, account: AccountInfo, decimalsOf: DecimalsLookup) {
  const kind = tokenAccountKind(account.owner, account.data);
  if (!kind) return null;
  const program = account.owner === TOKEN_2022_PROGRAM ? "spl-token-2022" : "spl-token";
  const space = account.data.length;
  if (kind === "mint") {
    const mint = decodeMint(address, account.owner, account.data);
    if (!mint) return null;
    return {
      program,
      parsed: {
        type: "mint",
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority,
          isInitialized: mint.isInitialized,
          mintAuthority: mint.mintAuthority,
          supply: mint.supply.toString(),
          ...extensionsOf(account),
        },
      },
      space,
    };
  }
  const token = decodeTokenAccount(address, account.owner, account.data);
  if (!token) return null;
  const decimals = decimalsOf(token.mint);
  if (decimals === undefined) return null;
  const info: Record<string, unknown> = {
    isNative: token.isNative,
    mint: token.mint,
    owner: token.owner,
    state: token.state,
    tokenAmount: tokenAmount(token.amount, decimals),
  };
  if (token.delegate) {
    info.delegate = token.delegate;
    info.delegatedAmount = tokenAmount(token.delegatedAmount, decimals);
  }
  if (token.closeAuthority) info.closeAuthority = token.closeAuthority;
  if (token.rentExemptReserve !== null) info.rentExemptReserve = tokenAmount(token.rentExemptReserve, 9);
  return { program, parsed: { type: "account", info: { ...info, ...extensionsOf(account) } }, space };
}

/** A Token-2022 account's extensions (token-extensions.ts); nothing for SPL Token or an account without any. */
function extensionsOf(account: AccountInfo): { extensions?: unknown[] } {
  if (account.owner !== TOKEN_2022_PROGRAM) return {};
  const extensions = parseTokenExtensions(account.data);
  return extensions.length > 0 ? { extensions } : {};
}

// A durable nonce account: 80 bytes owned by the System program.
const NONCE_ACCOUNT_SIZE = 80;

/** A System-owned nonce account in Agave's `nonce` parsed shape; null for any other account. */
function parseNonceData(account: AccountInfo) {
  if (account.owner !== SYSTEM_PROGRAM || account.data.length !== NONCE_ACCOUNT_SIZE) return null;
  const view = new DataView(account.data.buffer, account.data.byteOffset, account.data.byteLength);
  const space = NONCE_ACCOUNT_SIZE;
  if (view.getUint32(4, true) !== 1) return { program: "nonce", parsed: { type: "uninitialized" }, space };
  const info = {
    authority: encodeBase58(account.data.subarray(8, 40)),
    blockhash: encodeBase58(account.data.subarray(40, 72)),
    feeCalculator: { lamportsPerSignature: view.getBigUint64(72, true).toString() },
  };
  return { program: "nonce", parsed: { type: "initialized", info }, space };
}
