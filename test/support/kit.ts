/** The user's side of a trade, done with `@solana/kit` as a wallet would. */
import {
  type Base64EncodedWireTransaction,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";

/** Adds `wallet`'s signature to a base64 wire transaction the venue issued; returns it as base64. */
export async function signWithKit(
  wallet: KeyPairSigner,
  transaction: string,
): Promise<Base64EncodedWireTransaction> {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  return getBase64EncodedWireTransaction(await partiallySignTransaction([wallet.keyPair], decoded));
}
