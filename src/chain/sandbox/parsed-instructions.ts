/**
 * Instructions in the `jsonParsed` encoding, as Agave's solana-transaction-status parses them: the
 * System program, SPL Token and Token-2022 (both answer as "spl-token", as Agave names them), the
 * Associated Token Account program and SPL Memo; Token-2022's own instructions in
 * parsed-token-extensions.ts. Any other program, and any instruction these parsers do not know,
 * answers partially decoded: `{programId, accounts, data}` with base58 data.
 */
import type { Address } from "@solana/kit";
import { encodeBase58 } from "../base58.js";
import { ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../programs.js";
import {
  accountsOf,
  DataReader,
  type Info,
  optionalKey,
  type Parsed,
  type ResolvedInstruction,
  Unparsable,
  withSigners,
} from "./instruction-reader.js";
import { parseTokenExtensionInstruction } from "./parsed-token-extensions.js";
import { tokenAmount } from "./rpc-encoding.js";

const MEMO_PROGRAMS = new Set<string>([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);

/** One instruction in Agave's `UiInstruction` shape for `jsonParsed`. */
export function parseInstruction(instruction: ResolvedInstruction) {
  const { programId, stackHeight } = instruction;
  try {
    const parsed = parseKnown(instruction);
    if (parsed) return { program: parsed.program, programId, parsed: parsed.parsed, stackHeight };
  } catch (error) {
    if (!(error instanceof Unparsable)) throw error;
  }
  return {
    programId,
    accounts: instruction.accounts,
    data: encodeBase58(instruction.data),
    stackHeight,
  };
}

function parseKnown(instruction: ResolvedInstruction): { program: string; parsed: unknown } | null {
  const { programId } = instruction;
  if (programId === SYSTEM_PROGRAM) return { program: "system", parsed: parseSystem(instruction) };
  if (programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) {
    return { program: "spl-token", parsed: parseToken(instruction) };
  }
  if (programId === ASSOCIATED_TOKEN_PROGRAM) {
    return { program: "spl-associated-token-account", parsed: parseAssociatedToken(instruction) };
  }
  if (MEMO_PROGRAMS.has(programId)) return { program: "spl-memo", parsed: parseMemo(instruction.data) };
  return null;
}

// ---- System program (solana-transaction-status parse_system.rs) ----

function parseSystem(instruction: ResolvedInstruction): Parsed {
  const data = new DataReader(instruction.data);
  const kind = data.u32(0);
  const a = (count: number) => accountsOf(instruction, count);
  switch (kind) {
    case 0: {
      const [source, newAccount] = a(2);
      const info = { source, newAccount, lamports: Number(data.u64(4)), space: Number(data.u64(12)) };
      return { type: "createAccount", info: { ...info, owner: data.key(20) } };
    }
    case 1:
      return { type: "assign", info: { account: a(1)[0], owner: data.key(4) } };
    case 2: {
      const [source, destination] = a(2);
      return { type: "transfer", info: { source, destination, lamports: Number(data.u64(4)) } };
    }
    case 3:
      return { type: "createAccountWithSeed", info: createWithSeedInfo(data, a(2)) };
    case 4: {
      const [nonceAccount, recentBlockhashesSysvar, nonceAuthority] = a(3);
      return { type: "advanceNonce", info: { nonceAccount, recentBlockhashesSysvar, nonceAuthority } };
    }
    case 5: {
      const [nonceAccount, destination, recentBlockhashesSysvar, rentSysvar, nonceAuthority] = a(5);
      const info = { nonceAccount, destination, recentBlockhashesSysvar, rentSysvar, nonceAuthority };
      return { type: "withdrawFromNonce", info: { ...info, lamports: Number(data.u64(4)) } };
    }
    case 6: {
      const [nonceAccount, recentBlockhashesSysvar, rentSysvar] = a(3);
      const info = { nonceAccount, recentBlockhashesSysvar, rentSysvar, nonceAuthority: data.key(4) };
      return { type: "initializeNonce", info };
    }
    case 7: {
      const [nonceAccount, nonceAuthority] = a(2);
      return { type: "authorizeNonce", info: { nonceAccount, nonceAuthority, newAuthorized: data.key(4) } };
    }
    case 8:
      return { type: "allocate", info: { account: a(1)[0], space: Number(data.u64(4)) } };
    case 12:
      return { type: "upgradeNonce", info: { nonceAccount: a(1)[0] } };
    default:
      throw new Unparsable();
  }
}

function createWithSeedInfo(data: DataReader, accounts: Address[]): Info {
  const base = data.key(4);
  const seedLength = Number(data.u64(36));
  if (seedLength > 32) throw new Unparsable();
  const seed = Buffer.from(data.bytes(44, seedLength)).toString("utf8");
  const after = 44 + seedLength;
  return {
    source: accounts[0],
    newAccount: accounts[1],
    base,
    seed,
    lamports: Number(data.u64(after)),
    space: Number(data.u64(after + 8)),
    owner: data.key(after + 16),
  };
}

// ---- SPL Token and Token-2022 (parse_token.rs) ----

const AUTHORITY_TYPES = [
  "mintTokens",
  "freezeAccount",
  "accountOwner",
  "closeAccount",
  "transferFeeConfig",
  "withheldWithdraw",
  "closeMint",
  "interestRate",
  "permanentDelegate",
  "confidentialTransferMint",
  "transferHookProgramId",
  "confidentialTransferFeeConfig",
  "metadataPointer",
  "groupPointer",
  "groupMemberPointer",
  "scaledUiAmount",
  "pause",
];

function checkedAmount(data: DataReader) {
  return tokenAmount(data.u64(1), data.u8(9));
}

function parseToken(instruction: ResolvedInstruction): Parsed {
  const data = new DataReader(instruction.data);
  const a = (count: number) => accountsOf(instruction, count);
  const kind = data.u8(0);
  switch (kind) {
    case 0:
    case 20:
      return initializeMint(data, kind === 0 ? a(2) : a(1), kind === 0);
    case 1: {
      const [account, mint, owner, rentSysvar] = a(4);
      return { type: "initializeAccount", info: { account, mint, owner, rentSysvar } };
    }
    case 3: {
      const accounts = a(3);
      const info = { source: accounts[0], destination: accounts[1], amount: data.u64(1).toString() };
      return { type: "transfer", info: withSigners(info, accounts, 2, "authority", "multisigAuthority") };
    }
    case 4: {
      const accounts = a(3);
      const info = { source: accounts[0], delegate: accounts[1], amount: data.u64(1).toString() };
      return { type: "approve", info: withSigners(info, accounts, 2, "owner", "multisigOwner") };
    }
    case 5: {
      const accounts = a(2);
      return {
        type: "revoke",
        info: withSigners({ source: accounts[0] }, accounts, 1, "owner", "multisigOwner"),
      };
    }
    case 6:
      return setAuthority(data, a(2));
    case 7: {
      const accounts = a(3);
      const info = { mint: accounts[0], account: accounts[1], amount: data.u64(1).toString() };
      return {
        type: "mintTo",
        info: withSigners(info, accounts, 2, "mintAuthority", "multisigMintAuthority"),
      };
    }
    case 8: {
      const accounts = a(3);
      const info = { account: accounts[0], mint: accounts[1], amount: data.u64(1).toString() };
      return { type: "burn", info: withSigners(info, accounts, 2, "authority", "multisigAuthority") };
    }
    case 9: {
      const accounts = a(3);
      const info = { account: accounts[0], destination: accounts[1] };
      return { type: "closeAccount", info: withSigners(info, accounts, 2, "owner", "multisigOwner") };
    }
    case 10:
    case 11: {
      const accounts = a(3);
      const info = withSigners(
        { account: accounts[0], mint: accounts[1] },
        accounts,
        2,
        "freezeAuthority",
        "multisigFreezeAuthority",
      );
      return { type: kind === 10 ? "freezeAccount" : "thawAccount", info };
    }
    case 12: {
      const accounts = a(4);
      const info = {
        source: accounts[0],
        mint: accounts[1],
        destination: accounts[2],
        tokenAmount: checkedAmount(data),
      };
      return {
        type: "transferChecked",
        info: withSigners(info, accounts, 3, "authority", "multisigAuthority"),
      };
    }
    case 13: {
      const accounts = a(4);
      const info = {
        source: accounts[0],
        mint: accounts[1],
        delegate: accounts[2],
        tokenAmount: checkedAmount(data),
      };
      return { type: "approveChecked", info: withSigners(info, accounts, 3, "owner", "multisigOwner") };
    }
    case 14: {
      const accounts = a(3);
      const info = { mint: accounts[0], account: accounts[1], tokenAmount: checkedAmount(data) };
      return {
        type: "mintToChecked",
        info: withSigners(info, accounts, 2, "mintAuthority", "multisigMintAuthority"),
      };
    }
    case 15: {
      const accounts = a(3);
      const info = { account: accounts[0], mint: accounts[1], tokenAmount: checkedAmount(data) };
      return { type: "burnChecked", info: withSigners(info, accounts, 2, "authority", "multisigAuthority") };
    }
    case 16: {
      const [account, mint, rentSysvar] = a(3);
      return { type: "initializeAccount2", info: { account, mint, owner: data.key(1), rentSysvar } };
    }
    case 17:
      return { type: "syncNative", info: { account: a(1)[0] } };
    case 18: {
      const [account, mint] = a(2);
      return { type: "initializeAccount3", info: { account, mint, owner: data.key(1) } };
    }
    case 22:
      return { type: "initializeImmutableOwner", info: { account: a(1)[0] } };
    case 23:
      return { type: "amountToUiAmount", info: { mint: a(1)[0], amount: data.u64(1).toString() } };
    default:
      return parseTokenExtensionInstruction(instruction);
  }
}

function initializeMint(data: DataReader, accounts: Address[], withRent: boolean): Parsed {
  const info: Info = { mint: accounts[0], decimals: data.u8(1), mintAuthority: data.key(2) };
  const freezeAuthority = optionalKey(data, 34);
  if (freezeAuthority) info.freezeAuthority = freezeAuthority;
  if (withRent) info.rentSysvar = accounts[1];
  return { type: withRent ? "initializeMint" : "initializeMint2", info };
}

function setAuthority(data: DataReader, accounts: Address[]): Parsed {
  const authorityType = AUTHORITY_TYPES[data.u8(1)];
  if (!authorityType) throw new Unparsable();
  // Agave names the target a mint for the mint's own authorities, an account otherwise.
  const target = authorityType === "accountOwner" || authorityType === "closeAccount" ? "account" : "mint";
  const info: Info = { [target]: accounts[0], authorityType, newAuthority: optionalKey(data, 2) };
  return { type: "setAuthority", info: withSigners(info, accounts, 1, "authority", "multisigAuthority") };
}

// ---- Associated Token Account (parse_associated_token.rs) ----

function parseAssociatedToken(instruction: ResolvedInstruction): Parsed {
  const kind = instruction.data.length === 0 ? 0 : instruction.data[0];
  if (instruction.data.length > 1) throw new Unparsable();
  if (kind === 0 || kind === 1) {
    const [source, account, wallet, mint, systemProgram, tokenProgram] = accountsOf(instruction, 6);
    return {
      type: kind === 0 ? "create" : "createIdempotent",
      info: { source, account, wallet, mint, systemProgram, tokenProgram },
    };
  }
  if (kind === 2) {
    const [nestedSource, nestedMint, destination, nestedOwner, ownerMint, wallet, tokenProgram] = accountsOf(
      instruction,
      7,
    );
    return {
      type: "recoverNested",
      info: { nestedSource, nestedMint, destination, nestedOwner, ownerMint, wallet, tokenProgram },
    };
  }
  throw new Unparsable();
}

// ---- SPL Memo (parse_memo): the text itself, when it is UTF-8 ----

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function parseMemo(data: Uint8Array): string {
  try {
    return UTF8.decode(data);
  } catch {
    throw new Unparsable();
  }
}
