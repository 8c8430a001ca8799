/** The demo tokens of a venue seed, and a wallet's holdings of them, as tests read them. */
import type { Address } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import type { RpcChain } from "../../src/chain/rpc-client.js";

/** The mint of the demo token `symbol` (e.g. "dJUP") on a venue seeded with `seed`. */
export function demoMint(seed: string, symbol: string): Address {
  const found = demoTokens(seed).find((candidate) => candidate.symbol === symbol);
  if (!found) throw new Error(`no demo token ${symbol}`);
  return found.address;
}

/** `owner`'s associated token account of a classic SPL `mint`. */
export async function ataOf(owner: Address, mint: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM });
  return ata;
}

/** What `owner`'s associated account of `mint` holds (0 when it does not exist). */
export async function tokenBalance(chain: RpcChain, owner: Address, mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountBalance(await ataOf(owner, mint))) ?? 0n;
}
