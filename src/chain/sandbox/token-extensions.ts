/**
 * Token-2022 extensions in the `jsonParsed` shapes Agave gives them: an account's extensions as
 * `{extension, state}` (solana-account-decoder's parse_token_extension.rs) and the extension types an
 * instruction names (solana-transaction-status's UiExtensionType).
 */
import { addressOf } from "../base58.js";

/**
 * Token-2022's ExtensionType numbers as Agave's UiExtensionType names them (in instructions such as
 * getAccountDataSize); a number past this list is not an extension type.
 */
export const EXTENSION_TYPE_NAMES = [
  "uninitialized",
  "transferFeeConfig",
  "transferFeeAmount",
  "mintCloseAuthority",
  "confidentialTransferMint",
  "confidentialTransferAccount",
  "defaultAccountState",
  "immutableOwner",
  "memoTransfer",
  "nonTransferable",
  "interestBearingConfig",
  "cpiGuard",
  "permanentDelegate",
  "nonTransferableAccount",
  "transferHook",
  "transferHookAccount",
  "confidentialTransferFeeConfig",
  "confidentialTransferFeeAmount",
  "metadataPointer",
  "tokenMetadata",
  "groupPointer",
  "groupMemberPointer",
  "tokenGroup",
  "tokenGroupMember",
  "confidentialMintBurn",
  "scaledUiAmount",
  "pausable",
  "pausableAccount",
] as const;

/** Little-endian reads over one extension's value; a read past its end throws RangeError. */
class ValueReader {
  private readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** An OptionalNonZeroPubkey: 32 zero bytes mean none. */
  optionalKey(offset: number): string | null {
    const key = this.key(offset);
    return key === ZERO_KEY ? null : key;
  }

  key(offset: number): string {
    if (offset + 32 > this.bytes.length) throw new RangeError("key past the extension's end");
    return addressOf(this.bytes.subarray(offset, offset + 32));
  }

  bool(offset: number): boolean {
    return this.view.getUint8(offset) !== 0;
  }

  u16(offset: number): number {
    return this.view.getUint16(offset, true);
  }

  i16(offset: number): number {
    return this.view.getInt16(offset, true);
  }

  // u64 and i64 values are JSON numbers in these shapes, as serde writes them.
  u64(offset: number): number {
    return Number(this.view.getBigUint64(offset, true));
  }

  i64(offset: number): number {
    return Number(this.view.getBigInt64(offset, true));
  }

  /** Bytes as base64: how Agave shows ElGamal keys and ciphertexts (their Display). */
  base64(offset: number, length: number): string {
    if (offset + length > this.bytes.length) throw new RangeError("bytes past the extension's end");
    return Buffer.from(this.bytes.subarray(offset, offset + length)).toString("base64");
  }

  /** Like `base64`, but null for all-zero bytes (an optional ElGamal key, none set). */
  optionalBase64(offset: number, length: number): string | null {
    return this.bytes.subarray(offset, offset + length).every((byte) => byte === 0)
      ? null
      : this.base64(offset, length);
  }

  /** An f64, as a string: Agave writes a multiplier with Rust's `to_string`, never in exponent form. */
  f64Text(offset: number): string {
    const value = this.view.getFloat64(offset, true);
    return Number.isFinite(value) ? plainDecimal(value) : String(value);
  }

  /** A Borsh string (u32 length, UTF-8 bytes) at `offset`, and the offset after it. */
  string(offset: number): [string, number] {
    const length = this.view.getUint32(offset, true);
    const end = offset + 4 + length;
    if (end > this.bytes.length) throw new RangeError("string past the extension's end");
    return [UTF8.decode(this.bytes.subarray(offset + 4, end)), end];
  }
}

const ZERO_KEY = addressOf(new Uint8Array(32));
const UTF8 = new TextDecoder("utf-8", { fatal: true });
const ACCOUNT_STATES = ["uninitialized", "initialized", "frozen"];

function transferFee(value: ValueReader, offset: number) {
  return {
    epoch: value.u64(offset),
    maximumFee: value.u64(offset + 8),
    transferFeeBasisPoints: value.u16(offset + 16),
  };
}

function tokenMetadata(value: ValueReader) {
  let offset = 64;
  const text = () => {
    const [read, next] = value.string(offset);
    offset = next;
    return read;
  };
  const name = text();
  const symbol = text();
  const uri = text();
  const count = new DataView(value.bytes.buffer, value.bytes.byteOffset + offset, 4).getUint32(0, true);
  offset += 4;
  const additionalMetadata: [string, string][] = [];
  for (let i = 0; i < count; i++) additionalMetadata.push([text(), text()]);
  if (offset !== value.bytes.length) throw new RangeError("bytes after the token metadata");
  return {
    updateAuthority: value.optionalKey(0),
    mint: value.key(32),
    name,
    symbol,
    uri,
    additionalMetadata,
  };
}

interface ExtensionParser {
  name: string;
  /** The value's exact size (Agave reads fixed-size extensions as Pods); none for variable ones. */
  size?: number;
  state?: (value: ValueReader) => Record<string, unknown>;
}

// By ExtensionType number.
const PARSERS: Record<number, ExtensionParser> = {
  1: {
    name: "transferFeeConfig",
    size: 108,
    state: (v) => ({
      transferFeeConfigAuthority: v.optionalKey(0),
      withdrawWithheldAuthority: v.optionalKey(32),
      withheldAmount: v.u64(64),
      olderTransferFee: transferFee(v, 72),
      newerTransferFee: transferFee(v, 90),
    }),
  },
  2: { name: "transferFeeAmount", size: 8, state: (v) => ({ withheldAmount: v.u64(0) }) },
  3: { name: "mintCloseAuthority", size: 32, state: (v) => ({ closeAuthority: v.optionalKey(0) }) },
  4: {
    name: "confidentialTransferMint",
    size: 65,
    state: (v) => ({
      authority: v.optionalKey(0),
      autoApproveNewAccounts: v.bool(32),
      auditorElgamalPubkey: v.optionalBase64(33, 32),
    }),
  },
  5: {
    name: "confidentialTransferAccount",
    size: 295,
    state: (v) => ({
      approved: v.bool(0),
      elgamalPubkey: v.base64(1, 32),
      pendingBalanceLo: v.base64(33, 64),
      pendingBalanceHi: v.base64(97, 64),
      availableBalance: v.base64(161, 64),
      decryptableAvailableBalance: v.base64(225, 36),
      allowConfidentialCredits: v.bool(261),
      allowNonConfidentialCredits: v.bool(262),
      pendingBalanceCreditCounter: v.u64(263),
      maximumPendingBalanceCreditCounter: v.u64(271),
      expectedPendingBalanceCreditCounter: v.u64(279),
      actualPendingBalanceCreditCounter: v.u64(287),
    }),
  },
  6: {
    name: "defaultAccountState",
    size: 1,
    state: (v) => ({ accountState: ACCOUNT_STATES[v.bytes[0] ?? 0] ?? "uninitialized" }),
  },
  7: { name: "immutableOwner" },
  8: { name: "memoTransfer", size: 1, state: (v) => ({ requireIncomingTransferMemos: v.bool(0) }) },
  9: { name: "nonTransferable" },
  10: {
    name: "interestBearingConfig",
    size: 52,
    state: (v) => ({
      rateAuthority: v.optionalKey(0),
      initializationTimestamp: v.i64(32),
      preUpdateAverageRate: v.i16(40),
      lastUpdateTimestamp: v.i64(42),
      currentRate: v.i16(50),
    }),
  },
  11: { name: "cpiGuard", size: 1, state: (v) => ({ lockCpi: v.bool(0) }) },
  12: { name: "permanentDelegate", size: 32, state: (v) => ({ delegate: v.optionalKey(0) }) },
  13: { name: "nonTransferableAccount" },
  14: {
    name: "transferHook",
    size: 64,
    state: (v) => ({ authority: v.optionalKey(0), programId: v.optionalKey(32) }),
  },
  15: { name: "transferHookAccount", size: 1, state: (v) => ({ transferring: v.bool(0) }) },
  16: {
    name: "confidentialTransferFeeConfig",
    size: 129,
    state: (v) => ({
      authority: v.optionalKey(0),
      withdrawWithheldAuthorityElgamalPubkey: v.base64(32, 32),
      harvestToMintEnabled: v.bool(64),
      withheldAmount: v.base64(65, 64),
    }),
  },
  17: {
    name: "confidentialTransferFeeAmount",
    size: 64,
    state: (v) => ({ withheldAmount: v.base64(0, 64) }),
  },
  18: {
    name: "metadataPointer",
    size: 64,
    state: (v) => ({ authority: v.optionalKey(0), metadataAddress: v.optionalKey(32) }),
  },
  19: { name: "tokenMetadata", state: tokenMetadata },
  20: {
    name: "groupPointer",
    size: 64,
    state: (v) => ({ authority: v.optionalKey(0), groupAddress: v.optionalKey(32) }),
  },
  21: {
    name: "groupMemberPointer",
    size: 64,
    state: (v) => ({ authority: v.optionalKey(0), memberAddress: v.optionalKey(32) }),
  },
  22: {
    name: "tokenGroup",
    size: 80,
    state: (v) => ({
      updateAuthority: v.optionalKey(0),
      mint: v.key(32),
      size: v.u64(64),
      maxSize: v.u64(72),
    }),
  },
  23: {
    name: "tokenGroupMember",
    size: 72,
    state: (v) => ({ mint: v.key(0), group: v.key(32), memberNumber: v.u64(64) }),
  },
  24: {
    name: "confidentialMintBurn",
    size: 196,
    state: (v) => ({
      confidentialSupply: v.base64(0, 64),
      decryptableSupply: v.base64(64, 36),
      supplyElgamalPubkey: v.base64(100, 32),
      pendingBurn: v.base64(132, 64),
    }),
  },
  25: {
    name: "scaledUiAmountConfig",
    size: 56,
    state: (v) => ({
      authority: v.optionalKey(0),
      multiplier: v.f64Text(32),
      newMultiplierEffectiveTimestamp: v.i64(40),
      newMultiplier: v.f64Text(48),
    }),
  },
  26: {
    name: "pausableConfig",
    size: 33,
    state: (v) => ({ authority: v.optionalKey(0), paused: v.bool(32) }),
  },
  27: { name: "pausableAccount" },
};

const UNPARSEABLE = { extension: "unparseableExtension" };

function parseExtension(type: number, value: Uint8Array): Record<string, unknown> {
  const parser = PARSERS[type];
  if (!parser || (parser.size !== undefined && value.length !== parser.size)) return UNPARSEABLE;
  if (!parser.state) return { extension: parser.name };
  try {
    return { extension: parser.name, state: parser.state(new ValueReader(value)) };
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) return UNPARSEABLE;
    throw error;
  }
}

// Extensions follow the base layout (padded to 165 bytes) and its one-byte account type tag.
const EXTENSIONS_OFFSET = 166;

/**
 * A Token-2022 mint's or token account's extensions as Agave lists them, in the order they are
 * stored, up to the first uninitialized entry; one past the data's end is unparseable and ends the list.
 */
export function parseTokenExtensions(data: Uint8Array): Record<string, unknown>[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const extensions: Record<string, unknown>[] = [];
  for (let offset = EXTENSIONS_OFFSET; offset + 4 <= data.length; ) {
    const type = view.getUint16(offset, true);
    if (type === 0) break;
    const end = offset + 4 + view.getUint16(offset + 2, true);
    if (end > data.length) {
      extensions.push(UNPARSEABLE);
      break;
    }
    extensions.push(parseExtension(type, data.subarray(offset + 4, end)));
    offset = end;
  }
  return extensions;
}

// A finite number's decimal digits without an exponent (1e-7 → "0.0000001"), as Rust prints an f64.
function plainDecimal(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  const [mantissa = "", exponentText = "0"] = text.split(/e/i);
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const [whole = "", fraction = ""] = mantissa.replace("-", "").split(".");
  const digits = whole + fraction;
  const point = whole.length + exponent;
  const plain =
    point <= 0
      ? `0.${"0".repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + "0".repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${plain}` : plain;
}
