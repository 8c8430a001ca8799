/**
 * Unmodified `@solana/spl-token` against the sandbox by URL (issue 39): SPL Token and Token-2022
 * (a transfer fee, a metadata pointer and token metadata) through spl-token's own actions and
 * readers, which throw on an answer of the wrong shape. Every JSON-RPC answer is watched through
 * the Connection's fetch: any "Method not found" fails the test. Then the same accounts and
 * transactions read back in `jsonParsed`, in Agave's shapes.
 */
import {
  approve,
  approveChecked,
  burnChecked,
  calculateFee,
  closeAccount,
  createAssociatedTokenAccount,
  createAssociatedTokenAccountInstruction,
  createInitializeMetadataPointerInstruction,
  createInitializeMintInstruction,
  createInitializeTransferFeeConfigInstruction,
  createMint,
  ExtensionType,
  freezeAccount,
  getAccount,
  getAssociatedTokenAddress,
  getAssociatedTokenAddressSync,
  getMetadataPointerState,
  getMint,
  getMintLen,
  getOrCreateAssociatedTokenAccount,
  getTokenMetadata,
  getTransferFeeAmount,
  getTransferFeeConfig,
  mintTo,
  revoke,
  TOKEN_2022_PROGRAM_ID,
  TokenAccountNotFoundError,
  thawAccount,
  tokenMetadataInitializeWithRentTransfer,
  tokenMetadataUpdateFieldWithRentTransfer,
  transfer,
  transferChecked,
  transferCheckedWithFee,
  withdrawWithheldTokensFromAccounts,
} from "@solana/spl-token";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
} from "@solana/web3.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/chain/sandbox/slot-clock.js";
import { tempDir } from "../support/backends.js";
import { startTestChain, type TestChain } from "./harness.js";

/** Every JSON-RPC method the client called, and the errors it was answered with. */
class RpcLog {
  readonly methods = new Set<string>();
  readonly errors: { method: string; code: number; message: string }[] = [];

  /** A fetch for the Connection: it passes every call through and reads every answer. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const calls = [JSON.parse(String(init?.body ?? "null"))].flat() as { id: unknown; method: string }[];
    for (const call of calls) this.methods.add(call.method);
    const response = await fetch(input, init);
    const answers = [await response.clone().json()].flat() as {
      id: unknown;
      error?: { code: number; message: string };
    }[];
    for (const answer of answers) {
      const method = calls.find((call) => call.id === answer.id)?.method ?? "?";
      if (answer.error) this.errors.push({ method, ...answer.error });
    }
    return response;
  };

  notFound() {
    return this.errors.filter((error) => error.code === -32601);
  }
}

describe("sandbox chain with unmodified @solana/spl-token as the client", () => {
  const dir = tempDir();
  const log = new RpcLog();
  let chain: TestChain;
  let connection: Connection;
  const payer = Keypair.generate();

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir }, { clock: new ManualClock() });
    connection = new Connection(chain.rpcUrl, {
      commitment: "confirmed",
      wsEndpoint: chain.wsUrl,
      fetch: log.fetch,
    });
    const airdrop = await connection.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
    const latest = await connection.getLatestBlockhash();
    expect((await connection.confirmTransaction({ signature: airdrop, ...latest })).value.err).toBeNull();
  });
  afterEach(() => {
    expect(log.notFound()).toEqual([]);
  });
  afterAll(async () => {
    // web3.js closes its idle PubSub socket 500 ms after its last confirmation; a node stopped first
    // leaves it reconnecting once a second for the rest of the worker ("ws error" in every later file).
    if (chain)
      await vi.waitFor(() => expect(chain.pubsubStats().sockets).toBe(0), { timeout: 10_000, interval: 20 });
    await chain?.stop();
    await dir.cleanup();
  });

  /** A transaction's instructions (top level, then inner) as the node parses them. */
  async function parsedInstructions(signature: string) {
    const parsed = await connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(parsed?.meta?.err).toBeNull();
    const inner = (parsed?.meta?.innerInstructions ?? []).flatMap((group) => group.instructions);
    return [...(parsed?.transaction.message.instructions ?? []), ...inner].map((instruction) =>
      "parsed" in instruction
        ? { program: instruction.program, ...instruction.parsed }
        : { unparsed: instruction },
    );
  }

  it("SPL Token: a mint, associated accounts, mintTo, transfer(Checked), approve and revoke, freeze, burn and close", async () => {
    const mintAuthority = Keypair.generate();
    const freezeAuthority = Keypair.generate();
    const [alice, bob, delegate] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const mint = await createMint(connection, payer, mintAuthority.publicKey, freezeAuthority.publicKey, 6);
    const created = await getMint(connection, mint);
    expect(created.decimals).toBe(6);
    expect(created.supply).toBe(0n);
    expect(created.mintAuthority?.equals(mintAuthority.publicKey)).toBe(true);
    expect(created.freezeAuthority?.equals(freezeAuthority.publicKey)).toBe(true);

    const aliceAta = await createAssociatedTokenAccount(connection, payer, mint, alice.publicKey);
    expect(aliceAta.equals(await getAssociatedTokenAddress(mint, alice.publicKey))).toBe(true);
    expect(aliceAta.equals(getAssociatedTokenAddressSync(mint, alice.publicKey))).toBe(true);
    const bobAta = (await getOrCreateAssociatedTokenAccount(connection, payer, mint, bob.publicKey)).address;
    // Asked again, it finds the account rather than creating it.
    expect((await getOrCreateAssociatedTokenAccount(connection, payer, mint, bob.publicKey)).address).toEqual(
      bobAta,
    );

    await mintTo(connection, payer, mint, aliceAta, mintAuthority, 5_000_000n);
    await transfer(connection, payer, aliceAta, bobAta, alice, 1_000_000n);
    const checked = await transferChecked(connection, payer, aliceAta, mint, bobAta, alice, 500_000n, 6);
    expect((await getAccount(connection, aliceAta)).amount).toBe(3_500_000n);
    expect((await getAccount(connection, bobAta)).amount).toBe(1_500_000n);

    await approve(connection, payer, aliceAta, delegate.publicKey, alice, 700_000n);
    let account = await getAccount(connection, aliceAta);
    expect(account.delegate?.equals(delegate.publicKey)).toBe(true);
    expect(account.delegatedAmount).toBe(700_000n);
    // The delegate spends part of its allowance; then the owner revokes the rest.
    await transferChecked(connection, payer, aliceAta, mint, bobAta, delegate, 200_000n, 6);
    expect((await getAccount(connection, aliceAta)).delegatedAmount).toBe(500_000n);
    await revoke(connection, payer, aliceAta, alice);
    account = await getAccount(connection, aliceAta);
    expect(account.delegate).toBeNull();
    expect(account.delegatedAmount).toBe(0n);
    const refused = transferChecked(connection, payer, aliceAta, mint, bobAta, delegate, 1n, 6);
    await expect(refused).rejects.toThrow();

    await freezeAccount(connection, payer, aliceAta, mint, freezeAuthority);
    expect((await getAccount(connection, aliceAta)).isFrozen).toBe(true);
    await expect(transfer(connection, payer, aliceAta, bobAta, alice, 1n)).rejects.toThrow();
    await thawAccount(connection, payer, aliceAta, mint, freezeAuthority);
    expect((await getAccount(connection, aliceAta)).isFrozen).toBe(false);

    await burnChecked(connection, payer, bobAta, mint, bob, 1_700_000n, 6);
    await closeAccount(connection, payer, bobAta, payer.publicKey, bob);
    await expect(getAccount(connection, bobAta)).rejects.toBeInstanceOf(TokenAccountNotFoundError);
    expect((await getMint(connection, mint)).supply).toBe(3_300_000n);
    const largest = await connection.getTokenLargestAccounts(mint);
    expect(largest.value.map((holder) => [holder.address.toBase58(), holder.amount])).toEqual([
      [aliceAta.toBase58(), "3300000"],
    ]);

    expect(await parsedInstructions(checked)).toEqual([
      {
        program: "spl-token",
        type: "transferChecked",
        info: {
          source: aliceAta.toBase58(),
          mint: mint.toBase58(),
          destination: bobAta.toBase58(),
          authority: alice.publicKey.toBase58(),
          tokenAmount: { amount: "500000", decimals: 6, uiAmount: 0.5, uiAmountString: "0.5" },
        },
      },
    ]);
    // Each action above reached the node through its JSON-RPC; these are the calls spl-token made.
    expect([...log.methods]).toEqual(
      expect.arrayContaining([
        "getAccountInfo",
        "sendTransaction",
        "getLatestBlockhash",
        "getTokenLargestAccounts",
      ]),
    );
  }, 60_000);

  it("Token-2022: a mint with a transfer fee, a metadata pointer and token metadata; fees withheld and withdrawn", async () => {
    const mintKeypair = Keypair.generate();
    const mint = mintKeypair.publicKey;
    const [mintAuthority, feeAuthority, withdrawAuthority] = [
      Keypair.generate(),
      Keypair.generate(),
      Keypair.generate(),
    ];
    const [alice, bob, carol] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const space = getMintLen([ExtensionType.TransferFeeConfig, ExtensionType.MetadataPointer]);
    const create = new Transaction().add(
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: mint,
        space,
        lamports: await connection.getMinimumBalanceForRentExemption(space),
        programId: TOKEN_2022_PROGRAM_ID,
      }),
      createInitializeTransferFeeConfigInstruction(
        mint,
        feeAuthority.publicKey,
        withdrawAuthority.publicKey,
        50,
        5_000n,
        TOKEN_2022_PROGRAM_ID,
      ),
      createInitializeMetadataPointerInstruction(mint, mintAuthority.publicKey, mint, TOKEN_2022_PROGRAM_ID),
      createInitializeMintInstruction(mint, 6, mintAuthority.publicKey, null, TOKEN_2022_PROGRAM_ID),
    );
    const createSignature = await sendAndConfirmTransaction(connection, create, [payer, mintKeypair]);
    const metadataSignature = await tokenMetadataInitializeWithRentTransfer(
      connection,
      payer,
      mint,
      mintAuthority.publicKey,
      mintAuthority,
      "Oddsgate Test",
      "OGT",
      "https://example.invalid/ogt.json",
    );
    const fieldSignature = await tokenMetadataUpdateFieldWithRentTransfer(
      connection,
      payer,
      mint,
      mintAuthority,
      "venue",
      "oddsgate",
    );

    const mintInfo = await getMint(connection, mint, "confirmed", TOKEN_2022_PROGRAM_ID);
    const feeConfig = getTransferFeeConfig(mintInfo);
    expect(feeConfig?.newerTransferFee.transferFeeBasisPoints).toBe(50);
    expect(feeConfig?.newerTransferFee.maximumFee).toBe(5_000n);
    expect(getMetadataPointerState(mintInfo)?.metadataAddress?.equals(mint)).toBe(true);
    const metadata = await getTokenMetadata(connection, mint);
    expect(metadata?.name).toBe("Oddsgate Test");
    expect(metadata?.additionalMetadata).toEqual([["venue", "oddsgate"]]);

    const ata = (owner: PublicKey) =>
      createAssociatedTokenAccount(connection, payer, mint, owner, undefined, TOKEN_2022_PROGRAM_ID);
    const aliceAta = await ata(alice.publicKey);
    const bobAta = await ata(bob.publicKey);
    const carolAta = await ata(carol.publicKey);
    expect(
      aliceAta.equals(getAssociatedTokenAddressSync(mint, alice.publicKey, false, TOKEN_2022_PROGRAM_ID)),
    ).toBe(true);
    await mintTo(
      connection,
      payer,
      mint,
      aliceAta,
      mintAuthority,
      10_000_000n,
      [],
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );

    // 0.5% of 2 USDC-like units is 10,000, capped at the maximum fee of 5,000.
    const fee = calculateFee(
      feeConfig?.newerTransferFee as NonNullable<typeof feeConfig>["newerTransferFee"],
      2_000_000n,
    );
    expect(fee).toBe(5_000n);
    const feeSignature = await transferCheckedWithFee(
      connection,
      payer,
      aliceAta,
      mint,
      bobAta,
      alice,
      2_000_000n,
      6,
      fee,
      [],
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );
    const bobAccount = await getAccount(connection, bobAta, "confirmed", TOKEN_2022_PROGRAM_ID);
    expect(bobAccount.amount).toBe(1_995_000n);
    expect(getTransferFeeAmount(bobAccount)?.withheldAmount).toBe(5_000n);
    const bobParsed = await connection.getParsedAccountInfo(bobAta);
    expect(bobParsed.value?.data).toMatchObject({
      program: "spl-token-2022",
      parsed: {
        type: "account",
        info: {
          extensions: [
            { extension: "immutableOwner" },
            { extension: "transferFeeAmount", state: { withheldAmount: 5_000 } },
          ],
        },
      },
    });

    await withdrawWithheldTokensFromAccounts(
      connection,
      payer,
      mint,
      aliceAta,
      withdrawAuthority,
      [],
      [bobAta],
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );
    expect(
      getTransferFeeAmount(await getAccount(connection, bobAta, "confirmed", TOKEN_2022_PROGRAM_ID))
        ?.withheldAmount,
    ).toBe(0n);
    expect((await getAccount(connection, aliceAta, "confirmed", TOKEN_2022_PROGRAM_ID)).amount).toBe(
      8_005_000n,
    );

    await approveChecked(
      connection,
      payer,
      mint,
      aliceAta,
      bob.publicKey,
      alice,
      1_000n,
      6,
      [],
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );
    expect((await getAccount(connection, aliceAta, "confirmed", TOKEN_2022_PROGRAM_ID)).delegatedAmount).toBe(
      1_000n,
    );
    await revoke(connection, payer, aliceAta, alice, [], undefined, TOKEN_2022_PROGRAM_ID);
    expect((await getAccount(connection, aliceAta, "confirmed", TOKEN_2022_PROGRAM_ID)).delegate).toBeNull();
    await closeAccount(
      connection,
      payer,
      carolAta,
      payer.publicKey,
      carol,
      [],
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );
    await expect(getAccount(connection, carolAta, "confirmed", TOKEN_2022_PROGRAM_ID)).rejects.toBeInstanceOf(
      TokenAccountNotFoundError,
    );

    // The mint in jsonParsed: every extension with its state, as Agave's account decoder lists them.
    const { epoch } = await connection.getEpochInfo();
    const transferFee = { epoch, maximumFee: 5_000, transferFeeBasisPoints: 50 };
    const mintParsed = await connection.getParsedAccountInfo(mint);
    expect(mintParsed.value?.data).toMatchObject({
      program: "spl-token-2022",
      parsed: {
        type: "mint",
        info: {
          decimals: 6,
          supply: "10000000",
          extensions: [
            {
              extension: "transferFeeConfig",
              state: {
                transferFeeConfigAuthority: feeAuthority.publicKey.toBase58(),
                withdrawWithheldAuthority: withdrawAuthority.publicKey.toBase58(),
                withheldAmount: 0,
                olderTransferFee: transferFee,
                newerTransferFee: transferFee,
              },
            },
            {
              extension: "metadataPointer",
              state: { authority: mintAuthority.publicKey.toBase58(), metadataAddress: mint.toBase58() },
            },
            {
              extension: "tokenMetadata",
              state: {
                updateAuthority: mintAuthority.publicKey.toBase58(),
                mint: mint.toBase58(),
                name: "Oddsgate Test",
                symbol: "OGT",
                uri: "https://example.invalid/ogt.json",
                additionalMetadata: [["venue", "oddsgate"]],
              },
            },
          ],
        },
      },
    });

    // The transactions in jsonParsed: Token-2022's instructions, as Agave's transaction-status parses them.
    const setup = await parsedInstructions(createSignature);
    expect(setup.slice(1)).toEqual([
      {
        program: "spl-token",
        type: "initializeTransferFeeConfig",
        info: {
          mint: mint.toBase58(),
          transferFeeConfigAuthority: feeAuthority.publicKey.toBase58(),
          withdrawWithheldAuthority: withdrawAuthority.publicKey.toBase58(),
          transferFeeBasisPoints: 50,
          maximumFee: 5_000,
        },
      },
      {
        program: "spl-token",
        type: "initializeMetadataPointer",
        info: {
          mint: mint.toBase58(),
          authority: mintAuthority.publicKey.toBase58(),
          metadataAddress: mint.toBase58(),
        },
      },
      {
        program: "spl-token",
        type: "initializeMint",
        info: {
          mint: mint.toBase58(),
          decimals: 6,
          mintAuthority: mintAuthority.publicKey.toBase58(),
          rentSysvar: "SysvarRent111111111111111111111111111111111",
        },
      },
    ]);
    expect(await parsedInstructions(metadataSignature)).toContainEqual({
      program: "spl-token",
      type: "initializeTokenMetadata",
      info: {
        metadata: mint.toBase58(),
        updateAuthority: mintAuthority.publicKey.toBase58(),
        mint: mint.toBase58(),
        mintAuthority: mintAuthority.publicKey.toBase58(),
        name: "Oddsgate Test",
        symbol: "OGT",
        uri: "https://example.invalid/ogt.json",
      },
    });
    expect(await parsedInstructions(fieldSignature)).toContainEqual({
      program: "spl-token",
      type: "updateTokenMetadataField",
      info: {
        metadata: mint.toBase58(),
        updateAuthority: mintAuthority.publicKey.toBase58(),
        field: "venue",
        value: "oddsgate",
      },
    });
    const amount = (raw: string, ui: number, text: string) => ({
      amount: raw,
      decimals: 6,
      uiAmount: ui,
      uiAmountString: text,
    });
    expect(await parsedInstructions(feeSignature)).toEqual([
      {
        program: "spl-token",
        type: "transferCheckedWithFee",
        info: {
          source: aliceAta.toBase58(),
          mint: mint.toBase58(),
          destination: bobAta.toBase58(),
          authority: alice.publicKey.toBase58(),
          tokenAmount: amount("2000000", 2, "2"),
          feeAmount: amount("5000", 0.005, "0.005"),
        },
      },
    ]);
  }, 60_000);

  it("creates a Token-2022 associated account through the ATA program, its inner instructions parsed as Agave parses them", async () => {
    const mintAuthority = Keypair.generate();
    const owner = Keypair.generate();
    const mint = await createMint(
      connection,
      payer,
      mintAuthority.publicKey,
      null,
      2,
      undefined,
      undefined,
      TOKEN_2022_PROGRAM_ID,
    );
    const address = getAssociatedTokenAddressSync(mint, owner.publicKey, false, TOKEN_2022_PROGRAM_ID);
    const create = createAssociatedTokenAccountInstruction(
      payer.publicKey,
      address,
      owner.publicKey,
      mint,
      TOKEN_2022_PROGRAM_ID,
    );
    const signature = await sendAndConfirmTransaction(connection, new Transaction().add(create), [payer]);
    const instructions = await parsedInstructions(signature);
    expect(
      instructions.filter((instruction) => "type" in instruction && instruction.program === "spl-token"),
    ).toEqual([
      {
        program: "spl-token",
        type: "getAccountDataSize",
        info: { mint: mint.toBase58(), extensionTypes: ["immutableOwner"] },
      },
      { program: "spl-token", type: "initializeImmutableOwner", info: { account: address.toBase58() } },
      {
        program: "spl-token",
        type: "initializeAccount3",
        info: { account: address.toBase58(), mint: mint.toBase58(), owner: owner.publicKey.toBase58() },
      },
    ]);
    const parsed = await connection.getParsedAccountInfo(address);
    expect(parsed.value?.data).toMatchObject({
      program: "spl-token-2022",
      parsed: { type: "account", info: { extensions: [{ extension: "immutableOwner" }] } },
    });
  }, 60_000);
});
