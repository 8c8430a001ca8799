/**
 * Surfpool's account cheatcodes, for development only: `surfnet_setAccount`,
 * `surfnet_setTokenAccount` and `surfnet_resetAccount`, with the names, params and results of
 * surfpool's (txtx/surfpool, crates/core/src/rpc/surfnet_cheatcodes.rs): account data as hex, a
 * token account update applied to the owner's associated token account (created when missing), a
 * delegate or close authority cleared with the string "null". Every write goes through the chain's
 * commit path (`SandboxChain.installAccounts`): stored before it is answered, and heard by PubSub.
 * Only the lease holder writes; a production chain does not register them (rpc-methods.ts).
 */
import type { Address } from "@solana/kit";
import { decodeAddressBytes } from "../base58.js";
import type { AccountInfo } from "../chain.js";
import { ChainError } from "../errors.js";
import { findAssociatedTokenAddress } from "../program-address.js";
import { SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../programs.js";
import { decodeTokenAccount, TOKEN_ACCOUNT_SIZE } from "../token-layout.js";
import type { StoredAccount } from "./commit-batch.js";
import { assertAddressParam } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";

/** The largest account Solana allows (MAX_PERMITTED_DATA_LENGTH): what `data` may hold. */
export const MAX_ACCOUNT_DATA_BYTES = 10 * 1024 * 1024;
const HEX = /^[0-9a-fA-F]*$/;
const TOKEN_STATES = ["uninitialized", "initialized", "frozen"] as const;

type Config = Record<string, unknown>;
type CheatcodeMethod = (params: unknown[]) => Promise<unknown>;

function invalid(message: string): ChainError {
  return ChainError.invalidParams(`Invalid params: ${message}`);
}

function paramCount(params: unknown[], min: number, max: number): void {
  if (params.length < min || params.length > max) {
    throw invalid(`expected ${min === max ? min : `${min} to ${max}`} parameters`);
  }
}

function addressParam(value: unknown, what: string): Address {
  if (typeof value !== "string") throw invalid(`${what} must be a base58 address`);
  assertAddressParam(value);
  return value;
}

function objectParam(value: unknown, what: string): Config {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalid(`${what} must be an object`);
  return value as Config;
}

/** An optional u64 field, as a JSON integer a client can send exactly. */
function u64Field(config: Config, key: string): bigint | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${key} must be a non-negative integer`);
  }
  return BigInt(value);
}

/** Surfpool's AccountUpdate data: hex, at most MAX_ACCOUNT_DATA_BYTES, checked before decoding. */
function hexData(value: unknown): Uint8Array {
  if (typeof value !== "string") throw invalid("data must be a hex string");
  if (value.length > MAX_ACCOUNT_DATA_BYTES * 2)
    throw invalid(`data exceeds ${MAX_ACCOUNT_DATA_BYTES} bytes`);
  if (value.length % 2 !== 0 || !HEX.test(value)) throw ChainError.invalidParams("Invalid hex data provided");
  return new Uint8Array(Buffer.from(value, "hex"));
}

// A read of the account also proves this instance is the chain's writer (-32005 otherwise).
function currentAccount(chain: SandboxChain, address: Address): AccountInfo {
  return (
    chain.peekAccount(address) ?? {
      lamports: 0n,
      owner: SYSTEM_PROGRAM,
      data: new Uint8Array(0),
      executable: false,
    }
  );
}

/** `account` with surfpool's AccountUpdate applied (rentEpoch is read and kept by no account here). */
export function applyAccountUpdate(account: AccountInfo, update: Config): AccountInfo {
  const lamports = u64Field(update, "lamports") ?? account.lamports;
  u64Field(update, "rentEpoch");
  const owner = update.owner === undefined ? account.owner : addressParam(update.owner, "owner");
  const executable = update.executable ?? account.executable;
  if (typeof executable !== "boolean") throw invalid("executable must be a boolean");
  const data = update.data === undefined ? account.data : hexData(update.data);
  // LiteSVM loads an executable account as a program when it is set: arbitrary bytes fail or stall
  // it. A program's own account may change its lamports; programs are deployed through a loader.
  const reshaped = !account.executable || owner !== account.owner || update.data !== undefined;
  if (executable && reshaped)
    throw invalid("executable accounts cannot be created or changed here; deploy programs");
  return { lamports, owner, executable, data };
}

/** A delegate or close authority of surfpool's TokenAccountUpdate: an address, or "null" to clear. */
function authorityField(update: Config, key: string, current: Address | null): Address | null {
  const value = update[key];
  if (value === undefined || value === null) return current;
  if (value === "null") return null;
  return addressParam(value, key);
}

function tokenStateField(update: Config, current: number): number {
  const state = update.state;
  if (state === undefined || state === null) return current;
  const index = TOKEN_STATES.indexOf(state as (typeof TOKEN_STATES)[number]);
  if (index < 0) throw ChainError.invalidParams(`Invalid token account state: ${String(state).slice(0, 40)}`);
  return index;
}

function writeOptionalKey(data: Uint8Array, tagOffset: number, key: Address | null): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  view.setUint32(tagOffset, key ? 1 : 0, true);
  data.set(key ? decodeAddressBytes(key) : new Uint8Array(32), tagOffset + 4);
}

/** An initialized token account of `mint` held by `owner`, empty (what surfpool creates). */
function emptyTokenAccount(mint: Address, owner: Address): Uint8Array {
  const data = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  data.set(decodeAddressBytes(mint), 0);
  data.set(decodeAddressBytes(owner), 32);
  data[108] = 1;
  return data;
}

/** Token account `data` (a copy) with surfpool's TokenAccountUpdate applied to its base layout. */
export function applyTokenAccountUpdate(
  address: Address,
  program: Address,
  data: Uint8Array,
  update: Config,
): Uint8Array {
  const token = decodeTokenAccount(address, program, data);
  if (!token) throw ChainError.invalidParams("Failed to unpack token account data");
  const next = new Uint8Array(data);
  const view = new DataView(next.buffer);
  view.setBigUint64(64, u64Field(update, "amount") ?? token.amount, true);
  writeOptionalKey(next, 72, authorityField(update, "delegate", token.delegate));
  next[108] = tokenStateField(update, TOKEN_STATES.indexOf(token.state));
  view.setBigUint64(121, u64Field(update, "delegatedAmount") ?? token.delegatedAmount, true);
  writeOptionalKey(next, 129, authorityField(update, "closeAuthority", token.closeAuthority));
  return next;
}

function tokenProgramParam(value: unknown): Address {
  if (value === undefined || value === null) return TOKEN_PROGRAM;
  const program = addressParam(value, "the token program");
  if (program !== TOKEN_PROGRAM && program !== TOKEN_2022_PROGRAM) {
    throw invalid("the token program must be SPL Token or Token-2022");
  }
  return program;
}

/** Writes `account` at `address` through the commit path; 0 lamports deletes it, as on Solana. */
async function write(chain: SandboxChain, address: Address, account: AccountInfo) {
  const stored: StoredAccount = { address, ...account };
  await chain.installAccounts([stored]);
  // Surfpool answers RpcResponse<()>.
  return { context: { slot: Number(await chain.getSlot()) }, value: null };
}

/** The owner's associated token account for `mint`, created or updated with `update`. */
async function setTokenAccount(chain: SandboxChain, params: unknown[]) {
  paramCount(params, 3, 4);
  const owner = addressParam(params[0], "owner");
  const mint = addressParam(params[1], "mint");
  const update = objectParam(params[2], "the token account update");
  const program = tokenProgramParam(params[3]);
  const ata = findAssociatedTokenAddress(owner, mint, program);
  const existing = chain.peekAccount(ata);
  const account: AccountInfo = existing ?? {
    lamports: await chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE),
    owner: program,
    data: emptyTokenAccount(mint, owner),
    executable: false,
  };
  if (account.owner !== program) throw ChainError.invalidParams("Failed to unpack token account data");
  const data = applyTokenAccountUpdate(ata, program, account.data, update);
  return write(chain, ata, { ...account, data });
}

/** Back to what genesis gave the account, or deleted if genesis gave it nothing. */
async function resetAccount(chain: SandboxChain, params: unknown[]) {
  paramCount(params, 1, 2);
  const address = addressParam(params[0], "pubkey");
  const config =
    params[1] === undefined || params[1] === null ? {} : objectParam(params[1], "the reset config");
  const cascade = config.includeOwnedAccounts;
  if (cascade !== undefined && cascade !== null && typeof cascade !== "boolean") {
    throw invalid("includeOwnedAccounts must be a boolean");
  }
  if (cascade === true)
    throw invalid("includeOwnedAccounts is not supported by this chain: reset each account");
  currentAccount(chain, address);
  const genesis = chain.genesisAccountOf(address);
  const { lamports, owner, data, executable } = genesis ?? {
    lamports: 0n,
    owner: SYSTEM_PROGRAM,
    data: new Uint8Array(0),
    executable: false,
  };
  return write(chain, address, { lamports, owner: owner as Address, data, executable });
}

/** The account cheatcodes over `chain`, by method name. */
export function createAccountCheatcodeMethods(chain: SandboxChain): Record<string, CheatcodeMethod> {
  return {
    surfnet_setAccount: async (params) => {
      paramCount(params, 2, 2);
      const address = addressParam(params[0], "pubkey");
      const update = objectParam(params[1], "the account update");
      return write(chain, address, applyAccountUpdate(currentAccount(chain, address), update));
    },
    surfnet_setTokenAccount: (params) => setTokenAccount(chain, params),
    surfnet_resetAccount: (params) => resetAccount(chain, params),
  };
}
