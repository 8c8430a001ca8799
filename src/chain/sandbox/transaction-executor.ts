/**
 * Runs transactions on the sandbox chain's LiteSVM, and enforces what LiteSVM leaves out: the
 * 150-block blockhash window and replay protection over every recent signature and message hash
 * (signature-statuses.ts). A transaction a preflight would refuse leaves LiteSVM as it was, its fee
 * included. Signatures the verifier worker already judged valid are not checked again; LiteSVM
 * checks any others. Execution is synchronous; when it happens is the commit pipeline's decision.
 */
import type { Address, Signature } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "../base58.js";
import type { AccountInfo, SimulateOptions, SimulationResult } from "../chain.js";
import { verifySignature } from "../ed25519.js";
import { ChainError, TRANSACTION_ERROR_NAMES, type TransactionError } from "../errors.js";
import { computeUnitPriceOf, transactionFee } from "../fees.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../programs.js";
import { hasTokenAccountShape } from "../token-layout.js";
import {
  isStaticKeyWritable,
  messageHash,
  parseWireTransaction,
  transactionId,
  type WireTransaction,
} from "../wire.js";
import type { StoredAccount, StoredTransaction } from "./commit-batch.js";
import { DeferredAccounts } from "./deferred-accounts.js";
import {
  innerInstructionsOf,
  KnownAccounts,
  mayHaveInnerInstructions,
  mayHaveReturnData,
  returnDataOf,
  TokenBalanceReader,
  type TokenHolding,
} from "./meta-capture.js";
import type { PricedTransaction } from "./prioritization-fees.js";
import type { SignatureStatuses } from "./signature-statuses.js";
import type { SignatureVerdict } from "./signature-verifier.js";
import type { SlotClock } from "./slot-clock.js";
import {
  Account,
  type AddressAndAccount,
  createSvm,
  emptyAccount,
  FailedTransactionMetadata,
  type LiteSvm,
  putAccount,
  setSvmSlot,
  type TransactionMetadata,
  toTransactionError,
} from "./svm.js";
import {
  type InnerInstructionGroup,
  type LoadedAddresses,
  NOTHING_LOADED,
  type ReturnDataRecord,
  type TokenBalance,
} from "./transaction-meta.js";

// LiteSVM's numeric code for a transaction whose signatures do not verify.
const SIGNATURE_FAILURE = TRANSACTION_ERROR_NAMES.indexOf("SignatureFailure");
// Address lookup tables: a 56-byte header, then the addresses.
const LOOKUP_TABLE_HEADER = 56;

/** A parsed transaction to execute, as it was sent. */
export interface ExecutableTransaction {
  wire: Uint8Array;
  tx: WireTransaction;
  skipPreflight: boolean;
  /** The signature check's outcome; undefined while the verifier works on it. */
  signatures: SignatureVerdict | undefined;
}

/**
 * An account a commit stores: its key, and (when a transaction read it after writing it) what was
 * read of it, which the commit stores without reading it out of LiteSVM again.
 */
export interface WrittenAccount {
  bytes: Uint8Array;
  account?: Account | null;
  data?: Uint8Array;
  lamports?: bigint;
  /** Its owner, when the read named it (a token account's program). */
  owner?: Address;
}

/** A transaction that landed in LiteSVM (its commit still to come). */
export interface ExecutedTransaction {
  signature: Signature;
  record: StoredTransaction;
  /** Its compute-unit price and the accounts it wrote, for the prioritization-fee cache. */
  priced: PricedTransaction;
}

interface ResolvedKey {
  bytes: Uint8Array;
  address: Address;
  writable: boolean;
}

/** A simulation's outcome with what Agave's simulateTransaction answers beyond logs and units. */
export interface SandboxSimulation extends SimulationResult {
  innerInstructions: InnerInstructionGroup[];
  returnData: ReturnDataRecord | null;
  /** Every account key, loaded ones included, to resolve the inner instructions' indexes. */
  accountKeys: Address[];
  /** The accounts asked for, after the simulation (null when it failed or one does not exist). */
  accounts: (AccountInfo | null)[];
}

/** The sandbox chain's LiteSVM and the rules it executes by (see the module comment). */
export class TransactionExecutor {
  /** The chain's state as executed so far, committed or not; replaced by `reset`. */
  svm: LiteSvm = createSvm();
  /** Genesis accounts of market rails, put into LiteSVM when a transaction first names one. */
  readonly deferredAccounts = new DeferredAccounts();
  /** LiteSVM's sigverify setting, kept here to toggle it only when a transaction needs the other. */
  private sigverify = true;
  private svmSlot = -1n;
  private readonly tokenBalances = new TokenBalanceReader();
  private readonly known = new KnownAccounts();

  constructor(
    private readonly slots: SlotClock,
    private readonly statuses: SignatureStatuses,
  ) {}

  /** Starts over on an empty LiteSVM, to be filled with the state as stored. */
  reset(): void {
    this.svm = createSvm();
    this.sigverify = true;
    this.svmSlot = -1n;
    this.tokenBalances.clear();
    this.known.clear();
  }

  /** Writes a stored account into LiteSVM (outside any transaction). */
  put(account: StoredAccount): void {
    putAccount(this.svm, account);
    this.known.forget(account.address as Address);
  }

  /** Moves LiteSVM's clock to `slot` (and lets the statuses forget what fell out of the window). */
  syncSlot(slot: bigint): void {
    if (slot === this.svmSlot) return;
    this.svmSlot = slot;
    setSvmSlot(this.svm, slot, this.slots.blockTime(slot));
    this.statuses.prune(slot);
  }

  /**
   * Simulates a wire transaction on the current state, changing nothing; `accounts` names accounts
   * whose state after it to answer (null each when it fails, as Agave).
   */
  simulate(wire: Uint8Array, options: SimulateOptions, accounts: readonly Address[] = []): SandboxSimulation {
    const tx = parseWireTransaction(wire);
    const signature = transactionId(tx);
    const fail = (err: TransactionError): SandboxSimulation => failedSimulation(err, tx, accounts.length);
    if (this.statuses.has(signature)) return fail("AlreadyProcessed");
    const slot = this.slots.slot();
    if (
      !options.replaceRecentBlockhash &&
      this.slots.validSlotOf(addressOf(tx.recentBlockhash), slot) === undefined
    ) {
      return fail("BlockhashNotFound");
    }
    if (this.statuses.hasMessage(messageHash(tx))) {
      if (options.sigVerify && !signaturesVerify(tx)) throw ChainError.signatureVerificationFailed();
      return fail("AlreadyProcessed");
    }
    this.syncSlot(slot);
    // A bad lookup table is LiteSVM's to report, as it is without deferred accounts.
    const keys = tryOrUndefined(() => this.resolveAccountKeys(tx));
    if (keys && this.deferredAccounts.size > 0) this.createDeferred(keys);
    // Solana simulates without checking signatures unless asked (wallets simulate unsigned drafts).
    this.useSigverify(options.sigVerify ?? false);
    const result =
      tx.version === "legacy"
        ? this.svm.simulateLegacyTransaction(wire)
        : this.svm.simulateVersionedTransaction(wire);
    const accountKeys = keys?.map((key) => key.address) ?? tx.accountKeys.map((key) => addressOf(key));
    if (result instanceof FailedTransactionMetadata) {
      if (options.sigVerify && result.err() === SIGNATURE_FAILURE) {
        throw ChainError.signatureVerificationFailed();
      }
      return {
        ...simulationOf(result.meta(), accountKeys),
        err: toTransactionError(result.err()),
        accounts: accounts.map(() => null),
      };
    }
    return {
      ...simulationOf(result.meta(), accountKeys),
      err: null,
      accounts: this.accountsAfter(accounts, result.postAccounts()),
    };
  }

  // The named accounts as the simulation left them: its post-state, else the chain's (a deferred
  // account not yet in LiteSVM answered from the catalogue, as getAccountInfo answers it).
  private accountsAfter(addresses: readonly Address[], post: AddressAndAccount[]): (AccountInfo | null)[] {
    const after = new Map(post.map((entry) => [addressOf(entry.address), entry.account()]));
    return addresses.map((address) => {
      const account = after.get(address) ?? this.svm.getAccount(decodeAddressBytes(address));
      return account ? accountInfoOf(account) : (this.deferredAccounts.account(address) ?? null);
    });
  }

  /**
   * Executes one transaction in `slot` and adds the accounts it may have written to `written`;
   * throws (with LiteSVM's state untouched) when it is refused.
   */
  execute(
    job: ExecutableTransaction,
    slot: bigint,
    written: Map<Address, WrittenAccount>,
  ): ExecutedTransaction {
    const tx = job.tx;
    const signature = transactionId(tx);
    if (this.statuses.has(signature)) throw ChainError.transactionFailed("AlreadyProcessed");
    if (this.slots.validSlotOf(addressOf(tx.recentBlockhash), slot) === undefined) {
      throw ChainError.transactionFailed("BlockhashNotFound");
    }
    if (job.signatures === "invalid") throw ChainError.signatureVerificationFailed();
    const hash = messageHash(tx);
    if (this.statuses.hasMessage(hash)) {
      // A forged copy is refused for its signatures, as any forgery; a re-signed one as a replay.
      if (job.signatures !== "valid" && !signaturesVerify(tx)) throw ChainError.signatureVerificationFailed();
      throw ChainError.transactionFailed("AlreadyProcessed");
    }
    this.useSigverify(job.signatures !== "valid");
    const keys = this.resolveAccountKeys(tx);
    if (this.deferredAccounts.size > 0) this.createDeferred(keys);
    const count = keys.length;
    // Accounts that may be token accounts: token balances are read of those alone (not of programs
    // or sysvars), as Agave collects them.
    const watched = tokenCandidates(tx, keys);
    // Every key's lamports, and its token balance before (null: not a token account).
    const preBalances: bigint[] = new Array(count);
    const held: (TokenHolding | null)[] = new Array(count).fill(null);
    for (let i = 0; i < count; i++) {
      const key = keys[i] as ResolvedKey;
      preBalances[i] = this.svm.getBalance(key.bytes) ?? 0n;
      if (watched[i]) held[i] = this.holdingBefore(key, preBalances[i] as bigint);
    }
    const result =
      tx.version === "legacy"
        ? this.svm.sendLegacyTransaction(job.wire)
        : this.svm.sendVersionedTransaction(job.wire);
    let err: TransactionError | null = null;
    let meta: TransactionMetadata;
    if (!(result instanceof FailedTransactionMetadata)) meta = result;
    else {
      err = toTransactionError(result.err());
      meta = result.meta();
      const logs = meta.logs();
      const feePayerBefore = preBalances[0] ?? 0n;
      const feePayer = keys[0];
      const feeCharged =
        feePayer !== undefined && (this.svm.getBalance(feePayer.bytes) ?? 0n) !== feePayerBefore;
      if (!feeCharged) {
        if (err === "SignatureFailure") throw ChainError.signatureVerificationFailed();
        throw ChainError.transactionFailed(err, logs, meta.computeUnitsConsumed());
      }
      if (!job.skipPreflight) {
        // A preflight would have refused it before it landed: undo the fee LiteSVM charged, the only
        // change LiteSVM keeps of a failed transaction.
        if (feePayer) this.refund(feePayer.bytes, feePayerBefore);
        throw ChainError.transactionFailed(err, logs, meta.computeUnitsConsumed());
      }
    }
    // The written accounts are read once here, and the commit stores what was read.
    const preTokenBalances: TokenBalance[] = [];
    const postTokenBalances: TokenBalance[] = [];
    const postBalances: bigint[] = new Array(count);
    const writable: Address[] = [];
    for (let i = 0; i < count; i++) {
      const key = keys[i] as ResolvedKey;
      const had = held[i];
      if (had) preTokenBalances.push(placedAt(i, had));
      if (!key.writable) {
        // A read-only account cannot change: its balances after are its balances before.
        postBalances[i] = preBalances[i] ?? 0n;
        if (had) postTokenBalances.push(placedAt(i, had));
        continue;
      }
      writable.push(key.address);
      const account = this.svm.getAccount(key.bytes);
      const lamports = account?.lamports() ?? 0n;
      postBalances[i] = lamports;
      const data = account?.data();
      const after = watched[i] ? this.holding(key, account, data, had?.programId ?? null) : null;
      // A token account's owner is its program: the commit need not read it out of LiteSVM again.
      written.set(key.address, { bytes: key.bytes, account, data, lamports, owner: after?.programId });
      if (!watched[i]) {
        this.known.forget(key.address);
        continue;
      }
      this.known.remember(key.address, lamports, after);
      if (after) postTokenBalances.push(placedAt(i, after));
    }
    const logs = meta.logs();
    this.statuses.executed(signature, hash, slot, err);
    const record: StoredTransaction = {
      signature,
      slot,
      blockTime: this.slots.blockTime(slot),
      err,
      fee: transactionFee(tx),
      computeUnits: meta.computeUnitsConsumed(),
      logs,
      preBalances,
      postBalances,
      wire: job.wire,
      messageHash: hash,
      accountKeys: keys.map((key) => key.address),
      meta: {
        preTokenBalances,
        postTokenBalances,
        innerInstructions: mayHaveInnerInstructions(logs) ? innerInstructionsOf(meta) : [],
        returnData: mayHaveReturnData(logs) ? returnDataOf(meta) : null,
        loadedAddresses: loadedAddressesOf(tx, keys),
      },
    };
    const priced: PricedTransaction = {
      computeUnitPrice: computeUnitPriceOf(tx),
      writable,
      computeUnits: record.computeUnits,
      feePayer: keys[0]?.address,
    };
    return { signature, record, priced };
  }

  // The token balance of `key` before a transaction (null: not a token account), as last seen if its
  // lamports are unchanged, else read out of LiteSVM.
  private holdingBefore(key: ResolvedKey, lamports: bigint): TokenHolding | null {
    const known = this.known.get(key.address, lamports);
    if (known) return known.holding;
    const account = this.svm.getAccount(key.bytes);
    const holding = this.holding(key, account, account?.data(), null);
    this.known.remember(key.address, lamports, holding);
    return holding;
  }

  // Gives the fee payer back the lamports it had before a refused transaction's fee. A fee payer is a
  // system account, so one the fee emptied (and LiteSVM dropped) was a plain one.
  private refund(payer: Uint8Array, lamports: bigint): void {
    const account = this.svm.getAccount(payer) ?? emptyAccount();
    this.svm.setAccount(
      payer,
      new Account(lamports, account.data(), account.owner(), account.executable(), account.rentEpoch()),
    );
  }

  /**
   * The token balance `account` holds (null when it is not a token account). `program`, when known,
   * saves reading the owner: a token program never hands its accounts to another owner.
   */
  private holding(
    key: ResolvedKey,
    account: Account | null | undefined,
    data: Uint8Array | undefined,
    program: Address | null,
  ): TokenHolding | null {
    if (!account || !data) return null;
    // Reading an owner out of LiteSVM costs several times reading the data: only for token-shaped data.
    if (!hasTokenAccountShape(data)) return null;
    const owner = program ?? tokenProgramOf(account.owner());
    if (!owner) return null;
    return this.tokenBalances.read(this.svm, key.address, owner, data);
  }

  // Creates in LiteSVM the deferred accounts among `keys` it does not hold yet (deferred-accounts.ts).
  private createDeferred(keys: readonly ResolvedKey[]): void {
    for (const key of keys) {
      // Built only when LiteSVM lacks it: most deferred accounts a transaction names exist already.
      if (!this.deferredAccounts.has(key.address) || this.svm.getAccount(key.bytes)) continue;
      const account = this.deferredAccounts.account(key.address);
      if (account) this.put(account);
    }
  }

  private useSigverify(on: boolean): void {
    if (this.sigverify === on) return;
    this.svm.setSigverify(on);
    this.sigverify = on;
  }

  // Every account key in message order (static, then loaded writable, then loaded readonly).
  private resolveAccountKeys(tx: WireTransaction): ResolvedKey[] {
    const keys: ResolvedKey[] = tx.accountKeys.map((bytes, i) => ({
      bytes,
      address: addressOf(bytes),
      writable: isStaticKeyWritable(tx, i),
    }));
    if (tx.lookups.length === 0) return keys;
    const loaded = { writable: [] as Uint8Array[], readonly: [] as Uint8Array[] };
    for (const lookup of tx.lookups) {
      const table = this.svm.getAccount(lookup.tableKey);
      if (!table) throw ChainError.transactionFailed("AddressLookupTableNotFound");
      const data = table.data();
      const entry = (index: number) => {
        const start = LOOKUP_TABLE_HEADER + index * 32;
        if (start + 32 > data.length) throw ChainError.transactionFailed("InvalidAddressLookupTableIndex");
        return data.subarray(start, start + 32);
      };
      for (const index of lookup.writableIndexes) loaded.writable.push(entry(index));
      for (const index of lookup.readonlyIndexes) loaded.readonly.push(entry(index));
    }
    for (const bytes of loaded.writable) keys.push({ bytes, address: addressOf(bytes), writable: true });
    for (const bytes of loaded.readonly) keys.push({ bytes, address: addressOf(bytes), writable: false });
    return keys;
  }
}

// A token balance at its key's index (a literal, where a spread copies field by field on the hot path).
function placedAt(accountIndex: number, holding: TokenHolding): TokenBalance {
  const { mint, owner, programId, amount, decimals } = holding;
  return { accountIndex, mint, owner, programId, amount, decimals };
}

// Per key, whether it may be a token account: neither an invoked program nor a sysvar.
function tokenCandidates(tx: WireTransaction, keys: readonly ResolvedKey[]): boolean[] {
  const candidates = keys.map((key) => !key.address.startsWith("Sysvar"));
  for (const instruction of tx.instructions) candidates[instruction.programIdIndex] = false;
  return candidates;
}

const TOKEN_PROGRAM_KEYS = [TOKEN_PROGRAM, TOKEN_2022_PROGRAM].map((program) => ({
  program,
  bytes: Buffer.from(decodeAddressBytes(program)),
}));

// The token program owning an account, compared as bytes (no base58 per key on the hot path).
function tokenProgramOf(owner: Uint8Array): Address | null {
  for (const { program, bytes } of TOKEN_PROGRAM_KEYS) if (bytes.equals(owner)) return program;
  return null;
}

// The addresses a v0 transaction loaded from lookup tables, as Agave's `loadedAddresses`.
function loadedAddressesOf(tx: WireTransaction, keys: readonly ResolvedKey[]): LoadedAddresses {
  if (keys.length === tx.accountKeys.length) return NOTHING_LOADED;
  const loaded = keys.slice(tx.accountKeys.length);
  return {
    writable: loaded.filter((key) => key.writable).map((key) => key.address),
    readonly: loaded.filter((key) => !key.writable).map((key) => key.address),
  };
}

function simulationOf(meta: TransactionMetadata, accountKeys: Address[]) {
  return {
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    innerInstructions: innerInstructionsOf(meta),
    returnData: returnDataOf(meta),
    accountKeys,
  };
}

// A simulation refused before LiteSVM ran it.
function failedSimulation(err: TransactionError, tx: WireTransaction, accounts: number): SandboxSimulation {
  return {
    err,
    logs: [],
    unitsConsumed: 0n,
    innerInstructions: [],
    returnData: null,
    accountKeys: tx.accountKeys.map((key) => addressOf(key)),
    accounts: new Array(accounts).fill(null),
  };
}

function accountInfoOf(account: Account): AccountInfo | null {
  if (account.lamports() === 0n) return null;
  return {
    lamports: account.lamports(),
    owner: addressOf(account.owner()),
    executable: account.executable(),
    data: account.data(),
  };
}

// Whether every signature verifies (only for copies of executed messages: LiteSVM checks the rest).
function signaturesVerify(tx: WireTransaction): boolean {
  return tx.signatures.every((signature, i) => {
    const key = tx.accountKeys[i];
    return key !== undefined && verifySignature(key, tx.message, signature);
  });
}

function tryOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
