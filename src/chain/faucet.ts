/**
 * Development funding: SOL airdrops from the venue treasury and tokens minted by the venue's mint
 * authority (USDC, CASH, the demo tokens, outcome mints) into the wallet's associated token account.
 * Every grant is an ordinary signed transaction, so it is as durable as any other.
 */
import { randomBytes } from "node:crypto";
import { type Address, address, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getCreateAssociatedTokenIdempotentInstruction,
  getMintToInstruction,
  getSyncNativeInstruction,
} from "@solana-program/token";
import { buildSignedTransaction } from "./build-transaction.js";
import type { Chain, LatestBlockhash } from "./chain.js";
import { ChainError } from "./errors.js";
import { findAssociatedTokenAddress } from "./program-address.js";
import { WRAPPED_SOL_MINT } from "./programs.js";
import type { VenueSigners } from "./venue-keys.js";

const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

// Identical grants in one slot would be identical transactions (refused as replays): a memo with
// a random tag makes each one unique.
function uniquenessMemo(): Instruction {
  return {
    programAddress: MEMO_PROGRAM,
    accounts: [],
    data: new TextEncoder().encode(`oddsgate faucet ${randomBytes(8).toString("hex")}`),
  };
}

/** Builds the signed treasury → recipient SOL transfer that pays an airdrop. */
export function buildAirdropTransaction(
  treasury: KeyPairSigner,
  recipient: Address,
  lamports: bigint,
  lifetime: LatestBlockhash,
): Promise<Uint8Array> {
  return buildSignedTransaction(
    treasury,
    [
      getTransferSolInstruction({ source: treasury, destination: recipient, amount: lamports }),
      uniquenessMemo(),
    ],
    lifetime,
  );
}

export interface FaucetGrant {
  signature: string;
  tokenAccount: Address;
}

/**
 * Gives `wallet` `amount` base units of `mint`, creating its associated token account if needed.
 * The mint must be one the venue can mint (or wrapped SOL, funded from the treasury).
 */
export async function faucet(
  chain: Chain,
  signers: VenueSigners,
  wallet: Address,
  mint: Address,
  amount: bigint,
): Promise<FaucetGrant> {
  if (amount <= 0n) throw ChainError.invalidParams("faucet amount must be positive");
  const mintInfo = await chain.getMint(mint);
  if (!mintInfo) throw ChainError.invalidParams(`${mint} is not a token mint on this chain`);
  const isWrappedSol = mint === WRAPPED_SOL_MINT;
  if (!isWrappedSol && mintInfo.mintAuthority !== signers.mintAuthority.address) {
    throw ChainError.invalidParams(`${mint} is not minted by this venue, so its faucet cannot grant it`);
  }
  const tokenProgram = mintInfo.programId;
  const tokenAccount = findAssociatedTokenAddress(wallet, mint, tokenProgram);
  const instructions: Instruction[] = [
    getCreateAssociatedTokenIdempotentInstruction({
      payer: signers.treasury,
      ata: tokenAccount,
      owner: wallet,
      mint,
      tokenProgram,
    }),
  ];
  if (isWrappedSol) {
    instructions.push(
      getTransferSolInstruction({ source: signers.treasury, destination: tokenAccount, amount }),
      getSyncNativeInstruction({ account: tokenAccount }, { programAddress: tokenProgram }),
    );
  } else {
    instructions.push(
      getMintToInstruction(
        { mint, token: tokenAccount, mintAuthority: signers.mintAuthority, amount },
        { programAddress: tokenProgram },
      ),
    );
  }
  instructions.push(uniquenessMemo());
  const wire = await buildSignedTransaction(signers.treasury, instructions, await chain.getLatestBlockhash());
  const signature = await chain.sendTransaction(wire);
  return { signature, tokenAccount };
}
