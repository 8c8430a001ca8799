/** The demo tokens of a venue seed, and a wallet's holdings of them, as tests read them. */
import { type Address, createNoopSigner } from "@solana/kit";
import { findAssociatedTokenPda, getMintToCheckedInstruction } from "@solana-program/token";
import { expect } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import type { Keypair } from "../../src/chain/ed25519.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import type { RpcChain } from "../../src/chain/rpc-client.js";
import { createAssociatedTokenIdempotent } from "../../src/trading/tx/instructions.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { compileMessage, signedTransaction } from "../../src/trading/tx/transaction.js";

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

/**
 * Mints `amount` of an outcome mint (Token-2022, 6 decimals) to `owner` with the venue's mint
 * authority, as a past buy would have; fails unless the transaction lands.
 */
export async function mintOutcomeTokens(
  chain: RpcChain,
  mintAuthority: Keypair | undefined,
  owner: Address,
  mint: Address,
  amount: bigint,
): Promise<void> {
  if (!mintAuthority) throw new Error("no sandbox mint authority");
  const token = associatedTokenAddress(owner, mint, TOKEN_2022_PROGRAM);
  const message = compileMessage(
    mintAuthority.address,
    [
      createAssociatedTokenIdempotent({
        payer: mintAuthority.address,
        ata: token,
        owner,
        mint,
        tokenProgram: TOKEN_2022_PROGRAM,
      }),
      getMintToCheckedInstruction(
        { mint, token, mintAuthority: createNoopSigner(mintAuthority.address), amount, decimals: 6 },
        { programAddress: TOKEN_2022_PROGRAM },
      ),
    ],
    (await chain.getLatestBlockhash()).blockhash,
  );
  const signature = await chain.sendTransaction(signedTransaction(message, [mintAuthority]));
  const [status] = await chain.getSignatureStatuses([signature]);
  expect(status?.err ?? null).toBeNull();
}
