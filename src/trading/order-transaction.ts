/**
 * The transaction of a firm spot quote: compute budget, the user's missing token accounts (created
 * idempotently), native SOL wrapped or unwrapped when asked, and one transfer per leg in and out of
 * the pools' vaults. The pools' authorities sign it here; the user's signature is left empty for the
 * user to add. It is valid until the blockhash's `lastValidBlockHeight`.
 */
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getCloseAccountInstruction, getSyncNativeInstruction } from "@solana-program/token";
import type { LatestBlockhash } from "../chain/chain.js";
import { WRAPPED_SOL_MINT } from "../chain/programs.js";
import {
  computeUnitLimit,
  computeUnitPrice,
  createAssociatedTokenIdempotent,
  tokenTransfer,
} from "./instructions.js";
import type { SyncMarket } from "./market.js";
import type { TokenRecord } from "./pools/store.js";
import type { RouteLeg } from "./router.js";
import { associatedTokenAddress } from "./token-accounts.js";
import { type CompiledMessage, compileMessage, signedTransaction } from "./transaction.js";

/** Compute units a spot order transaction asks for (the reference's default). */
export const ORDER_COMPUTE_UNIT_LIMIT = 200_000;

export interface OrderTransactionInput {
  user: Address;
  /** Whose associated token account receives the output (created if missing, paid by the user); default the user. */
  recipient?: Address;
  legs: readonly RouteLeg<SyncMarket>[];
  /** What the user receives (the last leg's output less the platform fee). */
  userOutAmount: bigint;
  platformFee: { amount: bigint; account: Address } | undefined;
  tokens: { input: TokenRecord; output: TokenRecord; token(mint: Address): TokenRecord };
  wrapAndUnwrapSol: boolean;
  computeUnitLimit: number;
  microLamportsPerComputeUnit: bigint;
  lifetime: LatestBlockhash;
  /** Checks the compiled message and the keys about to sign it; throws to refuse signing. */
  beforeSigning?: (
    message: CompiledMessage,
    instructions: readonly Instruction[],
    signers: readonly string[],
  ) => void;
}

/** Builds the order transaction, signed by every pool it uses; returns its wire bytes. */
export async function buildOrderTransaction(input: OrderTransactionInput): Promise<Uint8Array> {
  const user = createNoopSigner(input.user);
  const recipient = input.recipient ?? input.user;
  const { tokens } = input;
  const ata = (owner: Address, token: TokenRecord) =>
    associatedTokenAddress(owner, token.mint, token.program);
  const [userIn, userOut] = await Promise.all([ata(input.user, tokens.input), ata(recipient, tokens.output)]);
  const wrapIn = input.wrapAndUnwrapSol && tokens.input.mint === WRAPPED_SOL_MINT;
  const unwrapOut = input.wrapAndUnwrapSol && tokens.output.mint === WRAPPED_SOL_MINT;
  // Unwrapping closes the output account, which only its owner may do: the user's own.
  if (unwrapOut && recipient !== input.user)
    throw new Error("native SOL output is delivered to the user only");
  const createAccount = (account: Address, owner: Address, token: TokenRecord) =>
    createAssociatedTokenIdempotent({
      payer: input.user,
      ata: account,
      owner,
      mint: token.mint,
      tokenProgram: token.program,
    });

  const instructions: Instruction[] = [
    computeUnitLimit(input.computeUnitLimit),
    computeUnitPrice(input.microLamportsPerComputeUnit),
  ];
  const firstLeg = input.legs[0];
  if (!firstLeg) throw new Error("an order needs at least one leg");
  if (wrapIn) {
    instructions.push(
      createAccount(userIn, input.user, tokens.input),
      getTransferSolInstruction({ source: user, destination: userIn, amount: firstLeg.inAmount }),
      getSyncNativeInstruction({ account: userIn }, { programAddress: tokens.input.program }),
    );
  }
  instructions.push(createAccount(userOut, recipient, tokens.output));

  instructions.push(
    tokenTransfer(
      tokens.input,
      userIn,
      vaultOf(firstLeg.market, firstLeg.inputMint),
      input.user,
      firstLeg.inAmount,
    ),
  );
  input.legs.forEach((leg, index) => {
    const pool = leg.market;
    const next = input.legs[index + 1]?.market;
    const authority = pool.authority.address;
    const outToken = tokens.token(leg.outputMint);
    const source = vaultOf(pool, leg.outputMint);
    if (next) {
      instructions.push(
        tokenTransfer(outToken, source, vaultOf(next, leg.outputMint), authority, leg.outAmount),
      );
      return;
    }
    instructions.push(tokenTransfer(outToken, source, userOut, authority, input.userOutAmount));
    if (input.platformFee && input.platformFee.amount > 0n) {
      instructions.push(
        tokenTransfer(outToken, source, input.platformFee.account, authority, input.platformFee.amount),
      );
    }
  });
  if (wrapIn || unwrapOut) {
    const wrapped = wrapIn ? userIn : userOut;
    const program = wrapIn ? tokens.input.program : tokens.output.program;
    instructions.push(
      getCloseAccountInstruction(
        { account: wrapped, destination: input.user, owner: user },
        { programAddress: program },
      ),
    );
  }

  const message = compileMessage(input.user, instructions, input.lifetime.blockhash);
  const signers = [...new Set(input.legs.map((leg) => leg.market.authority))];
  input.beforeSigning?.(
    message,
    instructions,
    signers.map((keypair) => keypair.address),
  );
  return signedTransaction(message, signers);
}

function vaultOf(pool: SyncMarket, mint: Address): Address {
  return pool.vaults[pool.sideOf(mint)];
}
