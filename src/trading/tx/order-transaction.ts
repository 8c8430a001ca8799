/**
 * The transaction of a firm spot quote: compute budget, its quote family's ticket, the missing token
 * accounts (created idempotently, paid by the fee payer: a sponsor or the user), native SOL wrapped or
 * unwrapped when asked, an input-mint platform fee, and one transfer per leg in and out of the pools'
 * vaults. The pools' authorities sign it here; the user's (and a sponsor's) signature is left empty.
 * It is valid until the blockhash's `lastValidBlockHeight`.
 */
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  AuthorityType,
  getCloseAccountInstruction,
  getSetAuthorityInstruction,
  getSyncNativeInstruction,
} from "@solana-program/token";
import type { LatestBlockhash } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import { WRAPPED_SOL_MINT } from "../../chain/programs.js";
import { openTicketInstruction, type QuoteTicket } from "../quotes/quote-ticket.js";
import type { SyncMarket } from "../spot/market.js";
import type { TokenRecord } from "../spot/pools/store.js";
import type { RouteLeg } from "../spot/router.js";
import {
  computeUnitLimit,
  computeUnitPrice,
  createAssociatedTokenIdempotent,
  tokenTransfer,
} from "./instructions.js";
import { associatedTokenAddress } from "./token-accounts.js";
import { type CompiledMessage, compileMessage, signedTransaction } from "./transaction.js";

/** Compute units a spot order transaction asks for (the reference's default). */
export const ORDER_COMPUTE_UNIT_LIMIT = 200_000;

/** Where a firm quote's output goes. */
export type OrderDestination =
  /** This wallet's associated token account (created if missing); native SOL is sent to the wallet itself. */
  | { wallet: Address }
  /** An existing token account of the output mint. */
  | { tokenAccount: Address };

export interface OrderTransactionInput {
  user: Address;
  /** Pays the fee and the rent of the accounts created, and signs: a sponsor; default the user. */
  feePayer?: Address;
  /** Default the user's own associated token account. */
  destination?: OrderDestination;
  /** The close authority the user's output account is created with (never with another destination). */
  outputCloseAuthority?: Address;
  legs: readonly RouteLeg<SyncMarket>[];
  /** What the user receives (the last leg's output less an output-mint platform fee). */
  userOutAmount: bigint;
  /** A fee in the input mint is paid by the user before the first leg; in the output mint by the last pool. */
  platformFee: { amount: bigint; account: Address; mode: "inputMint" | "outputMint" } | undefined;
  tokens: { input: TokenRecord; output: TokenRecord; token(mint: Address): TokenRecord };
  wrapAndUnwrapSol: boolean;
  computeUnitLimit: number;
  microLamportsPerComputeUnit: bigint;
  lifetime: LatestBlockhash;
  /** The quote family's ticket the transaction opens, so that no other transaction of the family can land. */
  ticket?: QuoteTicket;
  /** Checks the compiled message and the keys about to sign it; throws to refuse signing. */
  beforeSigning?: (
    message: CompiledMessage,
    instructions: readonly Instruction[],
    signers: readonly string[],
  ) => void;
}

/**
 * An order transaction's instructions in the groups of `POST /swap-instructions`; in this order they
 * are the transaction `/order` and `/swap` issue.
 */
export interface OrderInstructions {
  feePayer: Address;
  /** The compute-unit limit and price. */
  computeBudget: Instruction[];
  /** The ticket opened, accounts created, native SOL wrapped, the input paid in (and an input-mint fee), the legs before the last. */
  setup: Instruction[];
  /** The last pool paying the user. */
  swap: Instruction;
  /** An output-mint fee, native SOL unwrapped and sent on, the wrapping account closed. */
  cleanup: Instruction[];
  /** The pools that sign. */
  signers: Keypair[];
}

/** Builds the order transaction, signed by every pool it uses; returns its wire bytes. */
export async function buildOrderTransaction(input: OrderTransactionInput): Promise<Uint8Array> {
  const parts = await orderInstructions(input);
  const instructions = [...parts.computeBudget, ...parts.setup, parts.swap, ...parts.cleanup];
  const message = compileMessage(parts.feePayer, instructions, input.lifetime.blockhash);
  input.beforeSigning?.(
    message,
    instructions,
    parts.signers.map((keypair) => keypair.address),
  );
  return signedTransaction(message, parts.signers);
}

/** The instructions of an order transaction, grouped, and the pools that sign it. */
export async function orderInstructions(input: OrderTransactionInput): Promise<OrderInstructions> {
  const user = createNoopSigner(input.user);
  const feePayer = input.feePayer ?? input.user;
  const destination = input.destination ?? { wallet: input.user };
  const { tokens } = input;
  const ata = (owner: Address, token: TokenRecord) =>
    associatedTokenAddress(owner, token.mint, token.program);
  const wrapIn = input.wrapAndUnwrapSol && tokens.input.mint === WRAPPED_SOL_MINT;
  const unwrapOut = input.wrapAndUnwrapSol && tokens.output.mint === WRAPPED_SOL_MINT;
  // Native SOL passes through the user's own wrapped-SOL account, whatever wallet it ends in.
  const outOwner = "wallet" in destination && !unwrapOut ? destination.wallet : input.user;
  const [userIn, ownOut] = await Promise.all([
    ata(input.user, tokens.input),
    "tokenAccount" in destination && !unwrapOut ? destination.tokenAccount : ata(outOwner, tokens.output),
  ]);
  const createAccount = (account: Address, owner: Address, token: TokenRecord) =>
    createAssociatedTokenIdempotent({
      payer: feePayer,
      ata: account,
      owner,
      mint: token.mint,
      tokenProgram: token.program,
    });

  const instructions: Instruction[] = [
    computeUnitLimit(input.computeUnitLimit),
    computeUnitPrice(input.microLamportsPerComputeUnit),
  ];
  if (input.ticket) instructions.push(openTicketInstruction(input.ticket));
  const firstLeg = input.legs[0];
  if (!firstLeg) throw new Error("an order needs at least one leg");
  const inputFee = input.platformFee?.mode === "inputMint" ? input.platformFee : undefined;
  const outputFee = input.platformFee?.mode === "outputMint" ? input.platformFee : undefined;
  if (wrapIn) {
    instructions.push(
      createAccount(userIn, input.user, tokens.input),
      getTransferSolInstruction({
        source: user,
        destination: userIn,
        amount: firstLeg.inAmount + (inputFee?.amount ?? 0n),
      }),
      getSyncNativeInstruction({ account: userIn }, { programAddress: tokens.input.program }),
    );
  }
  if (!("tokenAccount" in destination) || unwrapOut)
    instructions.push(createAccount(ownOut, outOwner, tokens.output));
  if (input.outputCloseAuthority) {
    instructions.push(
      getSetAuthorityInstruction(
        {
          owned: ownOut,
          owner: user,
          authorityType: AuthorityType.CloseAccount,
          newAuthority: input.outputCloseAuthority,
        },
        { programAddress: tokens.output.program },
      ),
    );
  }
  if (inputFee && inputFee.amount > 0n)
    instructions.push(tokenTransfer(tokens.input, userIn, inputFee.account, input.user, inputFee.amount));

  let swapIndex = -1;
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
    swapIndex = instructions.length;
    instructions.push(tokenTransfer(outToken, source, ownOut, authority, input.userOutAmount));
    if (outputFee && outputFee.amount > 0n) {
      instructions.push(tokenTransfer(outToken, source, outputFee.account, authority, outputFee.amount));
    }
  });
  if (wrapIn) {
    // The wrapping account lived for this transaction only: its rent goes back to whoever paid it.
    instructions.push(
      getCloseAccountInstruction(
        { account: userIn, destination: feePayer, owner: user },
        { programAddress: tokens.input.program },
      ),
    );
  }
  if (unwrapOut) {
    instructions.push(
      getCloseAccountInstruction(
        { account: ownOut, destination: input.user, owner: user },
        { programAddress: tokens.output.program },
      ),
    );
    const wallet = "wallet" in destination ? destination.wallet : destination.tokenAccount;
    if (wallet !== input.user)
      instructions.push(
        getTransferSolInstruction({ source: user, destination: wallet, amount: input.userOutAmount }),
      );
  }

  const swap = instructions[swapIndex];
  if (!swap) throw new Error("an order pays its user in its last leg");
  return {
    feePayer,
    computeBudget: instructions.slice(0, 2),
    setup: instructions.slice(2, swapIndex),
    swap,
    cleanup: instructions.slice(swapIndex + 1),
    signers: [...new Set(input.legs.map((leg) => leg.market.authority))],
  };
}

function vaultOf(pool: SyncMarket, mint: Address): Address {
  return pool.vaults[pool.sideOf(mint)];
}
