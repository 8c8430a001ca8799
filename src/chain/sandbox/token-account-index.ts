/**
 * Which token accounts each owner holds. LiteSVM cannot be searched by owner, so the sandbox chain
 * files every account it loads or commits here, and `getTokenAccountsByOwner` reads this index.
 */
import type { Address } from "@solana/kit";
import { tokenAccountKind, tokenAccountMintAndOwner } from "../token-layout.js";
import { AddressesByKey } from "./addresses-by-key.js";
import type { StoredAccount } from "./commit-batch.js";

/** Token accounts by owner (see the module comment). */
export class TokenAccountIndex {
  private readonly byOwner = new AddressesByKey();

  /** Forgets every account (before the state is rebuilt from storage). */
  clear(): void {
    this.byOwner.clear();
  }

  /** Files `account` (null when closed) under its owner when it is a token account, else drops it. */
  update(address: Address, account: StoredAccount | null): void {
    const isTokenAccount = account !== null && tokenAccountKind(account.owner, account.data) === "account";
    this.byOwner.file(address, isTokenAccount ? tokenAccountMintAndOwner(account.data).owner : undefined);
  }

  /** The token accounts `owner` holds. */
  ownedBy(owner: Address): Iterable<Address> {
    return this.byOwner.under(owner);
  }

  /** Every token account. */
  all(): Iterable<Address> {
    return this.byOwner.all();
  }
}
