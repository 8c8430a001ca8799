/**
 * A declarative trade by a client on @solana/web3.js 1.x, as the reference's own cookbook writes it:
 * `Transaction.from` the /intent open transaction (which throws on a v0 message, hence a legacy one),
 * sign it, POST /submit-intent, and /order-status until it closes with a fill. Everything the client
 * does here is web3.js; the venue's compiler is used only to show what v0 bytes would have done.
 */
import { AccountRole, address, type Instruction } from "@solana/kit";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse } from "../../src/trading/prediction/intents.js";
import { compileMessage, signedTransaction } from "../../src/trading/tx/transaction.js";
import { settledOrder, submitIntent } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "web3js-client-test";
const dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address;
const usdc = new PublicKey(USDC_MINT);
/** SPL Token's TransferChecked: tag, u64 amount, decimals. */
const TRANSFER_CHECKED = 12;

let t: TestServer;
let connection: Connection;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  connection = new Connection(t.server.chain.rpcUrl, "confirmed");
}, 120_000);
afterAll(async () => t?.stop());

function deth(): PublicKey {
  if (!dETH) throw new Error(`the demo tokens of ${VENUE_SEED} have no dETH`);
  return new PublicKey(dETH);
}

/** Polls the chain until `signature` is confirmed; fails if it landed with an error. */
async function landed(signature: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { value } = await connection.getSignatureStatus(signature);
    if (value?.confirmationStatus === "confirmed" || value?.confirmationStatus === "finalized") {
      expect(value.err).toBeNull();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`transaction ${signature} did not land`);
}

/** A web3.js keypair with SOL (airdropped over JSON-RPC) and `usdcAmount` USDC from the dev faucet. */
async function fundedKeypair(usdcAmount: bigint): Promise<Keypair> {
  const keypair = Keypair.generate();
  await landed(await connection.requestAirdrop(keypair.publicKey, 5 * LAMPORTS_PER_SOL));
  const response = await fetch(`${t.url}/dev/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      wallet: keypair.publicKey.toBase58(),
      mint: USDC_MINT,
      amount: usdcAmount.toString(),
    }),
  });
  expect(response.status).toBe(200);
  return keypair;
}

function associatedTokenAccount(owner: PublicKey, mint: PublicKey): PublicKey {
  const [ata] = PublicKey.findProgramAddressSync(
    [owner.toBuffer(), new PublicKey(TOKEN_PROGRAM).toBuffer(), mint.toBuffer()],
    new PublicKey(ASSOCIATED_TOKEN_PROGRAM),
  );
  return ata;
}

/** The owner's balance of `mint` in its associated account, as web3.js reads it; 0 while it does not exist. */
async function tokenBalance(owner: PublicKey, mint: PublicKey): Promise<bigint> {
  const ata = associatedTokenAccount(owner, mint);
  if (!(await connection.getAccountInfo(ata))) return 0n;
  return BigInt((await connection.getTokenAccountBalance(ata)).value.amount);
}

async function intent(owner: PublicKey, amount: bigint): Promise<IntentQuoteResponse> {
  const response = await fetch(
    `${t.url}/intent?inputMint=${USDC_MINT}&outputMint=${deth().toBase58()}&amount=${amount}&userPublicKey=${owner.toBase58()}`,
  );
  const body = (await response.json()) as IntentQuoteResponse;
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("IntentQuoteResponse", body)).toEqual([]);
  return body;
}

function openTransactionOf(quote: IntentQuoteResponse): string {
  if (!quote.openTransaction) throw new Error("an intent with a user carries an open transaction");
  return quote.openTransaction;
}

/** The fee payer's signature, base58: the transaction's id. */
function signatureOf(tx: Transaction): string {
  if (!tx.signature) throw new Error("the transaction is not signed");
  return encodeBase58(tx.signature);
}

/** web3.js's view of an instruction as a kit instruction, for the venue's compiler. */
function kitInstruction(instruction: TransactionInstruction): Instruction {
  return {
    programAddress: address(instruction.programId.toBase58()),
    accounts: instruction.keys.map((key) => ({
      address: address(key.pubkey.toBase58()),
      role: key.isSigner
        ? key.isWritable
          ? AccountRole.WRITABLE_SIGNER
          : AccountRole.READONLY_SIGNER
        : key.isWritable
          ? AccountRole.WRITABLE
          : AccountRole.READONLY,
    })),
    data: Uint8Array.from(instruction.data),
  };
}

describe("a @solana/web3.js 1.x client", () => {
  it("reads the open transaction with Transaction.from, signs it, submits it, and the order fills", async () => {
    const keypair = await fundedKeypair(50_000_000n);
    const usdcBefore = await tokenBalance(keypair.publicKey, usdc);
    expect(usdcBefore).toBe(50_000_000n);
    expect(await tokenBalance(keypair.publicKey, deth())).toBe(0n);

    const quote = await intent(keypair.publicKey, 20_000_000n);
    const issued = Buffer.from(openTransactionOf(quote), "base64");
    const tx = Transaction.from(issued);
    expect(tx.feePayer?.equals(keypair.publicKey)).toBe(true);
    expect(tx.signatures.map((entry) => entry.publicKey.toBase58())).toEqual([keypair.publicKey.toBase58()]);
    // web3.js keeps the message it read, byte for byte: what the user signs is what the venue issued.
    expect(tx.serializeMessage().equals(Buffer.from(parseWireTransaction(issued).message))).toBe(true);

    // The same instructions as a v0 message, as /intent used to issue them: web3.js 1.x cannot read it.
    const instructions = tx.instructions.map(kitInstruction);
    const feePayer = keypair.publicKey.toBase58();
    const blockhash = tx.recentBlockhash;
    if (!blockhash) throw new Error("the open transaction names its blockhash");
    const legacy = compileMessage(feePayer, instructions, blockhash, "legacy");
    expect(Buffer.from(legacy.bytes).equals(tx.serializeMessage())).toBe(true);
    const v0 = signedTransaction(compileMessage(feePayer, instructions, blockhash, "v0"), []);
    expect(() => Transaction.from(v0)).toThrow(/Versioned messages must be deserialized/);

    tx.partialSign(keypair);
    expect(tx.verifySignatures()).toBe(true);
    const signed = tx.serialize().toString("base64");
    const answer = await submitIntent(t.url, quote, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(validateAgainstReference("IntentSwapResponse", answer.body)).toEqual([]);
    expect(answer.body.openTransactionSignature).toBe(signatureOf(tx));

    const status = await settledOrder(t.url, signatureOf(tx));
    expect(status.status).toBe("closed");
    expect(status.fills).toHaveLength(1);
    expect(status.reverts).toBeUndefined();
    const fill = status.fills?.[0];
    expect(status.inAmount).toBe(quote.inAmount);
    expect(fill?.inAmount).toBe(quote.inAmount);
    expect(BigInt(status.outAmount)).toBeGreaterThanOrEqual(BigInt(quote.otherAmountThreshold));

    // The balances moved by the quoted input and the filled output, as web3.js reads them on chain.
    expect(await tokenBalance(keypair.publicKey, usdc)).toBe(usdcBefore - BigInt(quote.inAmount));
    expect(await tokenBalance(keypair.publicKey, deth())).toBe(BigInt(status.outAmount));
  });

  it("has an open transaction whose amount it altered before signing refused", async () => {
    const keypair = await fundedKeypair(10_000_000n);
    const quote = await intent(keypair.publicKey, 10_000_000n);
    const tx = Transaction.from(Buffer.from(openTransactionOf(quote), "base64"));
    const transfers = tx.instructions.filter(
      (instruction) =>
        instruction.programId.toBase58() === TOKEN_PROGRAM && instruction.data[0] === TRANSFER_CHECKED,
    );
    const [transfer, ...others] = transfers;
    if (!transfer || others.length > 0) throw new Error("the open transaction moves the input once");
    expect(transfer.data.readBigUInt64LE(1)).toBe(10_000_000n);
    // Only 1 of the 10 USDC into the escrow, for the same quote.
    transfer.data.writeBigUInt64LE(1n, 1);
    tx.partialSign(keypair);
    const altered = tx.serialize().toString("base64");

    const answer = await submitIntent(t.url, quote, altered);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.code).toBe("invalid_open_transaction");
    expect(Object.keys(answer.body).sort()).toEqual(["code", "msg"]);
    // The venue sent nothing: the altered transaction never reached the chain, the USDC is all there.
    const { value } = await connection.getSignatureStatus(signatureOf(tx));
    expect(value).toBeNull();
    expect(await tokenBalance(keypair.publicKey, usdc)).toBe(10_000_000n);
    const status = await fetch(`${t.url}/order-status?signature=${signatureOf(tx)}`);
    expect(status.status).toBe(404);
  });
});
