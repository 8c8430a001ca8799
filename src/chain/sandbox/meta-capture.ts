/**
 * Reads what execution alone knows of a transaction (transaction-meta.ts) out of LiteSVM: token
 * balances of the accounts among its keys, and the inner instructions and return data LiteSVM
 * recorded.
 */
import type { Address } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "../base58.js";
import { decodeMint, decodeTokenAccount } from "../token-layout.js";
import type { InnerInstruction, LiteSvm, TransactionMetadata } from "./svm.js";
import type {
  InnerInstructionGroup,
  InnerInstructionRecord,
  ReturnDataRecord,
  TokenBalance,
} from "./transaction-meta.js";

/**
 * Reads token balances out of accounts, caching each mint's decimals: a mint's decimals never
 * change, and a swap names the same few mints over and over.
 */
export class TokenBalanceReader {
  private readonly decimals = new Map<Address, number>();

  /** Forgets the cached decimals (the chain's state was replaced). */
  clear(): void {
    this.decimals.clear();
  }

  /** The balance of the token account `data` at key `accountIndex`, or null when it is not one. */
  read(
    svm: LiteSvm,
    accountIndex: number,
    address: Address,
    owner: Address,
    data: Uint8Array,
  ): TokenBalance | null {
    const token = decodeTokenAccount(address, owner, data);
    if (!token) return null;
    const decimals = this.decimalsOf(svm, token.mint);
    if (decimals === undefined) return null;
    return {
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: owner,
      amount: token.amount,
      decimals,
    };
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
