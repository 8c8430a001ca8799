/**
 * Which accounts each program owns, and every account's lamports. LiteSVM cannot be searched by
 * owner, so the sandbox chain files every account it loads or commits here (beside the token-account
 * index), and `getProgramAccounts`, `getLargestAccounts` and `getSupply` read this index.
 */
import type { Address } from "@solana/kit";
import { AddressesByKey } from "./addresses-by-key.js";
import type { StoredAccount } from "./commit-batch.js";

/** What the commit pipeline keeps up to date: every index of accounts it files commits in. */
export interface AccountIndex {
  /** Forgets every account (before the state is rebuilt from storage). */
  clear(): void;
  /** Files `account` at `address` (null when closed). */
  update(address: Address, account: StoredAccount | null): void;
}

/** Accounts by owning program (see the module comment). */
export class ProgramAccountIndex implements AccountIndex {
  private readonly byProgram = new AddressesByKey();

  clear(): void {
    this.byProgram.clear();
  }

  update(address: Address, account: StoredAccount | null): void {
    this.byProgram.file(address, account?.owner);
  }

  /** The accounts `program` owns. */
  ownedBy(program: Address): Iterable<Address> {
    return this.byProgram.under(program);
  }

  /** Whether `address` is filed (it is stored, or was written since the last load). */
  has(address: Address): boolean {
    return this.byProgram.has(address);
  }

  /** Every account filed. */
  all(): Iterable<Address> {
    return this.byProgram.all();
  }
}

/** Several indexes kept up to date as one (the commit pipeline takes one). */
export function bothIndexes(first: AccountIndex, second: AccountIndex): AccountIndex {
  return {
    clear: () => {
      first.clear();
      second.clear();
    },
    update: (address, account) => {
      first.update(address, account);
      second.update(address, account);
    },
  };
}
