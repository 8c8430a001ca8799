/**
 * Reads what execution alone knows of a transaction (transaction-meta.ts) out of LiteSVM: token
 * balances of the accounts among its keys, and the inner instructions and return data LiteSVM
 * recorded.
 */
import type { Address } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "../base58.js";
import { decodeMint, tokenAccountAmount } from "../token-layout.js";
import type { InnerInstruction, LiteSvm, TransactionMetadata } from "./svm.js";
import type {
  InnerInstructionGroup,
  InnerInstructionRecord,
  ReturnDataRecord,
  TokenBalance,
} from "./transaction-meta.js";

/** Names a token account's balance carries, kept with the bytes they were read from. */
interface TokenAccountNames {
  /** The account's mint and owner as stored (offsets 0..64). */
  bytes: Uint8Array;
  mint: Address;
  owner: Address;
}

/** Token accounts whose names are kept: far more than one batch names, and a bounded memory. */
const NAMED_ACCOUNTS_KEPT = 65_536;

/**
 * Reads token balances out of accounts, caching each mint's decimals (they never change) and each
 * account's mint and owner names: a swap names the same few accounts over and over, and base58 of
 * two keys per balance, before and after, was most of the cost of collecting them.
 */
export class TokenBalanceReader {
  private readonly decimals = new Map<Address, number>();
  private readonly names = new Map<Address, TokenAccountNames>();

  /** Forgets what it cached (the chain's state was replaced). */
  clear(): void {
    this.decimals.clear();
    this.names.clear();
  }

  /** The balance of the token account `data` owned by the token program `owner`, or null when it is not one. */
  read(svm: LiteSvm, address: Address, owner: Address, data: Uint8Array): TokenHolding | null {
    const amount = tokenAccountAmount(owner, data);
    if (amount === null) return null;
    const names = this.namesOf(address, data);
    const decimals = this.decimalsOf(svm, names.mint);
    if (decimals === undefined) return null;
    return { mint: names.mint, owner: names.owner, programId: owner, amount, decimals };
  }

  // The names of the mint and owner `data` holds, from the cache while those bytes are unchanged
  // (an owner can be reassigned, and an address closed and opened again for another mint).
  private namesOf(address: Address, data: Uint8Array): TokenAccountNames {
    const keys = data.subarray(0, 64);
    const cached = this.names.get(address);
    if (cached && Buffer.compare(cached.bytes, keys) === 0) return cached;
    if (this.names.size >= NAMED_ACCOUNTS_KEPT) this.names.clear();
    const named = {
      bytes: Uint8Array.from(keys),
      mint: addressOf(keys.subarray(0, 32)),
      owner: addressOf(keys.subarray(32, 64)),
    };
    this.names.set(address, named);
    return named;
  }

  private decimalsOf(svm: LiteSvm, mint: Address): number | undefined {
    const cached = this.decimals.get(mint);
    if (cached !== undefined) return cached;
    const account = svm.getAccount(decodeAddressBytes(mint));
    if (!account) return undefined;
    const decoded = decodeMint(mint, addressOf(account.owner()), account.data());
    if (!decoded) return undefined;
    this.decimals.set(mint, decoded.decimals);
    return decoded.decimals;
  }
}

/** A token balance as read, before it is placed at a transaction's key index. */
export type TokenHolding = Omit<TokenBalance, "accountIndex">;

/** What the executor last saw of an account: its lamports, and its token balance (null: not a token account). */
interface KnownAccount {
  lamports: bigint;
  holding: TokenHolding | null;
}

/**
 * Accounts as the last transaction that named them left them, so that the next one's balances
 * before it are known without reading the account's data and owner out of LiteSVM again (several
 * napi calls a key). Every write to LiteSVM goes through the executor, which updates or forgets
 * the account here; an entry whose lamports differ from the account's is not used.
 */
export class KnownAccounts {
  private readonly known = new Map<Address, KnownAccount>();

  /** What is known of `address`, if its lamports are still `lamports`. */
  get(address: Address, lamports: bigint): KnownAccount | undefined {
    const known = this.known.get(address);
    return known?.lamports === lamports ? known : undefined;
  }

  remember(address: Address, lamports: bigint, holding: TokenHolding | null): void {
    if (this.known.size >= NAMED_ACCOUNTS_KEPT && !this.known.has(address)) this.known.clear();
    this.known.set(address, { lamports, holding });
  }

  forget(address: Address): void {
    this.known.delete(address);
  }

  clear(): void {
    this.known.clear();
  }
}

/**
 * Whether LiteSVM may have recorded inner instructions, from the logs: every invocation from a
 * program logs `invoke [2]` or deeper (unless the logs were cut short).
 */
export function mayHaveInnerInstructions(logs: readonly string[]): boolean {
  return logs.some((line) => line.endsWith("]") && INNER_INVOKE.test(line)) || logsTruncated(logs);
}

/** Whether a program may have returned data, from the logs: Agave logs `Program return:` for it. */
export function mayHaveReturnData(logs: readonly string[]): boolean {
  return logs.some((line) => line.startsWith("Program return: ")) || logsTruncated(logs);
}

const INNER_INVOKE = / invoke \[([2-9]|\d\d+)\]$/;

function logsTruncated(logs: readonly string[]): boolean {
  return logs.length > 0 && logs[logs.length - 1] === "Log truncated";
}

/** The inner instructions LiteSVM recorded, grouped by top-level instruction, empty groups left out (as Agave). */
export function innerInstructionsOf(meta: TransactionMetadata): InnerInstructionGroup[] {
  const groups: InnerInstructionGroup[] = [];
  meta.innerInstructions().forEach((inner, index) => {
    if (inner.length > 0) groups.push({ index, instructions: inner.map(innerInstructionRecord) });
  });
  return groups;
}

function innerInstructionRecord(inner: InnerInstruction): InnerInstructionRecord {
  const instruction = inner.instruction();
  return {
    programIdIndex: instruction.programIdIndex(),
    accounts: Array.from(instruction.accounts()),
    data: instruction.data(),
    stackHeight: inner.stackHeight(),
  };
}

/** The data a program returned, or null when none did (Agave records no empty return data). */
export function returnDataOf(meta: TransactionMetadata): ReturnDataRecord | null {
  const returned = meta.returnData();
  const data = returned.data();
  if (data.length === 0) return null;
  return { programId: addressOf(returned.programId()), data };
}
