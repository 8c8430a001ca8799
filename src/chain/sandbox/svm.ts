/**
 * The LiteSVM engine as the sandbox drives it: through its raw byte-level binding (no kit
 * encode/decode round trip per transaction), with its own blockhash and replay checks off because
 * the sandbox enforces Solana's rules itself (LiteSVM accepts only its latest blockhash and
 * remembers only a few dozen signatures). Signatures are LiteSVM's to verify.
 */

import {
  Account,
  type AddressAndAccount,
  FailedTransactionMetadata,
  FeatureSet,
  type InnerInstruction,
  InstructionErrorCustom,
  LiteSvm,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  type TransactionMetadata,
} from "litesvm/dist/internal.js";
import { addressOf, decodeAddressBytes } from "../base58.js";
import {
  INSTRUCTION_ERROR_NAMES,
  type InstructionErrorDetail,
  TRANSACTION_ERROR_NAMES,
  type TransactionError,
} from "../errors.js";
import type { StoredAccount } from "./commit-batch.js";
import { SLOTS_PER_EPOCH } from "./slot-clock.js";

export {
  Account,
  type AddressAndAccount,
  FailedTransactionMetadata,
  FeatureSet,
  type InnerInstruction,
  LiteSvm,
  type TransactionMetadata,
};

/** A LiteSVM configured for the sandbox. */
export function createSvm(): LiteSvm {
  const svm = new LiteSvm();
  // LiteSVM's own ed25519 check is about twice as fast here as node:crypto's.
  svm.setSigverify(true);
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  return svm;
}

/** Writes a stored account into LiteSVM; a Base58Error when its address or owner is not an address. */
export function putAccount(svm: LiteSvm, account: StoredAccount): void {
  // The length-checked decoder, several times faster than bs58's: a reload puts every account.
  svm.setAccount(
    decodeAddressBytes(account.address),
    new Account(account.lamports, account.data, decodeAddressBytes(account.owner), account.executable, 0n),
  );
}

/**
 * Converts LiteSVM's account (null or zero lamports: closed) to the stored form; what was already read
 * of it (`known`) is not read again.
 */
export function toStoredAccount(
  address: string,
  account: Account | null,
  known: { data?: Uint8Array; lamports?: bigint; owner?: string } = {},
): StoredAccount | null {
  if (account === null) return null;
  const lamports = known.lamports ?? account.lamports();
  if (lamports === 0n) return null;
  return {
    address,
    lamports,
    owner: known.owner ?? ownerAddress(account.owner()),
    executable: account.executable(),
    data: known.data ?? account.data(),
  };
}

// The few owners most accounts have (the system and token programs), without base58 each time.
const recentOwners: { bytes: Buffer; address: string }[] = [];
const RECENT_OWNERS = 8;

function ownerAddress(bytes: Uint8Array): string {
  for (const owner of recentOwners) if (owner.bytes.equals(bytes)) return owner.address;
  const address = addressOf(bytes);
  if (recentOwners.length >= RECENT_OWNERS) recentOwners.pop();
  recentOwners.unshift({ bytes: Buffer.from(bytes), address });
  return address;
}

/** An account that does not exist, for restoring one that a refused transaction created. */
export function emptyAccount(): Account {
  return new Account(0n, new Uint8Array(0), new Uint8Array(32), false, 0n);
}

/** Moves LiteSVM's Clock sysvar to `slot` so programs see the sandbox's time. */
export function setSvmSlot(svm: LiteSvm, slot: bigint, unixSeconds: number): void {
  const clock = svm.getClock();
  clock.slot = slot;
  clock.unixTimestamp = BigInt(unixSeconds);
  clock.epoch = slot / BigInt(SLOTS_PER_EPOCH);
  svm.setClock(clock);
}

type RawTransactionError = ReturnType<FailedTransactionMetadata["err"]>;

/** Converts LiteSVM's error object to Solana's JSON TransactionError. */
export function toTransactionError(raw: RawTransactionError): TransactionError {
  if (typeof raw === "number") return TRANSACTION_ERROR_NAMES[raw] ?? `UnknownError${raw}`;
  if (raw instanceof TransactionErrorInstructionError) {
    const inner = raw.err();
    let detail: InstructionErrorDetail;
    if (typeof inner === "number") detail = INSTRUCTION_ERROR_NAMES[inner] ?? "GenericError";
    else if (inner instanceof InstructionErrorCustom) detail = { Custom: inner.code };
    else detail = { BorshIoError: inner.msg };
    return { InstructionError: [raw.index, detail] };
  }
  if (raw instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: raw.index };
  if (raw instanceof TransactionErrorInsufficientFundsForRent) {
    return { InsufficientFundsForRent: { account_index: raw.accountIndex } };
  }
  return { ProgramExecutionTemporarilyRestricted: { account_index: raw.accountIndex } };
}
