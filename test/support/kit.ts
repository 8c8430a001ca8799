/** The user's side of a trade, done with `@solana/kit` as a wallet would. */
import {
  type Address,
  type Base64EncodedWireTransaction,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { expect } from "vitest";
import type { RpcChain } from "../../src/chain/rpc-client.js";

/** Adds `wallet`'s signature to a base64 wire transaction the venue issued; returns it as base64. */
export async function signWithKit(
  wallet: KeyPairSigner,
  transaction: string,
): Promise<Base64EncodedWireTransaction> {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  return getBase64EncodedWireTransaction(await partiallySignTransaction([wallet.keyPair], decoded));
}

/**
 * A new wallet with `lamports` airdropped over `chain`, then each grant of a mint paid by the
 * `/dev/faucet` of the server at `url`.
 */
export async function newFundedWallet(
  url: string,
  chain: RpcChain,
  lamports: bigint,
  grants: readonly (readonly [Address, bigint])[] = [],
): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await chain.requestAirdrop(wallet.address, lamports);
  for (const [mint, amount] of grants) {
    const response = await fetch(`${url}/dev/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet: wallet.address, mint, amount: amount.toString() }),
    });
    expect(response.status).toBe(200);
  }
  return wallet;
}

/**
 * Signs a transaction the venue issued as `wallet` (signWithKit), sends it with kit's JSON-RPC client
 * to `rpcUrl`, and checks over `chain` that it landed without an error; returns its signature.
 */
export async function signAndSendWithKit(
  rpcUrl: string,
  chain: RpcChain,
  wallet: KeyPairSigner,
  transaction: string,
): Promise<string> {
  const signature = await createSolanaRpc(rpcUrl)
    .sendTransaction(await signWithKit(wallet, transaction), { encoding: "base64" })
    .send();
  const [status] = await chain.getSignatureStatuses([signature]);
  expect(status?.err ?? null).toBeNull();
  return signature;
}
