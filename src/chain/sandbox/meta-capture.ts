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

  /** The balance of the token account `data` at key `accountIndex`, or null when it is not one. */
  read(
    svm: LiteSvm,
    accountIndex: number,
    address: Address,
    owner: Address,
    data: Uint8Array,
  ): TokenBalance | null {
    const amount = tokenAccountAmount(owner, data);
    if (amount === null) return null;
    const names = this.namesOf(address, data);
    const decimals = this.decimalsOf(svm, names.mint);
    if (decimals === undefined) return null;
    return { accountIndex, mint: names.mint, owner: names.owner, programId: owner, amount, decimals };
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
