/** Builds and signs a v0 transaction with kit, ready for `Chain.sendTransaction`. */
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getTransactionEncoder,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from "@solana/kit";
import type { LatestBlockhash } from "./chain.js";

/** Compiles `instructions` with `feePayer` and `lifetime` and signs with every signer they name. */
export async function signInstructions(
  feePayer: TransactionSigner,
  instructions: readonly Instruction[],
  lifetime: LatestBlockhash,
) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return signTransactionMessageWithSigners(message);
}

/** Like `signInstructions`, encoded as wire bytes for `Chain.sendTransaction`. */
export async function buildSignedTransaction(
  feePayer: TransactionSigner,
  instructions: readonly Instruction[],
  lifetime: LatestBlockhash,
): Promise<Uint8Array> {
  const signed = await signInstructions(feePayer, instructions, lifetime);
  return new Uint8Array(getTransactionEncoder().encode(signed));
}
