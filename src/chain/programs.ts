/** Well-known program and mint addresses the chain code refers to. */
import { type Address, address } from "@solana/kit";

export const SYSTEM_PROGRAM = address("11111111111111111111111111111111");
export const TOKEN_PROGRAM = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
export const TOKEN_2022_PROGRAM = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
export const ASSOCIATED_TOKEN_PROGRAM = address("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
export const COMPUTE_BUDGET_PROGRAM = address("ComputeBudget111111111111111111111111111111");

export const USDC_DECIMALS = 6;
/** The native (wrapped SOL) mint of SPL Token. */
export const WRAPPED_SOL_MINT = address("So11111111111111111111111111111111111111112");

export const LAMPORTS_PER_SOL = 1_000_000_000n;
/** Solana's base fee per signature. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/** Whether `program` is one of the two token programs. */
export function isTokenProgram(program: Address | string): boolean {
  return program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;
}
