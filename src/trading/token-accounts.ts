/** Associated token account addresses, cached: deriving one costs about a millisecond in kit. */
import type { Address } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { LRUCache } from "lru-cache";

const cache = new LRUCache<string, Address>({ max: 200_000 });

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function associatedTokenAddress(
  owner: Address,
  mint: Address,
  tokenProgram: Address,
): Promise<Address> {
  const key = `${owner}${mint}${tokenProgram}`;
  let address = cache.get(key);
  if (!address) {
    [address] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
    cache.set(key, address);
  }
  return address;
}
