/**
 * What the `jsonParsed` instruction parsers share (parsed-instructions.ts, parsed-token-extensions.ts):
 * the resolved instruction, bounded reads over its data, and Agave's account and signer conventions.
 */
import type { Address } from "@solana/kit";
import { addressOf } from "../base58.js";

/** An instruction with its program and accounts resolved to addresses. */
export interface ResolvedInstruction {
  programId: Address;
  accounts: Address[];
  data: Uint8Array;
  /** null for top-level instructions, as Agave answers them. */
  stackHeight: number | null;
}

export type Info = Record<string, unknown>;
export interface Parsed {
  type: string;
  info: Info;
}

/** Thrown when data or accounts do not fit the instruction: the caller falls back to partial decoding. */
export class Unparsable extends Error {}

/** Bounded little-endian reads over instruction data; any read past the end is Unparsable. */
export class DataReader {
  private readonly view: DataView;

  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  get length(): number {
    return this.data.length;
  }

  private need(offset: number, size: number): void {
    if (offset + size > this.data.length) throw new Unparsable();
  }

  u8(offset: number): number {
    this.need(offset, 1);
    return this.view.getUint8(offset);
  }

  u16(offset: number): number {
    this.need(offset, 2);
    return this.view.getUint16(offset, true);
  }

  u32(offset: number): number {
    this.need(offset, 4);
    return this.view.getUint32(offset, true);
  }

  u64(offset: number): bigint {
    this.need(offset, 8);
    return this.view.getBigUint64(offset, true);
  }

  key(offset: number): Address {
    this.need(offset, 32);
    return addressOf(this.data.subarray(offset, offset + 32));
  }

  bytes(offset: number, length: number): Uint8Array {
    this.need(offset, length);
    return this.data.subarray(offset, offset + length);
  }
}

/** The accounts of an instruction, at least `count` of them (Agave's check_num_accounts). */
export function accountsOf(instruction: ResolvedInstruction, count: number): Address[] {
  if (instruction.accounts.length < count) throw new Unparsable();
  return instruction.accounts;
}

/**
 * The authority at `index`: alone it is `single`; followed by more accounts it is a multisig,
 * named `multisig`, and the rest are its `signers` (Agave's parse_signers).
 */
export function withSigners(
  info: Info,
  accounts: Address[],
  index: number,
  single: string,
  multisig: string,
): Info {
  if (accounts.length > index + 1) {
    info[multisig] = accounts[index];
    info.signers = accounts.slice(index + 1);
  } else {
    info[single] = accounts[index];
  }
  return info;
}

/** An optional key as the token program encodes it in instruction data: a u8 tag, then the key. */
export function optionalKey(data: DataReader, offset: number): Address | null {
  return data.u8(offset) === 1 ? data.key(offset + 1) : null;
}
