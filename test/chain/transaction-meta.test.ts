import { type Address, createSolanaRpc, devnet, generateKeyPairSigner, type Signature } from "@solana/kit";
import {
  Connection,
  Keypair,
  NONCE_ACCOUNT_LENGTH,
  type ParsedInstruction,
  type ParsedTransactionWithMeta,
  PublicKey,
  SystemProgram,
  type TokenBalance,
  Transaction,
  VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { faucet } from "../../src/chain/faucet.js";
import { ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import {
  decodeMetaExtras,
  emptyMetaExtras,
  encodeMetaExtras,
  type TokenBalance as StoredTokenBalance,
  type TransactionMetaExtras,
} from "../../src/chain/sandbox/transaction-meta.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { startTestChain, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

// What Agave's getTransaction meta always holds (returnData only when a program set some).
const AGAVE_META_FIELDS = [
  "err",
  "status",
  "fee",
  "preBalances",
  "postBalances",
  "innerInstructions",
  "logMessages",
  "preTokenBalances",
  "postTokenBalances",
  "rewards",
  "loadedAddresses",
  "computeUnitsConsumed",
];

async function rpcCall(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

// The change of each token account's balance, by address, from a transaction's meta.
function tokenDeltas(
  keys: readonly string[],
  pre: readonly TokenBalance[],
  post: readonly TokenBalance[],
): Map<string, bigint> {
  const deltas = new Map<string, bigint>();
  for (const balance of post) {
    deltas.set(keys[balance.accountIndex] ?? "", BigInt(balance.uiTokenAmount.amount));
  }
  for (const balance of pre) {
    const key = keys[balance.accountIndex] ?? "";
    deltas.set(key, (deltas.get(key) ?? 0n) - BigInt(balance.uiTokenAmount.amount));
  }
  return deltas;
}

describe("transaction meta and jsonParsed, judged by @solana/web3.js 1.x and @solana/kit", () => {
  const dir = tempDir();
  let chain: TestChain;
  let connection: Connection;
  const clock = new ManualClock();
  let transferSignature: string;
  let grantSignature: string;
  let alice: Awaited<ReturnType<typeof generateKeyPairSigner>>;
  let bob: Awaited<ReturnType<typeof generateKeyPairSigner>>;

  const start = async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir }, { clock });
    connection = new Connection(chain.rpcUrl, { commitment: "confirmed" });
  };

  beforeAll(async () => {
    await start();
    alice = await generateKeyPairSigner();
    bob = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 3_000_000n);
    grantSignature = (await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 5n)).signature;
    const wire = await usdcTransfer(chain.chain, alice, bob.address, 1_250_000n);
    transferSignature = await chain.chain.sendTransaction(wire);
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  const checkTransferMeta = async () => {
    const fetched = await connection.getTransaction(transferSignature, { maxSupportedTransactionVersion: 0 });
    const meta = fetched?.meta;
    if (!fetched || !meta) throw new Error("transfer not found");
    expect(meta.err).toBeNull();
    expect(meta.fee).toBe(5000);
    expect(meta.logMessages?.length).toBeGreaterThan(0);
    expect(meta.computeUnitsConsumed).toBeGreaterThan(0);
    expect(meta.loadedAddresses).toEqual({ writable: [], readonly: [] });
    // The raw answer: no field Agave fills may be missing.
    const raw = (await rpcCall(chain.rpcUrl, "getTransaction", [
      transferSignature,
      { encoding: "json", maxSupportedTransactionVersion: 0 },
    ])) as { meta: Record<string, unknown> };
    for (const field of AGAVE_META_FIELDS) expect(raw.meta[field], field).toBeDefined();
    expect(raw.meta.rewards).toEqual([]);
    const keys = fetched.transaction.message.staticAccountKeys.map((key) => key.toBase58());
    const aliceUsdc = await usdcAccountOf(alice.address);
    const bobUsdc = await usdcAccountOf(bob.address);
    expect(meta.preTokenBalances).toHaveLength(2);
    expect(meta.postTokenBalances).toHaveLength(2);
    const alicePost = meta.postTokenBalances?.find((b) => keys[b.accountIndex] === aliceUsdc);
    expect(alicePost).toEqual({
      accountIndex: keys.indexOf(aliceUsdc),
      mint: USDC_MINT,
      owner: alice.address,
      programId: TOKEN_PROGRAM,
      uiTokenAmount: { amount: "1750000", decimals: 6, uiAmount: 1.75, uiAmountString: "1.75" },
    });
    const deltas = tokenDeltas(keys, meta.preTokenBalances ?? [], meta.postTokenBalances ?? []);
    expect(deltas.get(aliceUsdc)).toBe(-1_250_000n);
    expect(deltas.get(bobUsdc)).toBe(1_250_000n);
  };

  it("fills token balances and their deltas for a USDC transferChecked", checkTransferMeta);

  it("records an ATA creation's inner instructions, parsed by getParsedTransaction", async () => {
    const raw = await connection.getTransaction(grantSignature, { maxSupportedTransactionVersion: 0 });
    const inner = raw?.meta?.innerInstructions ?? [];
    expect(inner.length).toBeGreaterThan(0);
    expect(inner[0]?.index).toBe(0);
    expect(inner[0]?.instructions.length).toBeGreaterThan(0);
    // A grant to a fresh wallet creates its account: no token balance before, 5 units after.
    expect(raw?.meta?.preTokenBalances).toEqual([]);
    expect(raw?.meta?.postTokenBalances?.[0]?.uiTokenAmount.amount).toBe("5");

    const parsed = await connection.getParsedTransaction(grantSignature, {
      maxSupportedTransactionVersion: 0,
    });
    if (!parsed?.meta) throw new Error("grant not found");
    const keys = parsed.transaction.message.accountKeys;
    expect(keys[0]?.signer).toBe(true);
    expect(keys[0]?.writable).toBe(true);
    expect(keys[0]?.source).toBe("transaction");
    const [create, mintTo] = parsed.transaction.message.instructions as ParsedInstruction[];
    expect(create?.program).toBe("spl-associated-token-account");
    expect(create?.parsed.type).toBe("createIdempotent");
    expect(create?.parsed.info.wallet).toBe(bob.address);
    expect(mintTo?.program).toBe("spl-token");
    expect(mintTo?.parsed).toEqual({
      type: "mintTo",
      info: {
        mint: USDC_MINT,
        account: await usdcAccountOf(bob.address),
        amount: "5",
        mintAuthority: chain.signers.mintAuthority.address,
      },
    });
    const innerParsed = (parsed.meta.innerInstructions?.[0]?.instructions ?? []) as ParsedInstruction[];
    const types = innerParsed.map((i) => `${i.program}:${i.parsed?.type}`);
    expect(types).toContain("spl-token:initializeAccount3");
    expect(types.some((t) => t.startsWith("system:"))).toBe(true);
    const heights = innerParsed.map((i) => (i as ParsedInstruction & { stackHeight?: number }).stackHeight);
    expect(heights.every((height) => height !== undefined && height >= 2)).toBe(true);
    const memo = parsed.transaction.message.instructions.at(-1) as ParsedInstruction;
    expect(memo.program).toBe("spl-memo");
    expect(typeof memo.parsed).toBe("string");
  });

  it("answers getParsedTransactions with parsed transferChecked and token balances", async () => {
    const [parsed] = await connection.getParsedTransactions([transferSignature], {
      maxSupportedTransactionVersion: 0,
    });
    const tx = parsed as ParsedTransactionWithMeta;
    const [transfer] = tx.transaction.message.instructions as ParsedInstruction[];
    expect(transfer?.programId.toBase58()).toBe(TOKEN_PROGRAM);
    expect(transfer?.parsed).toEqual({
      type: "transferChecked",
      info: {
        source: await usdcAccountOf(alice.address),
        mint: USDC_MINT,
        destination: await usdcAccountOf(bob.address),
        authority: alice.address,
        tokenAmount: { amount: "1250000", decimals: 6, uiAmount: 1.25, uiAmountString: "1.25" },
      },
    });
    expect(tx.meta?.postTokenBalances).toHaveLength(2);
    expect(tx.meta?.innerInstructions).toEqual([]);
    expect(tx.transaction.message.accountKeys.every((k) => k.pubkey instanceof PublicKey)).toBe(true);
  });

  it("answers kit's getTransaction with jsonParsed", async () => {
    const rpc = createSolanaRpc(devnet(chain.rpcUrl));
    const tx = await rpc
      .getTransaction(transferSignature as Signature, {
        encoding: "jsonParsed",
        maxSupportedTransactionVersion: 0,
        commitment: "confirmed",
      })
      .send();
    expect(tx?.version).toBe(0);
    expect(tx?.meta?.postTokenBalances?.length).toBe(2);
    const first = tx?.transaction.message.instructions[0];
    expect(first && "parsed" in first ? first.parsed.type : null).toBe("transferChecked");
    expect(tx?.transaction.message.accountKeys[0]?.pubkey).toBe(alice.address);
  });

  it("simulates with inner instructions, accounts and a replacement blockhash", async () => {
    const payer = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(payer.address, 1_000_000_000n);
    const carol = await generateKeyPairSigner();
    const grant = await faucet(chain.chain, chain.signers, payer.address, USDC_MINT, 10n);
    expect(grant.signature).toBeTruthy();
    const wire = await usdcTransfer(chain.chain, payer, alice.address, 3n);
    const tx = VersionedTransaction.deserialize(wire);
    const bobUsdc = new PublicKey(await usdcAccountOf(alice.address));
    const simulated = await connection.simulateTransaction(tx, {
      replaceRecentBlockhash: true,
      innerInstructions: true,
      accounts: { encoding: "base64", addresses: [bobUsdc.toBase58(), carol.address] },
    });
    expect(simulated.value.err).toBeNull();
    expect(simulated.value.unitsConsumed).toBeGreaterThan(0);
    expect(simulated.value.logs?.length).toBeGreaterThan(0);
    expect(simulated.value.innerInstructions).toEqual([]);
    expect(simulated.value.accounts).toHaveLength(2);
    expect(simulated.value.accounts?.[0]?.owner).toBe(TOKEN_PROGRAM);
    expect(simulated.value.accounts?.[1]).toBeNull();
    const replaced = simulated.value as { replacementBlockhash?: { blockhash: string } | null };
    expect(replaced.replacementBlockhash?.blockhash).toBeTruthy();
  });

  it("parses accounts: token accounts and mints, and system accounts as base64", async () => {
    const usdc = await connection.getParsedAccountInfo(new PublicKey(await usdcAccountOf(bob.address)));
    const data = usdc.value?.data as { program: string; parsed: { type: string } };
    expect(data.program).toBe("spl-token");
    expect(data.parsed.type).toBe("account");
    const wallet = await connection.getParsedAccountInfo(new PublicKey(alice.address));
    expect(wallet.value?.owner.toBase58()).toBe(SYSTEM_PROGRAM);
    const ata = await connection.getParsedAccountInfo(new PublicKey(ASSOCIATED_TOKEN_PROGRAM));
    expect(ata.value === null || ata.value.executable).toBe(true);
  });

  it("parses a durable nonce account and the System instructions that made it", async () => {
    const payer = Keypair.generate();
    const nonce = Keypair.generate();
    await chain.chain.requestAirdrop(payer.publicKey.toBase58() as Address, 1_000_000_000n);
    const latest = await connection.getLatestBlockhash();
    const lamports = await connection.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH);
    const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
      SystemProgram.createNonceAccount({
        fromPubkey: payer.publicKey,
        noncePubkey: nonce.publicKey,
        authorizedPubkey: payer.publicKey,
        lamports,
      }),
    );
    tx.sign(payer, nonce);
    const signature = await chain.chain.sendTransaction(tx.serialize());
    const account = await connection.getParsedAccountInfo(nonce.publicKey);
    const data = account.value?.data as {
      program: string;
      parsed: { type: string; info: Record<string, unknown> };
    };
    expect(data.program).toBe("nonce");
    expect(data.parsed.type).toBe("initialized");
    expect(data.parsed.info.authority).toBe(payer.publicKey.toBase58());
    expect(data.parsed.info.feeCalculator).toEqual({ lamportsPerSignature: "5000" });
    const parsed = await connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
    const [create, initialize] = (parsed?.transaction.message.instructions ?? []) as ParsedInstruction[];
    expect(create?.program).toBe("system");
    expect(create?.parsed).toEqual({
      type: "createAccount",
      info: {
        source: payer.publicKey.toBase58(),
        newAccount: nonce.publicKey.toBase58(),
        lamports,
        space: NONCE_ACCOUNT_LENGTH,
        owner: SYSTEM_PROGRAM,
      },
    });
    expect(initialize?.parsed.type).toBe("initializeNonce");
    expect(initialize?.parsed.info.nonceAuthority).toBe(payer.publicKey.toBase58());
  });

  it("keeps the meta across a restart", async () => {
    await chain.stop();
    await start();
    await checkTransferMeta();
    const raw = await connection.getTransaction(grantSignature, { maxSupportedTransactionVersion: 0 });
    expect(raw?.meta?.innerInstructions?.length).toBeGreaterThan(0);
  });

  it("reads a balance a cheatcode changed between two transfers, not as the first transfer left it", async () => {
    const aliceUsdc = await usdcAccountOf(alice.address);
    const send = async (amount: bigint) => {
      const signature = await chain.chain.sendTransaction(
        await usdcTransfer(chain.chain, alice, bob.address, amount),
      );
      const fetched = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
      const keys = fetched?.transaction.message.staticAccountKeys.map((key) => key.toBase58()) ?? [];
      const of = (balances: readonly TokenBalance[] | null | undefined) =>
        balances?.find((balance) => keys[balance.accountIndex] === aliceUsdc)?.uiTokenAmount.amount;
      return { pre: of(fetched?.meta?.preTokenBalances), post: of(fetched?.meta?.postTokenBalances) };
    };
    const first = await send(1_111n);
    expect(BigInt(first.pre ?? 0) - BigInt(first.post ?? 0)).toBe(1_111n);
    // Same lamports, other data: the balance before the next transfer is the cheatcode's.
    await rpcCall(chain.rpcUrl, "surfnet_setTokenAccount", [alice.address, USDC_MINT, { amount: 9_000_000 }]);
    expect(await send(2_222n)).toEqual({ pre: "9000000", post: "8997778" });
  });
});

describe("a venue swap's token balances, through /order", () => {
  const venueSeed = "meta-test";
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED: venueSeed } });
  }, 120_000);
  afterAll(async () => t?.stop());

  it("shows the wallet's USDC out and dETH in as its token deltas", async () => {
    const chain = new RpcChain({ url: t.server.chain.rpcUrl });
    const wallet = await newFundedWallet(t.url, chain, 10_000_000_000n, [[USDC_MINT, 50_000_000n]]);
    const deth = demoTokens(venueSeed).find((candidate) => candidate.symbol === "dETH")?.address;
    if (!deth) throw new Error("no demo dETH");
    const query = new URLSearchParams({
      inputMint: USDC_MINT,
      outputMint: deth,
      amount: "25000000",
      userPublicKey: wallet.address,
    });
    const quote = (await (await fetch(`${t.url}/order?${query}`)).json()) as {
      transaction: string;
      inAmount: string;
      outAmount: string;
    };
    const signature = await signAndSendWithKit(t.server.chain.rpcUrl, chain, wallet, quote.transaction);
    const connection = new Connection(t.server.chain.rpcUrl, { commitment: "confirmed" });
    const parsed = await connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
    const meta = parsed?.meta;
    if (!parsed || !meta) throw new Error("swap not found");
    const keys = parsed.transaction.message.accountKeys.map((key) => key.pubkey.toBase58());
    const walletDeltas = new Map<string, bigint>();
    const deltas = tokenDeltas(keys, meta.preTokenBalances ?? [], meta.postTokenBalances ?? []);
    for (const balance of meta.postTokenBalances ?? []) {
      if (balance.owner !== wallet.address) continue;
      walletDeltas.set(balance.mint, deltas.get(keys[balance.accountIndex] ?? "") ?? 0n);
    }
    expect(walletDeltas.get(USDC_MINT)).toBe(-BigInt(quote.inAmount));
    expect(walletDeltas.get(deth)).toBe(BigInt(quote.outAmount));
    // What the wallet paid and got, the venue's accounts got and paid: per mint, the deltas sum to 0.
    const byMint = new Map<string, bigint>();
    for (const balance of meta.postTokenBalances ?? []) {
      const delta = deltas.get(keys[balance.accountIndex] ?? "") ?? 0n;
      byMint.set(balance.mint, (byMint.get(balance.mint) ?? 0n) + delta);
    }
    expect(byMint.get(USDC_MINT)).toBe(0n);
    expect(byMint.get(deth)).toBe(0n);
    expect(meta.innerInstructions?.length).toBeGreaterThan(0);
  });
});

describe("transaction meta as stored", () => {
  const [mint, owner, newOwner] = [USDC_MINT, SYSTEM_PROGRAM, ASSOCIATED_TOKEN_PROGRAM];
  const balance = (accountIndex: number, amount: bigint, holder: Address = owner): StoredTokenBalance => ({
    accountIndex,
    mint,
    owner: holder,
    programId: TOKEN_PROGRAM,
    amount,
    decimals: 6,
  });
  const extras = (pre: StoredTokenBalance[], post: StoredTokenBalance[]): TransactionMetaExtras => ({
    ...emptyMetaExtras(),
    preTokenBalances: pre,
    postTokenBalances: post,
  });

  it("reads back every balance after, whether its account changed hands, was new or kept all but its amount", () => {
    const meta = extras(
      [balance(1, 10n), balance(2, 5n)],
      [balance(1, 7n), balance(2, 5n, newOwner), balance(3, 3n)],
    );
    const stored = encodeMetaExtras(meta);
    expect(decodeMetaExtras(stored)).toEqual(meta);
    // Only the balance that kept its mint, owner and program is stored as an amount alone.
    expect((JSON.parse(stored) as { post: unknown[][] }).post.map((entry) => entry.length)).toEqual([
      2, 6, 6,
    ]);
  });

  it("reads rows stored with every balance after in full", () => {
    const meta = extras([balance(1, 10n)], [balance(1, 7n)]);
    const full = JSON.stringify({
      pre: [[1, mint, owner, TOKEN_PROGRAM, "10", 6]],
      post: [[1, mint, owner, TOKEN_PROGRAM, "7", 6]],
      inner: [],
      ret: null,
      loaded: [[], []],
    });
    expect(decodeMetaExtras(full)).toEqual(meta);
  });
});
