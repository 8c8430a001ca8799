/**
 * Token-2022's own instructions in the `jsonParsed` encoding, as Agave's solana-transaction-status
 * parses them (parse_token.rs and parse_token/extension/): getAccountDataSize with extension types,
 * the mint close authority, transfer fees, metadata pointers, the token-metadata interface, and the
 * native mint and non-transferable mints. Agave applies them to both token programs' instructions;
 * those of other extensions (confidential transfers, hooks, groups, ...) are not parsed here.
 */
import { createHash } from "node:crypto";
import type { Address } from "@solana/kit";
import {
  accountsOf,
  DataReader,
  optionalKey,
  type Parsed,
  type ResolvedInstruction,
  Unparsable,
  withSigners,
} from "./instruction-reader.js";
import { tokenAmount } from "./rpc-encoding.js";
import { EXTENSION_TYPE_NAMES } from "./token-extensions.js";

/** A Token-2022 instruction of those above; Unparsable for any other. */
export function parseTokenExtensionInstruction(instruction: ResolvedInstruction): Parsed {
  const data = new DataReader(instruction.data);
  const a = (count: number) => accountsOf(instruction, count);
  switch (data.u8(0)) {
    case 21:
      return getAccountDataSize(data, a(1));
    case 25:
      // Bytes after the optional key are ignored, as the program unpacks it (spl-token's JS encoder
      // writes 32 zero bytes after a "none").
      return {
        type: "initializeMintCloseAuthority",
        info: { mint: a(1)[0], newAuthority: optionalKey(data, 1) },
      };
    case 26:
      return transferFee(data, instruction);
    case 31: {
      const [payer, nativeMint, systemProgram] = a(3);
      return { type: "createNativeMint", info: { payer, nativeMint, systemProgram } };
    }
    case 32:
      return { type: "initializeNonTransferableMint", info: { mint: a(1)[0] } };
    case 38: {
      const accounts = a(3);
      const info = { source: accounts[0], destination: accounts[1] };
      return {
        type: "withdrawExcessLamports",
        info: withSigners(info, accounts, 2, "authority", "multisigAuthority"),
      };
    }
    case 39:
      return metadataPointer(data, instruction);
    default:
      return tokenMetadata(instruction);
  }
}

function getAccountDataSize(data: DataReader, accounts: Address[]): Parsed {
  if ((data.length - 1) % 2 !== 0) throw new Unparsable();
  const extensionTypes: string[] = [];
  for (let offset = 1; offset < data.length; offset += 2) {
    const name = EXTENSION_TYPE_NAMES[data.u16(offset)];
    if (!name) throw new Unparsable();
    extensionTypes.push(name);
  }
  // Agave leaves the field out when the request names no extension.
  return {
    type: "getAccountDataSize",
    info: extensionTypes.length > 0 ? { mint: accounts[0], extensionTypes } : { mint: accounts[0] },
  };
}

// transfer_fee.rs. Its optional authorities take one byte when absent, 33 when present.
function transferFee(data: DataReader, instruction: ResolvedInstruction): Parsed {
  const a = (count: number) => accountsOf(instruction, count);
  switch (data.u8(1)) {
    case 0: {
      const transferFeeConfigAuthority = optionalKey(data, 2);
      let offset = transferFeeConfigAuthority ? 35 : 3;
      const withdrawWithheldAuthority = optionalKey(data, offset);
      offset += withdrawWithheldAuthority ? 33 : 1;
      const info: Record<string, unknown> = {
        mint: a(1)[0],
        transferFeeBasisPoints: data.u16(offset),
        maximumFee: Number(data.u64(offset + 2)),
      };
      if (transferFeeConfigAuthority) info.transferFeeConfigAuthority = transferFeeConfigAuthority;
      if (withdrawWithheldAuthority) info.withdrawWithheldAuthority = withdrawWithheldAuthority;
      return { type: "initializeTransferFeeConfig", info };
    }
    case 1: {
      const accounts = a(4);
      const decimals = data.u8(10);
      const info = {
        source: accounts[0],
        mint: accounts[1],
        destination: accounts[2],
        tokenAmount: tokenAmount(data.u64(2), decimals),
        feeAmount: tokenAmount(data.u64(11), decimals),
      };
      return {
        type: "transferCheckedWithFee",
        info: withSigners(info, accounts, 3, "authority", "multisigAuthority"),
      };
    }
    case 2: {
      const accounts = a(3);
      const info = { mint: accounts[0], feeRecipient: accounts[1] };
      return {
        type: "withdrawWithheldTokensFromMint",
        info: withSigners(
          info,
          accounts,
          2,
          "withdrawWithheldAuthority",
          "multisigWithdrawWithheldAuthority",
        ),
      };
    }
    case 3: {
      const count = data.u8(2);
      const accounts = a(3 + count);
      const first = accounts.length - count;
      const info = { mint: accounts[0], feeRecipient: accounts[1], sourceAccounts: accounts.slice(first) };
      return {
        type: "withdrawWithheldTokensFromAccounts",
        info: withSigners(
          info,
          accounts.slice(0, first),
          2,
          "withdrawWithheldAuthority",
          "multisigWithdrawWithheldAuthority",
        ),
      };
    }
    case 4: {
      const accounts = a(1);
      return {
        type: "harvestWithheldTokensToMint",
        info: { mint: accounts[0], sourceAccounts: accounts.slice(1) },
      };
    }
    case 5: {
      const accounts = a(2);
      const info = {
        mint: accounts[0],
        transferFeeBasisPoints: data.u16(2),
        maximumFee: Number(data.u64(4)),
      };
      // "multisigtransferFeeConfigAuthority": Agave's spelling.
      return {
        type: "setTransferFee",
        info: withSigners(
          info,
          accounts,
          1,
          "transferFeeConfigAuthority",
          "multisigtransferFeeConfigAuthority",
        ),
      };
    }
    default:
      throw new Unparsable();
  }
}

// An OptionalNonZeroPubkey in instruction data: 32 zero bytes mean none.
function nonZeroKey(data: DataReader, offset: number): Address | null {
  const key = data.bytes(offset, 32);
  return key.some((byte) => byte !== 0) ? data.key(offset) : null;
}

// metadata_pointer.rs: fixed-size data, absent keys left out.
function metadataPointer(data: DataReader, instruction: ResolvedInstruction): Parsed {
  const kind = data.u8(1);
  if (kind === 0 && data.length === 66) {
    const info: Record<string, unknown> = { mint: accountsOf(instruction, 1)[0] };
    const authority = nonZeroKey(data, 2);
    const metadataAddress = nonZeroKey(data, 34);
    if (authority) info.authority = authority;
    if (metadataAddress) info.metadataAddress = metadataAddress;
    return { type: "initializeMetadataPointer", info };
  }
  if (kind === 1 && data.length === 34) {
    const accounts = accountsOf(instruction, 2);
    const info: Record<string, unknown> = { mint: accounts[0] };
    const metadataAddress = nonZeroKey(data, 2);
    if (metadataAddress) info.metadataAddress = metadataAddress;
    return {
      type: "updateMetadataPointer",
      info: withSigners(info, accounts, 1, "authority", "multisigAuthority"),
    };
  }
  throw new Unparsable();
}

// The token-metadata interface's instructions start with the first 8 bytes of a hash of their name.
function discriminator(name: string): string {
  return createHash("sha256")
    .update(`spl_token_metadata_interface:${name}`)
    .digest()
    .subarray(0, 8)
    .toString("hex");
}

const METADATA_INSTRUCTIONS = new Map([
  [discriminator("initialize_account"), "initialize"],
  [discriminator("updating_field"), "updateField"],
  [discriminator("remove_key_ix"), "removeKey"],
  [discriminator("update_the_authority"), "updateAuthority"],
  [discriminator("emitter"), "emit"],
]);

/** Borsh reads after the discriminator; the data must end where the instruction does. */
class BorshReader {
  offset = 8;

  constructor(private readonly data: DataReader) {}

  string(): string {
    const length = this.data.u32(this.offset);
    const bytes = this.data.bytes(this.offset + 4, length);
    this.offset += 4 + length;
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new Unparsable();
    }
  }

  u8(): number {
    return this.data.u8(this.offset++);
  }

  optionalU64(): number | null {
    if (this.u8() === 0) return null;
    const value = Number(this.data.u64(this.offset));
    this.offset += 8;
    return value;
  }

  end(): void {
    if (this.offset !== this.data.length) throw new Unparsable();
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const FIXED_FIELDS = ["name", "symbol", "uri"];

// token_metadata.rs.
function tokenMetadata(instruction: ResolvedInstruction): Parsed {
  const data = new DataReader(instruction.data);
  if (data.length < 8) throw new Unparsable();
  const kind = METADATA_INSTRUCTIONS.get(Buffer.from(data.bytes(0, 8)).toString("hex"));
  const read = new BorshReader(data);
  const parsed = ((): Parsed => {
    switch (kind) {
      case "initialize": {
        const [metadata, updateAuthority, mint, mintAuthority] = accountsOf(instruction, 4);
        const info = {
          metadata,
          updateAuthority,
          mint,
          mintAuthority,
          name: read.string(),
          symbol: read.string(),
          uri: read.string(),
        };
        return { type: "initializeTokenMetadata", info };
      }
      case "updateField": {
        const [metadata, updateAuthority] = accountsOf(instruction, 2);
        const tag = read.u8();
        const field = tag < 3 ? FIXED_FIELDS[tag] : tag === 3 ? read.string() : undefined;
        if (field === undefined) throw new Unparsable();
        return {
          type: "updateTokenMetadataField",
          info: { metadata, updateAuthority, field, value: read.string() },
        };
      }
      case "removeKey": {
        const [metadata, updateAuthority] = accountsOf(instruction, 2);
        const idempotent = read.u8();
        if (idempotent > 1) throw new Unparsable();
        return {
          type: "removeTokenMetadataKey",
          info: { metadata, updateAuthority, key: read.string(), idempotent: idempotent === 1 },
        };
      }
      case "updateAuthority": {
        const [metadata, updateAuthority] = accountsOf(instruction, 2);
        const newAuthority = nonZeroKey(data, 8);
        read.offset += 32;
        return { type: "updateTokenMetadataAuthority", info: { metadata, updateAuthority, newAuthority } };
      }
      case "emit": {
        const info: Record<string, unknown> = { metadata: accountsOf(instruction, 1)[0] };
        const start = read.optionalU64();
        const end = read.optionalU64();
        if (start !== null) info.start = start;
        if (end !== null) info.end = end;
        return { type: "emitTokenMetadata", info };
      }
      default:
        throw new Unparsable();
    }
  })();
  read.end();
  return parsed;
}
