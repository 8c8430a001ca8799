/**
 * Token-2022's own instructions in `jsonParsed`, built by @solana/spl-token's encoders and parsed as
 * Agave's solana-transaction-status parses them (its parse_token tests give the expected shapes):
 * those the live spl-token test does not send, multisig authorities, and the fallback to partial
 * decoding for instructions Agave would not parse from these bytes.
 */
import { createHash } from "node:crypto";
import type { Address } from "@solana/kit";
import {
  createHarvestWithheldTokensToMintInstruction,
  createInitializeMintCloseAuthorityInstruction,
  createInitializeNonTransferableMintInstruction,
  createSetTransferFeeInstruction,
  createTransferCheckedWithFeeInstruction,
  createUpdateMetadataPointerInstruction,
  createWithdrawWithheldTokensFromAccountsInstruction,
  createWithdrawWithheldTokensFromMintInstruction,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, type TransactionInstruction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { parseInstruction } from "../../src/chain/sandbox/parsed-instructions.js";

const key = () => Keypair.generate().publicKey;
const [mint, authority, recipient, source, signerA, signerB] = [key(), key(), key(), key(), key(), key()];
const text = (value: { toBase58(): string }) => value.toBase58();

function parsed(instruction: TransactionInstruction) {
  return parseInstruction({
    programId: text(instruction.programId) as Address,
    accounts: instruction.keys.map((meta) => text(meta.pubkey) as Address),
    data: new Uint8Array(instruction.data),
    stackHeight: null,
  });
}

function spl(type: string, info: Record<string, unknown>) {
  return {
    program: "spl-token",
    programId: text(TOKEN_2022_PROGRAM_ID),
    parsed: { type, info },
    stackHeight: null,
  };
}

describe("jsonParsed Token-2022 extension instructions", () => {
  it("transfer fees: set, withdraw from mint and accounts, harvest, and a multisig transferCheckedWithFee", () => {
    expect(
      parsed(createSetTransferFeeInstruction(mint, authority, [], 42, 2_121n, TOKEN_2022_PROGRAM_ID)),
    ).toEqual(
      spl("setTransferFee", {
        mint: text(mint),
        transferFeeBasisPoints: 42,
        maximumFee: 2_121,
        transferFeeConfigAuthority: text(authority),
      }),
    );
    // Agave's own spelling of the multisig field.
    expect(
      parsed(
        createSetTransferFeeInstruction(
          mint,
          authority,
          [signerA, signerB],
          42,
          2_121n,
          TOKEN_2022_PROGRAM_ID,
        ),
      ),
    ).toEqual(
      spl("setTransferFee", {
        mint: text(mint),
        transferFeeBasisPoints: 42,
        maximumFee: 2_121,
        multisigtransferFeeConfigAuthority: text(authority),
        signers: [text(signerA), text(signerB)],
      }),
    );
    expect(
      parsed(
        createWithdrawWithheldTokensFromMintInstruction(
          mint,
          recipient,
          authority,
          [],
          TOKEN_2022_PROGRAM_ID,
        ),
      ),
    ).toEqual(
      spl("withdrawWithheldTokensFromMint", {
        mint: text(mint),
        feeRecipient: text(recipient),
        withdrawWithheldAuthority: text(authority),
      }),
    );
    expect(
      parsed(
        createWithdrawWithheldTokensFromAccountsInstruction(
          mint,
          recipient,
          authority,
          [signerA, signerB],
          [source],
          TOKEN_2022_PROGRAM_ID,
        ),
      ),
    ).toEqual(
      spl("withdrawWithheldTokensFromAccounts", {
        mint: text(mint),
        feeRecipient: text(recipient),
        multisigWithdrawWithheldAuthority: text(authority),
        signers: [text(signerA), text(signerB)],
        sourceAccounts: [text(source)],
      }),
    );
    expect(
      parsed(createHarvestWithheldTokensToMintInstruction(mint, [source, recipient], TOKEN_2022_PROGRAM_ID)),
    ).toEqual(
      spl("harvestWithheldTokensToMint", {
        mint: text(mint),
        sourceAccounts: [text(source), text(recipient)],
      }),
    );
    const withFee = createTransferCheckedWithFeeInstruction(
      source,
      mint,
      recipient,
      authority,
      55n,
      2,
      5n,
      [signerA, signerB],
      TOKEN_2022_PROGRAM_ID,
    );
    expect(parsed(withFee)).toEqual(
      spl("transferCheckedWithFee", {
        source: text(source),
        mint: text(mint),
        destination: text(recipient),
        multisigAuthority: text(authority),
        signers: [text(signerA), text(signerB)],
        tokenAmount: { amount: "55", decimals: 2, uiAmount: 0.55, uiAmountString: "0.55" },
        feeAmount: { amount: "5", decimals: 2, uiAmount: 0.05, uiAmountString: "0.05" },
      }),
    );
  });

  it("mint close authority (set and none), non-transferable mints, and a metadata pointer update", () => {
    expect(
      parsed(createInitializeMintCloseAuthorityInstruction(mint, authority, TOKEN_2022_PROGRAM_ID)),
    ).toEqual(spl("initializeMintCloseAuthority", { mint: text(mint), newAuthority: text(authority) }));
    expect(parsed(createInitializeMintCloseAuthorityInstruction(mint, null, TOKEN_2022_PROGRAM_ID))).toEqual(
      spl("initializeMintCloseAuthority", { mint: text(mint), newAuthority: null }),
    );
    expect(parsed(createInitializeNonTransferableMintInstruction(mint, TOKEN_2022_PROGRAM_ID))).toEqual(
      spl("initializeNonTransferableMint", { mint: text(mint) }),
    );
    expect(
      parsed(createUpdateMetadataPointerInstruction(mint, authority, recipient, [], TOKEN_2022_PROGRAM_ID)),
    ).toEqual(
      spl("updateMetadataPointer", {
        mint: text(mint),
        metadataAddress: text(recipient),
        authority: text(authority),
      }),
    );
    // Cleared: the address is left out, as Agave leaves out an absent key.
    expect(
      parsed(createUpdateMetadataPointerInstruction(mint, authority, null, [], TOKEN_2022_PROGRAM_ID)),
    ).toEqual(spl("updateMetadataPointer", { mint: text(mint), authority: text(authority) }));
  });

  it("answers partially decoded what Agave would not parse: a bad extension type, short or trailing data", () => {
    const raw = (data: number[], accounts = [mint]) => ({
      programId: text(TOKEN_2022_PROGRAM_ID) as Address,
      accounts: accounts.map((account) => text(account) as Address),
      data: new Uint8Array(data),
      stackHeight: 2,
    });
    const partial = (accounts = [mint]) => ({
      programId: text(TOKEN_2022_PROGRAM_ID),
      accounts: accounts.map(text),
      data: expect.any(String),
      stackHeight: 2,
    });
    // getAccountDataSize naming extension type 999, and one with half an extension type.
    expect(parseInstruction(raw([21, 0xe7, 0x03]))).toEqual(partial());
    expect(parseInstruction(raw([21, 7]))).toEqual(partial());
    // A plain getAccountDataSize has no extensionTypes field at all.
    expect(parseInstruction(raw([21]))).toEqual({
      program: "spl-token",
      programId: text(TOKEN_2022_PROGRAM_ID),
      parsed: { type: "getAccountDataSize", info: { mint: text(mint) } },
      stackHeight: 2,
    });
    // A metadata pointer initialize one byte short; a transfer fee sub-instruction that does not exist.
    expect(parseInstruction(raw([39, 0, ...new Array(63).fill(1)]))).toEqual(partial());
    expect(parseInstruction(raw([26, 9]))).toEqual(partial());
    // A token-metadata initialize (its discriminator: the interface's hash of its name) whose name
    // runs past the data; the same with its three strings whole parses.
    const initialize = [
      ...createHash("sha256").update("spl_token_metadata_interface:initialize_account").digest(),
    ];
    const accounts = [mint, authority, mint, authority];
    const strings = [1, 0, 0, 0, 65, 1, 0, 0, 0, 66, 0, 0, 0, 0];
    expect(parseInstruction(raw([...initialize.slice(0, 8), 200, 0, 0, 0, 65], accounts))).toEqual(
      partial(accounts),
    );
    expect(parseInstruction(raw([...initialize.slice(0, 8), ...strings], accounts))).toMatchObject({
      parsed: { type: "initializeTokenMetadata", info: { name: "A", symbol: "B", uri: "" } },
    });
    // Trailing bytes after the last string: Borsh refuses them, and so does Agave.
    expect(parseInstruction(raw([...initialize.slice(0, 8), ...strings, 0], accounts))).toEqual(
      partial(accounts),
    );
  });
});
