/**
 * Prediction-market orders (`executionMode: "async"`). `/order` issues an open transaction that puts
 * the input in a per-order escrow, and records the order; the user signs and sends it like a spot
 * trade. The keeper notices the funded escrow and settles it against the venue: a buy pays USDC into
 * the treasury and mints whole contracts to the user; a sale or a redemption burns the contracts and
 * pays USDC from the treasury; whatever cannot fill goes back (a revert). The venue can mint outcome
 * tokens and pay from its treasury only where it holds their keys, i.e. on the sandbox chain.
 */
import { randomBytes } from "node:crypto";
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getBurnCheckedInstruction,
  getCloseAccountInstruction,
  getMintToCheckedInstruction,
} from "@solana-program/token";
import type { Kysely } from "kysely";
import type { Keypair } from "../../chain/ed25519.js";
import { LAMPORTS_PER_SIGNATURE } from "../../chain/programs.js";
import { USDC_MINT } from "../../contract/markets.js";
import type { Tables } from "../../storage/database.js";
import { computeUnitLimit, tokenTransfer } from "../instructions.js";
import type { OrderRequest, PricedRoute } from "../order-terms.js";
import type { PoolAuthorities } from "../pools/authority.js";
import { associatedTokenAddress } from "../token-accounts.js";
import { compileMessage, signedTransaction } from "../transaction.js";
import {
  ESCROW_COMPUTE_UNITS,
  type EscrowedOrder,
  INTENT_EXPIRY_SLOTS,
  MIN_FEE_BUDGET,
  openMessage,
} from "./escrow.js";
import { insertOrder } from "./store.js";

/** The venue's own keys on the sandbox chain: the outcome mints' authority and the USDC treasury. */
export interface VenueSigningKeys {
  mintAuthority: Keypair;
  treasury: Keypair;
}

/** Records an async order and returns its open transaction (unsigned) and lifetime. */
export async function issuePredictionOrder(
  deps: { db: Kysely<Tables>; authorities: PoolAuthorities },
  request: OrderRequest & { userPublicKey: Address },
  priced: PricedRoute,
): Promise<{ transaction: string; lastValidBlockHeight: number; computeUnitLimit: number }> {
  const orderId = randomBytes(12).toString("hex");
  const escrow = deps.authorities.orderAuthority(orderId).address;
  const { latest } = priced.clock;
  const message = await openMessage({
    orderId,
    seal: deps.authorities.seal(`${orderId}\0${request.userPublicKey}\0${latest.blockhash}`),
    user: request.userPublicKey,
    escrow,
    input: priced.input,
    output: priced.output,
    amount: request.amount,
    feeBudget: MIN_FEE_BUDGET,
    wrapSol: false,
    blockhash: latest.blockhash,
  });
  await insertOrder(deps.db, {
    id: orderId,
    kind: "async",
    status: "pending",
    user: request.userPublicKey,
    inputMint: request.inputMint,
    outputMint: request.outputMint,
    inAmount: request.amount,
    threshold: priced.threshold,
    escrow,
    openSignature: null,
    openWire: null,
    openValidHeight: latest.lastValidBlockHeight,
    expirySlots: INTENT_EXPIRY_SLOTS,
    feeBudget: MIN_FEE_BUDGET,
    answer: null,
  });
  return {
    transaction: Buffer.from(signedTransaction(message, [])).toString("base64"),
    lastValidBlockHeight: Number(latest.lastValidBlockHeight),
    computeUnitLimit: ESCROW_COMPUTE_UNITS,
  };
}

export interface PredictionSettleInput extends EscrowedOrder {
  /** The fill: input used, output delivered, and the venue's keys delivering it; absent for a refund. */
  fill?: { inAmount: bigint; outAmount: bigint; venue: VenueSigningKeys };
  blockhash: string;
}

/** The settling transaction of a prediction-market order, paid by its escrow authority. */
export async function predictionSettleTransaction(input: PredictionSettleInput): Promise<Uint8Array> {
  const { escrow, user, fill } = input;
  const escrowSigner = createNoopSigner(escrow.address);
  const escrowAccount = await associatedTokenAddress(escrow.address, input.input.mint, input.input.program);
  const userIn = await associatedTokenAddress(user, input.input.mint, input.input.program);
  const userOut = await associatedTokenAddress(user, input.output.mint, input.output.program);
  const instructions: Instruction[] = [computeUnitLimit(ESCROW_COMPUTE_UNITS)];
  const signers: Keypair[] = [escrow];
  const spent = fill?.inAmount ?? 0n;
  if (fill && input.input.mint === USDC_MINT) {
    // A buy: the USDC spent goes to the treasury; the contracts are minted to the user.
    const { venue } = fill;
    const treasuryUsdc = await associatedTokenAddress(venue.treasury.address, USDC_MINT, input.input.program);
    instructions.push(
      tokenTransfer(input.input, escrowAccount, treasuryUsdc, escrow.address, spent),
      getMintToCheckedInstruction(
        {
          mint: input.output.mint,
          token: userOut,
          mintAuthority: createNoopSigner(venue.mintAuthority.address),
          amount: fill.outAmount,
          decimals: input.output.decimals,
        },
        { programAddress: input.output.program },
      ),
    );
    signers.push(venue.mintAuthority);
  } else if (fill) {
    // A sale or a redemption: the contracts are burnt; the treasury pays the USDC.
    const { venue } = fill;
    const treasuryUsdc = await associatedTokenAddress(
      venue.treasury.address,
      USDC_MINT,
      input.output.program,
    );
    instructions.push(
      getBurnCheckedInstruction(
        {
          account: escrowAccount,
          mint: input.input.mint,
          authority: escrowSigner,
          amount: spent,
          decimals: input.input.decimals,
        },
        { programAddress: input.input.program },
      ),
      tokenTransfer(input.output, treasuryUsdc, userOut, venue.treasury.address, fill.outAmount),
    );
    signers.push(venue.treasury);
  }
  const leftover = input.escrowAmount - spent;
  if (leftover > 0n)
    instructions.push(tokenTransfer(input.input, escrowAccount, userIn, escrow.address, leftover));
  instructions.push(
    getCloseAccountInstruction(
      { account: escrowAccount, destination: user, owner: escrowSigner },
      { programAddress: input.input.program },
    ),
  );
  const refund = input.escrowLamports - BigInt(signers.length) * LAMPORTS_PER_SIGNATURE;
  if (refund > 0n)
    instructions.push(getTransferSolInstruction({ source: escrowSigner, destination: user, amount: refund }));
  return signedTransaction(compileMessage(escrow.address, instructions, input.blockhash), signers);
}
