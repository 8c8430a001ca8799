/**
 * The `filters` of `getProgramAccounts`, read and applied as Agave does (solana-rpc-client-api's
 * `RpcFilterType`): `{"dataSize": n}`, `{"memcmp": {"offset", "bytes", "encoding"}}` with base58
 * (the default) or base64 bytes, and `"tokenAccountState"`; at most four, every one matching.
 */
import type { Address } from "@solana/kit";
import { Base58Error, decodeBase58 } from "../base58.js";
import type { AccountInfo } from "../chain.js";
import { decodeTokenAccount } from "../token-layout.js";
import { type Config, invalid, isCount } from "./rpc-params.js";

/** Filters one call may carry: Agave's MAX_GET_PROGRAM_ACCOUNT_FILTERS. */
export const MAX_ACCOUNT_FILTERS = 4;
// Agave's bounds on memcmp bytes: 128 decoded, and the longest text that can decode to that.
const MAX_MEMCMP_BYTES = 128;
const MAX_MEMCMP_BASE58_CHARS = 175;
const MAX_MEMCMP_BASE64_CHARS = 172;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type AccountFilter =
  | { kind: "dataSize"; size: number }
  | { kind: "memcmp"; offset: number; bytes: Uint8Array }
  | { kind: "tokenAccountState" };

/** The filters of a getProgramAccounts config, each checked before it is decoded. */
export function accountFiltersOf(config: Config): AccountFilter[] {
  const filters = config.filters ?? [];
  if (!Array.isArray(filters)) throw invalid("Invalid params: filters must be an array");
  if (filters.length > MAX_ACCOUNT_FILTERS) {
    throw invalid(`Too many filters provided; max ${MAX_ACCOUNT_FILTERS}`);
  }
  return filters.map(accountFilterOf);
}

function accountFilterOf(filter: unknown): AccountFilter {
  if (filter === "tokenAccountState") return { kind: "tokenAccountState" };
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw invalid("Invalid params: a filter must be dataSize, memcmp or tokenAccountState");
  }
  const { dataSize, memcmp } = filter as Record<string, unknown>;
  if (Object.keys(filter).length !== 1) throw invalid("Invalid params: a filter names exactly one kind");
  if (dataSize !== undefined) {
    if (!isCount(dataSize)) throw invalid("Invalid params: dataSize must be a non-negative integer");
    return { kind: "dataSize", size: dataSize };
  }
  if (typeof memcmp === "object" && memcmp !== null && !Array.isArray(memcmp)) {
    return memcmpOf(memcmp as Record<string, unknown>);
  }
  throw invalid("Invalid params: a filter must be dataSize, memcmp or tokenAccountState");
}

function memcmpOf(memcmp: Record<string, unknown>): AccountFilter {
  const { offset, bytes, encoding = "base58" } = memcmp;
  if (!isCount(offset)) throw invalid("Invalid params: memcmp offset must be a non-negative integer");
  if (typeof bytes !== "string") throw invalid("Invalid params: memcmp bytes must be a string");
  if (encoding === "base58") return { kind: "memcmp", offset, bytes: base58Bytes(bytes) };
  if (encoding === "base64") return { kind: "memcmp", offset, bytes: base64Bytes(bytes) };
  throw invalid("Invalid params: memcmp encoding must be base58 or base64");
}

function base58Bytes(text: string): Uint8Array {
  if (text.length > MAX_MEMCMP_BASE58_CHARS) throw invalid("Invalid param: DataTooLarge");
  try {
    return decodeBase58(text, MAX_MEMCMP_BYTES);
  } catch (error) {
    if (error instanceof Base58Error && error.kind === "size") throw invalid("Invalid param: DataTooLarge");
    throw invalid("Invalid param: Base58DecodeError");
  }
}

function base64Bytes(text: string): Uint8Array {
  if (text.length > MAX_MEMCMP_BASE64_CHARS) throw invalid("Invalid param: DataTooLarge");
  if (!BASE64.test(text)) throw invalid("Invalid param: Base64DecodeError");
  const bytes = new Uint8Array(Buffer.from(text, "base64"));
  if (bytes.length > MAX_MEMCMP_BYTES) throw invalid("Invalid param: DataTooLarge");
  return bytes;
}

/** Whether `account` at `address` passes every filter. */
export function passesFilters(address: Address, account: AccountInfo, filters: readonly AccountFilter[]) {
  return filters.every((filter) => passes(address, account, filter));
}

function passes(address: Address, account: AccountInfo, filter: AccountFilter): boolean {
  if (filter.kind === "dataSize") return account.data.length === filter.size;
  if (filter.kind === "tokenAccountState") {
    return decodeTokenAccount(address, account.owner, account.data) !== null;
  }
  const { offset, bytes } = filter;
  if (offset + bytes.length > account.data.length) return false;
  return bytes.every((byte, i) => account.data[offset + i] === byte);
}

/** The 32 bytes a filter requires at `offset` (a token account's mint at 0, owner at 32), if any. */
export function keyRequiredAt(filters: readonly AccountFilter[], offset: number): Uint8Array | null {
  for (const filter of filters) {
    if (filter.kind === "memcmp" && filter.offset === offset && filter.bytes.length === 32)
      return filter.bytes;
  }
  return null;
}
