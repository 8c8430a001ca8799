/**
 * Token accounts as orders use them: associated token account addresses, cached (an order names the
 * same few several times, and deriving one costs tens of microseconds), and the check of a token
 * account a request names to be paid into.
 */
import type { Address } from "@solana/kit";
import { LRUCache } from "lru-cache";
import type { Chain } from "../../chain/chain.js";
import { findAssociatedTokenAddress } from "../../chain/program-address.js";
import { type OrderRefusal, OrderRefused } from "../errors.js";
import type { VenueAccounts } from "./signing-guard.js";

// Counted through maxSize: max would allocate all its slots at start (see base58.ts's cache).
const cache = new LRUCache<string, Address>({ maxSize: 200_000, sizeCalculation: () => 1 });

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Address {
  const key = `${owner}${mint}${tokenProgram}`;
  let address = cache.get(key);
  if (!address) {
    address = findAssociatedTokenAddress(owner, mint, tokenProgram);
    cache.set(key, address);
  }
  return address;
}

/** A token account a request names (`name`) to be paid into, and the refusal if it may not be. */
export interface NamedTokenAccount {
  name: string;
  account: Address;
  /** The mint it must hold. */
  mint: Address;
  refusal: Extract<OrderRefusal, "invalid_fee_account" | "invalid_destination_token_account">;
}

/**
 * Refuses a token account that is not the caller's to name: one of the venue's accounts, not an
 * existing token account of the mint it is paid in, or one a venue key owns.
 */
export async function checkNamedTokenAccount(
  chain: Chain,
  venue: VenueAccounts,
  named: NamedTokenAccount,
): Promise<void> {
  const { name, account, mint, refusal } = named;
  if (venue.isVenueAccount(account))
    throw new OrderRefused(refusal, `${name} ${account} is one of the venue's own accounts`);
  const found = await chain.getTokenAccount(account);
  if (!found || found.mint !== mint)
    throw new OrderRefused(
      refusal,
      `${name} ${account} must be an existing token account of the mint ${mint}`,
    );
  if (venue.isVenueAccount(found.owner))
    throw new OrderRefused(
      refusal,
      `${name} ${account} belongs to ${found.owner}, one of the venue's own accounts`,
    );
}
