/**
 * The transactions of an escrowed order. Each order has its own escrow authority (derived from the
 * venue's root secret and the order id); the escrow is that authority's token account of the input
 * mint. The open transaction, signed by the user alone, funds the authority with the order's fee
 * budget, creates the escrow and the user's output account, and moves the input in; a memo carries
 * the order id and the venue's seal over its terms. The settling transaction, paid by the escrow
 * authority out of the fee budget, fills (escrow → route → user) or refunds (escrow → user), emptying
 * the escrow, so it can only ever happen once; an intent's escrow then stays open for its client to
 * read until the keeper sweeps it (its rent and the rest of the budget back to the user). A
 * prediction-market order's settlement closes its escrow at once.
 */
import { type Address, address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getCloseAccountInstruction, getSyncNativeInstruction } from "@solana-program/token";
import { addressBytes } from "../../chain/base58.js";
import type { Keypair } from "../../chain/ed25519.js";
import { LAMPORTS_PER_SIGNATURE, WRAPPED_SOL_MINT } from "../../chain/programs.js";
import type { WireTransaction } from "../../chain/wire.js";
import type { SyncMarket } from "../spot/market.js";
import type { TokenRecord } from "../spot/pools/store.js";
import type { RouteLeg } from "../spot/router.js";
import {
  computeUnitLimit,
  computeUnitPrice,
  createAssociatedTokenIdempotent,
  tokenTransfer,
} from "../tx/instructions.js";
import { associatedTokenAddress } from "../tx/token-accounts.js";
import {
  type CompiledMessage,
  compileMessage,
  type MessageFormat,
  signedTransaction,
} from "../tx/transaction.js";

const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const MEMO_PREFIX = "oddsgate order ";
/** Slots after the open transaction lands during which the intent may fill (the reference's example). */
export const INTENT_EXPIRY_SLOTS = 10;
/**
 * Lamports the user puts up for the settling transaction. The escrow authority must hold at least
 * the rent-exempt minimum of an empty account (890,880) to exist; all but the fee comes back.
 */
export const MIN_FEE_BUDGET = 1_000_000n;

/** Compute units of the open and settling transactions. */
export const ESCROW_COMPUTE_UNITS = 200_000;

export interface OpenTerms {
  orderId: string;
  /** Hex seal over the order's terms (see IntentDesk). */
  seal: string;
  user: Address;
  escrow: Address;
  input: TokenRecord;
  output: TokenRecord;
  amount: bigint;
  feeBudget: bigint;
  /** Wrap native SOL into the escrow when the input is wrapped SOL. */
  wrapSol: boolean;
  blockhash: string;
  /** Instructions the order adds before its memo (e.g. paying for a market's initialization). */
  extra?: readonly Instruction[];
  /**
   * Whether the user's output account is created here (default true); not when the output mint does
   * not exist yet (a market initialized by this order), whose settlement creates it.
   */
  createOutputAccount?: boolean;
  /** Who receives the output (`destinationWallet`); default the user. */
  receiver?: Address;
  /** Pays the transaction's fee, the fee budget and the accounts' rent (`sponsor`); default the user. */
  sponsor?: Address;
  /** Compute units asked for (default ESCROW_COMPUTE_UNITS) and the price per unit (default none). */
  computeUnits?: number;
  microLamports?: bigint;
  /** Default v0. */
  format?: MessageFormat;
}

/** The open transaction's message: everything the user signs. */
export async function openMessage(terms: OpenTerms): Promise<CompiledMessage> {
  const user = createNoopSigner(terms.user);
  const payer = terms.sponsor ?? terms.user;
  const escrowAccount = associatedTokenAddress(terms.escrow, terms.input.mint, terms.input.program);
  const receiver = terms.receiver ?? terms.user;
  const userOut = associatedTokenAddress(receiver, terms.output.mint, terms.output.program);
  const instructions: Instruction[] = [computeUnitLimit(terms.computeUnits ?? ESCROW_COMPUTE_UNITS)];
  if (terms.microLamports) instructions.push(computeUnitPrice(terms.microLamports));
  instructions.push(
    getTransferSolInstruction({
      source: createNoopSigner(payer),
      destination: terms.escrow,
      amount: terms.feeBudget,
    }),
    createAssociatedTokenIdempotent({
      payer,
      ata: escrowAccount,
      owner: terms.escrow,
      mint: terms.input.mint,
      tokenProgram: terms.input.program,
    }),
  );
  if (terms.createOutputAccount ?? true) {
    instructions.push(
      createAssociatedTokenIdempotent({
        payer,
        ata: userOut,
        owner: receiver,
        mint: terms.output.mint,
        tokenProgram: terms.output.program,
      }),
    );
  }
  if (terms.wrapSol && terms.input.mint === WRAPPED_SOL_MINT) {
    instructions.push(
      getTransferSolInstruction({ source: user, destination: escrowAccount, amount: terms.amount }),
      getSyncNativeInstruction({ account: escrowAccount }, { programAddress: terms.input.program }),
    );
  } else {
    const userIn = associatedTokenAddress(terms.user, terms.input.mint, terms.input.program);
    instructions.push(tokenTransfer(terms.input, userIn, escrowAccount, terms.user, terms.amount));
  }
  instructions.push(...(terms.extra ?? []), openMemo(terms.orderId, terms.seal));
  return compileMessage(payer, instructions, terms.blockhash, terms.format);
}

/** The memo naming an order (or a market initialization) and the venue's seal over its terms. */
export function openMemo(orderId: string, seal: string): Instruction {
  return {
    programAddress: MEMO_PROGRAM,
    accounts: [],
    data: new TextEncoder().encode(`${MEMO_PREFIX}${orderId} ${seal}`),
  };
}

/** The order id and seal an open transaction's memo carries, if it has one. */
export function readOpenMemo(memo: Uint8Array): { orderId: string; seal: string } | undefined {
  const text = Buffer.from(memo).toString("utf8");
  if (!text.startsWith(MEMO_PREFIX)) return undefined;
  const [orderId, seal, ...rest] = text.slice(MEMO_PREFIX.length).split(" ");
  if (!orderId || !seal || rest.length > 0) return undefined;
  return { orderId, seal };
}

export { MEMO_PROGRAM };

/** The order id and seal in a transaction's open-order memo, if it has one. */
export function openMemoOf(tx: WireTransaction): { orderId: string; seal: string } | undefined {
  const memoKey = addressBytes(MEMO_PROGRAM);
  for (const instruction of tx.instructions) {
    const program = tx.accountKeys[instruction.programIdIndex];
    if (program && Buffer.from(program).equals(memoKey)) return readOpenMemo(instruction.data);
  }
  return undefined;
}

/** An order's escrow as a settlement finds it: whose it is, its tokens, and what it holds now. */
export interface EscrowedOrder {
  escrow: Keypair;
  user: Address;
  input: TokenRecord;
  output: TokenRecord;
  /** The escrow's token balance and its authority's lamports, as the chain holds them now. */
  escrowAmount: bigint;
  escrowLamports: bigint;
}

export interface SettleInput extends EscrowedOrder {
  /**
   * A fill: the route's legs, what the user receives and the platform fee, paid out of the last
   * leg's output into its token account; absent for a refund.
   */
  fill?: {
    legs: readonly RouteLeg<SyncMarket>[];
    userOut: bigint;
    fee?: { amount: bigint; account: Address };
  };
  blockhash: string;
}

/** The settling transaction, signed by the escrow authority (its fee payer) and every pool it uses. */
export async function settleTransaction(input: SettleInput): Promise<Uint8Array> {
  const escrowAccount = associatedTokenAddress(input.escrow.address, input.input.mint, input.input.program);
  const instructions: Instruction[] = [computeUnitLimit(ESCROW_COMPUTE_UNITS)];
  const pools: SyncMarket[] = [];
  let spent = 0n;
  if (input.fill) {
    const userOut = associatedTokenAddress(input.user, input.output.mint, input.output.program);
    const { legs, userOut: userOutAmount } = input.fill;
    spent = legs[0]?.inAmount ?? 0n;
    legs.forEach((leg, index) => {
      const pool = leg.market;
      pools.push(pool);
      if (index === 0) {
        instructions.push(
          tokenTransfer(
            input.input,
            escrowAccount,
            pool.vaults[pool.sideOf(leg.inputMint)],
            input.escrow.address,
            leg.inAmount,
          ),
        );
      }
      const next = legs[index + 1]?.market;
      const source = pool.vaults[pool.sideOf(leg.outputMint)];
      const destination = next ? next.vaults[next.sideOf(leg.outputMint)] : userOut;
      const amount = next ? leg.outAmount : userOutAmount;
      const token = index === legs.length - 1 ? input.output : tokenOf(pool, leg.outputMint);
      instructions.push(tokenTransfer(token, source, destination, pool.authority.address, amount));
      const fee = input.fill?.fee;
      if (!next && fee && fee.amount > 0n)
        instructions.push(tokenTransfer(token, source, fee.account, pool.authority.address, fee.amount));
    });
  }
  const leftover = input.escrowAmount - spent;
  // Wrapped SOL left in the escrow comes back as SOL when the escrow is swept; other tokens go back now.
  if (leftover > 0n && input.input.mint !== WRAPPED_SOL_MINT) {
    const userIn = associatedTokenAddress(input.user, input.input.mint, input.input.program);
    instructions.push(tokenTransfer(input.input, escrowAccount, userIn, input.escrow.address, leftover));
  }
  // The escrow stays open, emptied, for the client to read; `sweepTransaction` closes it later.
  const message = compileMessage(input.escrow.address, instructions, input.blockhash);
  return signedTransaction(message, [input.escrow, ...new Set(pools.map((pool) => pool.authority))]);
}

/**
 * The sweep of a settled intent's escrow, paid by its authority: closes the emptied escrow (its rent,
 * and any wrapped SOL left in it, to the user) and sends the user what is left of the fee budget, so
 * the authority ends with nothing. `escrowOpen`: whether the escrow account still exists.
 */
export async function sweepTransaction(input: {
  escrow: Keypair;
  user: Address;
  input: TokenRecord;
  escrowOpen: boolean;
  /** Tokens found in the escrow (anyone may send some): returned to the user, so it can close. */
  escrowAmount: bigint;
  /** The authority's lamports now. */
  lamports: bigint;
  blockhash: string;
}): Promise<Uint8Array> {
  const authority = createNoopSigner(input.escrow.address);
  const instructions: Instruction[] = [];
  const escrowAccount = associatedTokenAddress(input.escrow.address, input.input.mint, input.input.program);
  if (input.escrowAmount > 0n && input.input.mint !== WRAPPED_SOL_MINT) {
    const userIn = associatedTokenAddress(input.user, input.input.mint, input.input.program);
    instructions.push(
      tokenTransfer(input.input, escrowAccount, userIn, input.escrow.address, input.escrowAmount),
    );
  }
  if (input.escrowOpen)
    instructions.push(
      getCloseAccountInstruction(
        { account: escrowAccount, destination: input.user, owner: authority },
        { programAddress: input.input.program },
      ),
    );
  const rest = input.lamports - LAMPORTS_PER_SIGNATURE;
  if (rest > 0n)
    instructions.push(
      getTransferSolInstruction({ source: authority, destination: input.user, amount: rest }),
    );
  return signedTransaction(compileMessage(input.escrow.address, instructions, input.blockhash), [
    input.escrow,
  ]);
}

function tokenOf(pool: SyncMarket, mint: Address): TokenRecord {
  return pool.tokens[pool.sideOf(mint)];
}
