/** The user's side of a trade, done with `@solana/kit` as a wallet would. */
import {
  AccountRole,
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  blockhash,
  compileTransaction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signatureBytes,
} from "@solana/kit";
import { expect } from "vitest";
import { decodeSignatureBytes } from "../../src/chain/base58.js";
import type { RpcChain } from "../../src/chain/rpc-client.js";
import type { SwapInstructionsResponse } from "../../src/contract/trade.js";

/** Adds `wallet`'s signature to a base64 wire transaction the venue issued; returns it as base64. */
export async function signWithKit(
  wallet: KeyPairSigner | readonly KeyPairSigner[],
  transaction: string,
): Promise<Base64EncodedWireTransaction> {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  const signers = (Array.isArray(wallet) ? wallet : [wallet]) as readonly KeyPairSigner[];
  return getBase64EncodedWireTransaction(
    await partiallySignTransaction(
      signers.map((signer) => signer.keyPair),
      decoded,
    ),
  );
}

/**
 * A new wallet (or `wallet`) with `lamports` airdropped over `chain`, then each grant of a mint paid
 * by the `/dev/faucet` of the server at `url`.
 */
export async function newFundedWallet(
  url: string,
  chain: RpcChain,
  lamports: bigint,
  grants: readonly (readonly [Address, bigint])[] = [],
  wallet?: KeyPairSigner,
): Promise<KeyPairSigner> {
  wallet ??= await generateKeyPairSigner();
  // No lamports: a wallet that cannot pay a fee (a sponsored user's).
  if (lamports > 0n) await chain.requestAirdrop(wallet.address, lamports);
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

/** What a kit client does with `/swap-instructions`: compiles `groups` in order, adds the pools' signatures, signs. */
export async function assembleSwapInstructions(
  set: SwapInstructionsResponse,
  user: KeyPairSigner,
  groups: SwapInstructionsResponse["setupInstructions"],
) {
  const instructions: Instruction[] = groups.map((instruction) => ({
    programAddress: address(instruction.programId),
    accounts: instruction.accounts.map((account) => ({
      address: address(account.pubkey),
      role: account.isSigner
        ? account.isWritable
          ? AccountRole.WRITABLE_SIGNER
          : AccountRole.READONLY_SIGNER
        : account.isWritable
          ? AccountRole.WRITABLE
          : AccountRole.READONLY,
    })),
    data: Buffer.from(instruction.data, "base64"),
  }));
  const compiled = compileTransaction(
    pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayer(user.address, message),
      (message) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: blockhash(set.blockhashWithMetadata.blockhash),
            lastValidBlockHeight: BigInt(set.blockhashWithMetadata.lastValidBlockHeight),
          },
          message,
        ),
      (message) => appendTransactionMessageInstructions(instructions, message),
    ),
  );
  const venueSignatures = Object.entries(set.venueSignatures).map(([signer, signature]) => [
    signer,
    signatureBytes(decodeSignatureBytes(signature)),
  ]);
  return partiallySignTransaction([user.keyPair], {
    ...compiled,
    signatures: { ...compiled.signatures, ...Object.fromEntries(venueSignatures) },
  });
}
