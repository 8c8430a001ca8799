/**
 * `POST /swap-instructions`: an order's instructions for the client to assemble, and the pools'
 * signatures over the one message that assembly gives. A pool's vault pays out only with its
 * authority's signature, and a signature covers a whole message, so the venue compiles the message a
 * `@solana/kit` client compiles from the same instructions (compute budget, setup, swap, cleanup, in
 * that order; the fee payer; `blockhashWithMetadata`; version 0, no lookup tables) and signs that.
 * kit orders the accounts canonically (by role, then by address), so any client that appends the
 * groups in order gets those bytes; other compilers order accounts by first use and get a message the
 * pools did not sign, which the chain refuses.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  type Instruction,
  pipe,
  type SignatureBytes,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signatureBytes,
} from "@solana/kit";
import { encodeSignature } from "../../chain/base58.js";
import type { LatestBlockhash } from "../../chain/chain.js";
import type { OrderInstructions } from "../tx/order-transaction.js";

/** An instruction as `/swap-instructions` returns it (the reference's `InstructionResponse`). */
export interface InstructionJson {
  programId: string;
  accounts: { pubkey: string; isSigner: boolean; isWritable: boolean }[];
  /** Base64. */
  data: string;
}

/** The instruction groups as JSON, the pools' signatures, and the wire transaction they make once the user signs. */
export interface SignedInstructionSet {
  computeBudgetInstructions: InstructionJson[];
  setupInstructions: InstructionJson[];
  swapInstruction: InstructionJson;
  cleanupInstructions: InstructionJson[];
  /** The blockhash the message was compiled with. */
  blockhash: string;
  /** Signer → base58 signature over the assembled message. */
  venueSignatures: Record<string, string>;
  /** The assembled transaction with only the pools' signatures, for the signing guard to read. */
  wire: Uint8Array;
}

/** Compiles the groups as a kit client does, and signs the message with the pools. */
export function signInstructionSet(
  parts: OrderInstructions,
  lifetime: LatestBlockhash,
): SignedInstructionSet {
  const instructions = [...parts.computeBudget, ...parts.setup, parts.swap, ...parts.cleanup];
  const transaction = compileTransaction(
    pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayer(parts.feePayer, message),
      (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
      (message) => appendTransactionMessageInstructions(instructions, message),
    ),
  );
  const messageBytes = new Uint8Array(transaction.messageBytes);
  const signatures: Record<string, SignatureBytes | null> = { ...transaction.signatures };
  const venueSignatures: Record<string, string> = {};
  for (const keypair of parts.signers) {
    const signature = keypair.sign(messageBytes);
    signatures[keypair.address] = signatureBytes(signature);
    venueSignatures[keypair.address] = encodeSignature(signature);
  }
  const wire = new Uint8Array(getTransactionEncoder().encode({ ...transaction, signatures }));
  return {
    computeBudgetInstructions: parts.computeBudget.map(instructionJson),
    setupInstructions: parts.setup.map(instructionJson),
    swapInstruction: instructionJson(parts.swap),
    cleanupInstructions: parts.cleanup.map(instructionJson),
    blockhash: lifetime.blockhash,
    venueSignatures,
    wire,
  };
}

function instructionJson(instruction: Instruction): InstructionJson {
  return {
    programId: instruction.programAddress,
    accounts: (instruction.accounts ?? []).map((account) => ({
      pubkey: account.address,
      isSigner: account.role === AccountRole.READONLY_SIGNER || account.role === AccountRole.WRITABLE_SIGNER,
      isWritable: account.role === AccountRole.WRITABLE || account.role === AccountRole.WRITABLE_SIGNER,
    })),
    data: Buffer.from(instruction.data ?? new Uint8Array()).toString("base64"),
  };
}
