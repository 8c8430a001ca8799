/**
 * Compiles and signs version-0 (or legacy) transactions (no lookup tables) from `@solana/kit` instructions, on
 * the venue's hot path. kit's own compiler re-validates every address with BigInt base58 arithmetic
 * and costs milliseconds per transaction; this one decodes each address once (cached), lays the
 * message out as the runtime expects and signs with `node:crypto`. Tests check its bytes against
 * kit's decoder and the chain executes them.
 */
import { AccountRole, type Instruction } from "@solana/kit";
import { addressBytes } from "../../chain/base58.js";
import type { Keypair } from "../../chain/ed25519.js";

const VERSION_0 = 0x80;
export interface CompiledMessage {
  bytes: Uint8Array;
  /** The accounts that must sign, in signature order (the fee payer first). */
  signers: string[];
}

/** A message's wire format: v0, or legacy for clients that cannot read versioned transactions. */
export type MessageFormat = "v0" | "legacy";

/** Lays out a message: fee payer, then writable and read-only signers, then the rest. */
export function compileMessage(
  feePayer: string,
  instructions: readonly Instruction[],
  blockhash: string,
  format: MessageFormat = "v0",
): CompiledMessage {
  // Every account with its merged role: writable if any use writes it, a signer if any use signs.
  const roles = new Map<string, number>([[feePayer, AccountRole.WRITABLE_SIGNER]]);
  const merge = (address: string, role: number) => roles.set(address, (roles.get(address) ?? 0) | role);
  for (const instruction of instructions) {
    for (const account of instruction.accounts ?? []) merge(account.address, account.role);
  }
  for (const instruction of instructions) merge(instruction.programAddress, AccountRole.READONLY);
  const isSigner = (role: number) => (role & 0b10) !== 0;
  const isWritable = (role: number) => (role & 0b01) !== 0;
  const groups: string[][] = [[], [], [], []];
  for (const [address, role] of roles) {
    if (address === feePayer) continue;
    const group = isSigner(role) ? (isWritable(role) ? 0 : 1) : isWritable(role) ? 2 : 3;
    groups[group]?.push(address);
  }
  const keys = [
    feePayer,
    ...(groups[0] as string[]),
    ...(groups[1] as string[]),
    ...(groups[2] as string[]),
    ...(groups[3] as string[]),
  ];
  if (keys.length > 256) throw new Error("a transaction can name at most 256 accounts");
  const index = new Map(keys.map((key, i) => [key, i]));
  const numSigners = 1 + (groups[0] as string[]).length + (groups[1] as string[]).length;

  // A legacy message is a v0 message without the version prefix and the lookup-table list.
  const out: number[] = [
    ...(format === "v0" ? [VERSION_0] : []),
    numSigners,
    (groups[1] as string[]).length,
    (groups[3] as string[]).length,
  ];
  pushLength(out, keys.length);
  const chunks: Uint8Array[] = [];
  const flush = () => {
    chunks.push(Uint8Array.from(out));
    out.length = 0;
  };
  flush();
  for (const key of keys) chunks.push(addressBytes(key));
  chunks.push(addressBytes(blockhash));
  pushLength(out, instructions.length);
  for (const instruction of instructions) {
    out.push(index.get(instruction.programAddress) as number);
    const accounts = instruction.accounts ?? [];
    pushLength(out, accounts.length);
    for (const account of accounts) out.push(index.get(account.address) as number);
    const data = instruction.data ?? new Uint8Array();
    pushLength(out, data.length);
    flush();
    chunks.push(Uint8Array.from(data));
  }
  if (format === "v0") out.push(0); // no address table lookups
  flush();
  return { bytes: Buffer.concat(chunks), signers: keys.slice(0, numSigners) };
}

/** The wire transaction: every signer's signature (the `signed` ones filled, the others zero) and the message. */
export function signedTransaction(message: CompiledMessage, signed: readonly Keypair[]): Uint8Array {
  const byAddress = new Map(signed.map((keypair) => [keypair.address as string, keypair]));
  const header: number[] = [];
  pushLength(header, message.signers.length);
  const wire = new Uint8Array(header.length + 64 * message.signers.length + message.bytes.length);
  wire.set(header, 0);
  message.signers.forEach((signer, i) => {
    const keypair = byAddress.get(signer);
    if (keypair) wire.set(keypair.sign(message.bytes), header.length + 64 * i);
  });
  wire.set(message.bytes, header.length + 64 * message.signers.length);
  return wire;
}

/** Solana's compact-u16 length prefix. */
function pushLength(out: number[], length: number): void {
  let rest = length;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(low);
      return;
    }
    out.push(low | 0x80);
  }
}
