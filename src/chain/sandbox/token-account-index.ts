/**
 * Which token accounts each owner holds. LiteSVM cannot be searched by owner, so the sandbox chain
 * files every account it loads or commits here, and `getTokenAccountsByOwner` reads this index.
 */
import type { Address } from "@solana/kit";
import { tokenAccountKind, tokenAccountMintAndOwner } from "../token-layout.js";
import type { StoredAccount } from "./commit-batch.js";

/** Token accounts by owner (see the module comment). */
export class TokenAccountIndex {
  private readonly byOwner = new Map<Address, Set<Address>>();
  private readonly ownerOf = new Map<Address, Address>();

  /** Forgets every account (before the state is rebuilt from storage). */
  clear(): void {
    this.byOwner.clear();
    this.ownerOf.clear();
  }

  /** Files `account` (null when closed) under its owner when it is a token account, else drops it. */
  update(address: Address, account: StoredAccount | null): void {
    const previousOwner = this.ownerOf.get(address);
    const isTokenAccount = account !== null && tokenAccountKind(account.owner, account.data) === "account";
    const owner = isTokenAccount ? tokenAccountMintAndOwner(account.data).owner : undefined;
    if (previousOwner === owner) return;
    if (previousOwner !== undefined) {
      this.byOwner.get(previousOwner)?.delete(address);
      this.ownerOf.delete(address);
    }
    if (owner !== undefined) {
      let owned = this.byOwner.get(owner);
      if (!owned) {
        owned = new Set();
        this.byOwner.set(owner, owned);
      }
      owned.add(address);
      this.ownerOf.set(address, owner);
    }
  }

  /** The token accounts `owner` holds. */
  ownedBy(owner: Address): Iterable<Address> {
    return this.byOwner.get(owner) ?? [];
  }

  /** Every token account. */
  all(): Iterable<Address> {
    return this.ownerOf.keys();
  }
}
