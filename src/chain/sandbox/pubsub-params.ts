/**
 * Reads the params of the PubSub's subscribe methods as a validator reads them: a logs filter, a
 * program subscription's config (encoding, filters, data slice, commitment) and a signature
 * subscription's config. Each input is bounded before it is decoded; a bad one is -32602.
 */
import type { Address } from "@solana/kit";
import { Base58Error, decodeBase58 } from "../base58.js";
import { ChainError } from "../errors.js";
import type { ProgramFilter } from "./pubsub-registry.js";
import { type AccountEncoding, assertAddressParam, type DataSlice } from "./rpc-encoding.js";

/** Filters one program subscription may hold: Solana's MAX_GET_PROGRAM_ACCOUNT_FILTERS. */
export const MAX_PROGRAM_FILTERS = 4;
/** Bytes one memcmp filter may compare: Solana's MAX_DATA_SIZE for filters. */
export const MAX_MEMCMP_BYTES = 128;
/** The largest account Solana allows (MAX_PERMITTED_DATA_LENGTH): bounds sizes and offsets. */
export const MAX_ACCOUNT_BYTES = 10 * 1024 * 1024;
const MAX_MEMCMP_BASE64_CHARS = Math.ceil(MAX_MEMCMP_BYTES / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const COMMITMENTS = new Set<unknown>(["processed", "confirmed", "finalized"]);
const ACCOUNT_ENCODINGS = new Set<unknown>(["base64", "base58", "jsonParsed", "base64+zstd"]);

type Config = Record<string, unknown>;

function invalid(message: string): ChainError {
  return ChainError.invalidParams(`Invalid params: ${message}`);
}

function isObject(value: unknown): value is Config {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An optional config object (absent or null: empty), its commitment checked. */
export function configOf(value: unknown): Config {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalid("config must be an object");
  // Every commit is final here, so any level notifies at once; an unknown one is still refused.
  if (value.commitment !== undefined && !COMMITMENTS.has(value.commitment)) {
    throw invalid("commitment must be processed, confirmed or finalized");
  }
  return value;
}

export function isAccountEncoding(value: unknown): value is AccountEncoding {
  return ACCOUNT_ENCODINGS.has(value);
}

function addressOfParam(value: unknown, what: string): Address {
  if (typeof value !== "string") throw invalid(`${what} must be a base58 address`);
  assertAddressParam(value);
  return value;
}

/** `logsSubscribe`'s filter: null for every transaction, or the one address they must mention. */
export function logsFilterOf(filter: unknown): Address | null {
  if (filter === "all" || filter === "allWithVotes") return null;
  if (!isObject(filter) || !("mentions" in filter)) {
    throw invalid('the filter must be "all", "allWithVotes" or {"mentions": [address]}');
  }
  const mentions = filter.mentions;
  if (!Array.isArray(mentions)) throw invalid("mentions must be an array of one address");
  // Agave's own words: one address per subscription.
  if (mentions.length !== 1) throw ChainError.invalidParams("Invalid Request: Only 1 address supported");
  return addressOfParam(mentions[0], "mentions");
}

/** Whether a signature subscription asked for a `receivedSignature` notification first. */
export function notifyReceivedOf(config: Config): boolean {
  const flag = config.enableReceivedNotification;
  if (flag !== undefined && typeof flag !== "boolean")
    throw invalid("enableReceivedNotification must be a boolean");
  return flag === true;
}

/** What `programSubscribe`'s params name: the program and how its accounts are filtered and encoded. */
export interface ProgramSubscriptionParams {
  program: Address;
  encoding: AccountEncoding;
  filters: ProgramFilter[];
  slice: DataSlice | undefined;
}

export function programParamsOf(params: unknown[]): ProgramSubscriptionParams {
  const program = addressOfParam(params[0], "the program id");
  const config = configOf(params[1]);
  const encoding = config.encoding ?? "base64";
  if (!isAccountEncoding(encoding)) throw invalid("unknown encoding");
  return { program, encoding, filters: filtersOf(config.filters), slice: sliceOf(config.dataSlice) };
}

function boundedInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_ACCOUNT_BYTES) {
    throw invalid(`${what} must be an integer from 0 to ${MAX_ACCOUNT_BYTES}`);
  }
  return value;
}

function sliceOf(value: unknown): DataSlice | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw invalid("dataSlice must be an object");
  return {
    offset: boundedInteger(value.offset, "dataSlice.offset"),
    length: boundedInteger(value.length, "dataSlice.length"),
  };
}

function filtersOf(value: unknown): ProgramFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid("filters must be an array");
  if (value.length > MAX_PROGRAM_FILTERS) {
    throw ChainError.invalidParams(`Too many filters provided; max ${MAX_PROGRAM_FILTERS}`);
  }
  return value.map(filterOf);
}

function filterOf(filter: unknown): ProgramFilter {
  if (isObject(filter) && "dataSize" in filter)
    return { dataSize: boundedInteger(filter.dataSize, "dataSize") };
  if (isObject(filter) && isObject(filter.memcmp)) {
    const { offset, bytes, encoding } = filter.memcmp;
    return {
      memcmp: { offset: boundedInteger(offset, "memcmp.offset"), bytes: memcmpBytesOf(bytes, encoding) },
    };
  }
  throw invalid("each filter must be {dataSize} or {memcmp: {offset, bytes}}");
}

function memcmpBytesOf(bytes: unknown, encoding: unknown): Uint8Array {
  if (typeof bytes !== "string") throw invalid("memcmp.bytes must be a string");
  if (encoding === undefined || encoding === "base58") {
    try {
      return decodeBase58(bytes, MAX_MEMCMP_BYTES);
    } catch (error) {
      if (!(error instanceof Base58Error)) throw error;
      throw ChainError.invalidParams(`Invalid param: memcmp bytes: ${error.message}`);
    }
  }
  if (encoding !== "base64") throw invalid("memcmp.encoding must be base58 or base64");
  if (bytes.length > MAX_MEMCMP_BASE64_CHARS || bytes.length % 4 !== 0 || !BASE64.test(bytes)) {
    throw ChainError.invalidParams(
      `Invalid param: memcmp bytes must be base64 of at most ${MAX_MEMCMP_BYTES} bytes`,
    );
  }
  const decoded = Buffer.from(bytes, "base64");
  if (decoded.length > MAX_MEMCMP_BYTES) {
    throw ChainError.invalidParams(`Invalid param: memcmp bytes exceed ${MAX_MEMCMP_BYTES} bytes`);
  }
  return new Uint8Array(decoded);
}

/** Whether `data` passes every filter, as a validator matches them. */
export function matchesFilters(data: Uint8Array, filters: readonly ProgramFilter[]): boolean {
  return filters.every((filter) => {
    if ("dataSize" in filter) return data.length === filter.dataSize;
    const { offset, bytes } = filter.memcmp;
    if (offset + bytes.length > data.length) return false;
    for (let i = 0; i < bytes.length; i++) if (data[offset + i] !== bytes[i]) return false;
    return true;
  });
}
