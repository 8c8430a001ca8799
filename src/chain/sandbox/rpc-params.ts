/**
 * Reading a JSON-RPC call's params: each checked (type, size, digits) before it is used, refused with
 * -32602 in a node's words otherwise. Shared by every module of methods (rpc-methods.ts and beside it).
 */
import type { Address, Signature } from "@solana/kit";
import type { AccountInfo } from "../chain.js";
import { ChainError } from "../errors.js";
import {
  type AccountEncoding,
  assertAddressParam,
  assertSignatureParam,
  type DataSlice,
} from "./rpc-encoding.js";

export type Params = unknown[];
export type Config = Record<string, unknown>;
/** One JSON-RPC method: its params in, its result out (or a ChainError thrown). */
export type RpcMethod = (params: Params) => Promise<unknown>;

export function invalid(message: string): ChainError {
  return ChainError.invalidParams(message);
}

export function stringParam(params: Params, index: number, name: string): string {
  const value = params[index];
  if (typeof value !== "string") throw invalid(`Invalid params: ${name} must be a string`);
  return value;
}

export function configParam(params: Params, index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid("Invalid params: config must be an object");
  return value as Config;
}

export function addressParam(params: Params, index: number, name = "pubkey"): Address {
  const value = stringParam(params, index, name);
  assertAddressParam(value);
  return value;
}

export function signatureParam(params: Params, index: number): Signature {
  const value = stringParam(params, index, "signature");
  assertSignatureParam(value);
  return value;
}

// A client's value quoted in an error message, cut short: messages must not echo a huge input.
export function quoted(value: unknown): string {
  if (typeof value !== "string") return value === null ? "null" : typeof value;
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}

export function u64Param(params: Params, index: number, name: string): bigint {
  const value = params[index];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`Invalid params: ${name} must be a non-negative integer`);
  }
  return BigInt(value);
}

export function encodingOf(config: Config, fallback: AccountEncoding): AccountEncoding {
  const encoding = config.encoding ?? fallback;
  if (
    encoding !== "base64" &&
    encoding !== "base58" &&
    encoding !== "jsonParsed" &&
    encoding !== "base64+zstd"
  ) {
    throw invalid(`Invalid params: unknown encoding ${quoted(encoding)}`);
  }
  return encoding;
}

export function dataSliceOf(config: Config): DataSlice | undefined {
  const slice = config.dataSlice;
  if (slice === undefined || slice === null) return undefined;
  const { offset, length } = typeof slice === "object" ? (slice as Record<string, unknown>) : {};
  if (!isCount(offset) || !isCount(length)) {
    throw invalid("Invalid params: dataSlice needs non-negative integer offset and length");
  }
  return { offset, length };
}

export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Encodes accounts as a method's config asks (`encoding`, `dataSlice`), falling back to `fallback`. */
export type AccountEncoder = (
  address: Address,
  config: Config,
  fallback: AccountEncoding,
) => (account: AccountInfo | null) => unknown;

/** Wraps a method's value in Solana's `{context: {slot, apiVersion}, value}`. */
export type WithContext = (value: unknown) => Promise<{ context: unknown; value: unknown }>;

/** A boolean flag of a method's config: absent is false, anything but a boolean is refused. */
export function flagOf(config: Config, name: string): boolean {
  const value = config[name] ?? false;
  if (typeof value !== "boolean") throw invalid(`Invalid params: ${name} must be a boolean`);
  return value;
}
