/**
 * The embedded chain: LiteSVM executes, signatures are checked beside it (signature-verifier.ts,
 * or by LiteSVM when that is busy), the sandbox enforces what LiteSVM leaves out (the 150-block
 * blockhash window, replay protection over every recent signature) and makes every landed
 * transaction durable before answering. Sends queue up and commit in groups:
 * one database transaction per group, every caller answered only after it. The chain runs only
 * while it holds its database's lease (lease.ts): it takes it before reading any state, every
 * commit proves it, and once another process has taken it the chain refuses every send.
 */
import fs from "node:fs";
import type { Address, Blockhash, Signature } from "@solana/kit";
import bs58 from "bs58";
import type { Storage } from "../../storage/database.js";
import { addressOf } from "../base58.js";
import type {
  AccountInfo,
  Chain,
  LatestBlockhash,
  MintInfo,
  SendOptions,
  SignatureStatus,
  SimulateOptions,
  SimulationResult,
  TokenAccount,
  TokenAccountFilter,
  TransactionRecord,
} from "../chain.js";
import { ChainError, RPC_ERROR, TRANSACTION_ERROR_NAMES, type TransactionError } from "../errors.js";
import { transactionFee } from "../fees.js";
import {
  decodeMint,
  decodeTokenAccount,
  tokenAccountAmount,
  tokenAccountKind,
  tokenAccountMintAndOwner,
} from "../token-layout.js";
import { isStaticKeyWritable, parseWireTransaction, transactionId, type WireTransaction } from "../wire.js";
import { ChainStore, type CommitBatch, type StoredAccount, type StoredTransaction } from "./chain-store.js";
import { ChainLease, type ChainLeaseLostError, type ChainLeaseSettings } from "./lease.js";
import { decodeAddressParam } from "./rpc-encoding.js";
import { type SignatureVerdict, SignatureVerifier } from "./signature-verifier.js";
import { BLOCKHASH_VALIDITY_BLOCKS, SlotClock, systemClock, type WallClock } from "./slot-clock.js";
import {
  type Account,
  createSvm,
  emptyAccount,
  FailedTransactionMetadata,
  type LiteSvm,
  putAccount,
  setSvmSlot,
  type TransactionMetadata,
  toStoredAccount,
  toTransactionError,
} from "./svm.js";

// Signatures are remembered in memory for longer than any blockhash stays valid; older ones can
// only be replayed with an expired blockhash, which the blockhash check refuses anyway.
const REPLAY_MEMORY_SLOTS = 2n * BigInt(BLOCKHASH_VALIDITY_BLOCKS);
const MAX_BATCH = 512;
// LiteSVM's numeric code for a transaction whose signatures do not verify.
const SIGNATURE_FAILURE = TRANSACTION_ERROR_NAMES.indexOf("SignatureFailure");
// Address lookup tables: a 56-byte header, then the addresses.
const LOOKUP_TABLE_HEADER = 56;

export interface ChainLogger {
  info(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** What one commit changed, for subscribers. */
export interface CommitEvent {
  slot: bigint;
  transactions: { signature: string; err: TransactionError | null }[];
  accounts: Map<string, StoredAccount | null>;
}

/** Builds and signs the transfer that pays an airdrop; the sandbox owns no keys itself. */
export type AirdropBuilder = (
  recipient: Address,
  lamports: bigint,
  latest: LatestBlockhash,
) => Promise<Uint8Array>;

interface Status {
  slot: bigint;
  err: TransactionError | null;
  committed: boolean;
}

interface SendJob {
  kind: "send";
  wire: Uint8Array;
  tx: WireTransaction;
  skipPreflight: boolean;
  /** The signature check's outcome; undefined while the verifier works on it (the job waits). */
  signatures: SignatureVerdict | undefined;
  resolve(signature: Signature): void;
  reject(error: unknown): void;
}

interface InstallJob {
  kind: "install";
  accounts: StoredAccount[];
  resolve(): void;
  reject(error: unknown): void;
}

type Job = SendJob | InstallJob;

interface ResolvedKey {
  bytes: Uint8Array;
  address: string;
  writable: boolean;
}

interface Executed {
  signature: string;
  record: StoredTransaction;
}

// Jobs executed against LiteSVM and not yet committed, with the addresses they wrote.
interface UncommittedGroup {
  jobs: { job: Job; signature?: string }[];
  transactions: StoredTransaction[];
  written: Map<string, Uint8Array>;
  slot: bigint;
}

function emptyGroup(): UncommittedGroup {
  return { jobs: [], transactions: [], written: new Map(), slot: 0n };
}

export interface SandboxChainOptions {
  /** With `dialect` and `location` (as `openStorage` gives them), SQLite commits run off the main thread. */
  storage: Pick<Storage, "db"> & Partial<Pick<Storage, "dialect" | "location">>;
  clock?: WallClock;
  logger?: ChainLogger;
  /** Timings of the lease (tests shorten them); see lease.ts. */
  lease?: ChainLeaseSettings;
}

export class SandboxChain implements Chain {
  private svm: LiteSvm;
  /** LiteSVM's sigverify setting, kept here to toggle it only when a transaction needs the other. */
  private svmSigverify = true;
  private readonly verifier = new SignatureVerifier();
  private readonly statuses = new Map<string, Status>();
  private readonly tokenAccountsByOwner = new Map<string, Set<string>>();
  private readonly tokenOwnerOf = new Map<string, string>();
  private readonly listeners = new Set<(event: CommitEvent) => void>();
  private queue: Job[] = [];
  private draining: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private uncommitted: UncommittedGroup = emptyGroup();
  private commitsInFlight = 0;
  private svmSlot = -1n;
  private lastPrunedSlot = 0n;
  private closed = false;
  private airdropBuilder: AirdropBuilder | null = null;
  private landedCount = 0;
  private needsReload = false;
  /** Set once the lease is lost: what every send is refused with from then on. */
  private halted: ChainError | null = null;

  private constructor(
    private readonly store: ChainStore,
    readonly slots: SlotClock,
    readonly genesisHash: string,
    private readonly logger: ChainLogger | undefined,
    /** The lease this chain runs under. */
    readonly lease: ChainLease,
  ) {
    this.svm = createSvm();
    lease.onLost((error) => this.leaseLost(error));
  }

  /**
   * Opens the chain on `storage`, rebuilding its state exactly from what was committed; throws
   * ChainLeaseHeldError when another live process runs the chain of this database.
   */
  static async open(options: SandboxChainOptions): Promise<SandboxChain> {
    const clock = options.clock ?? systemClock;
    const lease = new ChainLease(options.storage.db, {
      ...options.lease,
      dialect: options.storage.dialect,
      logger: options.logger,
    });
    // Taken before any state is read: what is read then includes every commit of the previous
    // holder, which can commit nothing after this.
    await lease.acquire();
    let store: ChainStore | undefined;
    try {
      store = new ChainStore(options.storage.db, { sqliteFile: sqliteFileOf(options.storage), lease });
      const genesis = await store.settleGenesis({
        genesisHash: bs58.encode(crypto.getRandomValues(new Uint8Array(32))),
        genesisMs: clock.now(),
      });
      const chain = new SandboxChain(
        store,
        new SlotClock(genesis.genesisMs, genesis.genesisHash, clock),
        genesis.genesisHash,
        options.logger,
        lease,
      );
      await chain.loadFromStore();
      return chain;
    } catch (error) {
      await store?.close();
      await lease.release();
      throw error;
    }
  }

  // Reads everything first and swaps it in at once, so that reads meanwhile see the old state, not
  // an empty chain.
  private async loadFromStore(): Promise<void> {
    const accounts = await this.store.loadAccounts();
    const landedCount = await this.store.countTransactions();
    const slot = this.slots.slot();
    const fromSlot = slot > REPLAY_MEMORY_SLOTS ? slot - REPLAY_MEMORY_SLOTS : 0n;
    const statuses = await this.store.loadRecentStatuses(fromSlot);
    this.svm = createSvm();
    this.svmSigverify = true;
    this.svmSlot = -1n;
    this.statuses.clear();
    this.tokenAccountsByOwner.clear();
    this.tokenOwnerOf.clear();
    for (const account of accounts) {
      putAccount(this.svm, account);
      this.indexTokenAccount(account.address, account);
    }
    this.landedCount = landedCount;
    for (const status of statuses) {
      this.statuses.set(status.signature, { slot: status.slot, err: status.err, committed: true });
    }
    this.logger?.info({ accounts: accounts.length, slot: String(slot) }, "sandbox chain state loaded");
  }

  /** Sets how `requestAirdrop` builds its funding transfer (done once the venue's keys are loaded). */
  setAirdropBuilder(builder: AirdropBuilder): void {
    this.airdropBuilder = builder;
  }

  /** Calls `listener` after every commit; returns the function that removes it. */
  onCommit(listener: (event: CommitEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Writes accounts directly, bypassing transactions (genesis only); durable when it resolves. */
  installAccounts(accounts: StoredAccount[]): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "install", accounts, resolve, reject }));
  }

  async getLatestBlockhash(): Promise<LatestBlockhash> {
    const slot = this.slots.slot();
    return {
      blockhash: this.slots.blockhashOf(slot),
      lastValidBlockHeight: slot + BigInt(BLOCKHASH_VALIDITY_BLOCKS),
    };
  }

  async isBlockhashValid(blockhash: Blockhash): Promise<boolean> {
    return this.slots.validSlotOf(blockhash, this.slots.slot()) !== undefined;
  }

  async getBlockHeight(): Promise<bigint> {
    return this.slots.slot();
  }

  async getSlot(): Promise<bigint> {
    return this.slots.slot();
  }

  sendTransaction(wire: Uint8Array, options: SendOptions = {}): Promise<Signature> {
    return new Promise((resolve, reject) => {
      const job: SendJob = {
        kind: "send",
        wire,
        // Malformed bytes are refused here, before they reach the verifier or LiteSVM.
        tx: parseWireTransaction(wire),
        skipPreflight: options.skipPreflight ?? false,
        signatures: "unchecked",
        resolve,
        reject,
      };
      // The job takes its place in the queue now (sends execute in the order they came) and
      // executes once its verdict is in.
      const verification = this.verifier.verify(wire, job.tx);
      if (verification) {
        job.signatures = undefined;
        verification.then((verdict) => {
          job.signatures = verdict;
          this.wakeDrain();
        });
      }
      this.enqueue(job);
    });
  }

  async simulateTransaction(wire: Uint8Array, options: SimulateOptions = {}): Promise<SimulationResult> {
    const tx = parseWireTransaction(wire);
    const signature = transactionId(tx);
    const fail = (err: TransactionError): SimulationResult => ({ err, logs: [], unitsConsumed: 0n });
    if (this.statuses.has(signature)) return fail("AlreadyProcessed");
    const slot = this.slots.slot();
    if (
      !options.replaceRecentBlockhash &&
      this.slots.validSlotOf(addressOf(tx.recentBlockhash), slot) === undefined
    ) {
      return fail("BlockhashNotFound");
    }
    this.syncSvmSlot(slot);
    // Solana simulates without checking signatures unless asked (wallets simulate unsigned drafts).
    this.useSigverify(options.sigVerify ?? false);
    const result =
      tx.version === "legacy"
        ? this.svm.simulateLegacyTransaction(wire)
        : this.svm.simulateVersionedTransaction(wire);
    if (result instanceof FailedTransactionMetadata) {
      if (options.sigVerify && result.err() === SIGNATURE_FAILURE) {
        throw ChainError.signatureVerificationFailed();
      }
      const meta = result.meta();
      return {
        err: toTransactionError(result.err()),
        logs: meta.logs(),
        unitsConsumed: meta.computeUnitsConsumed(),
      };
    }
    const meta = result.meta();
    return { err: null, logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed() };
  }

  async getBalance(address: Address): Promise<bigint> {
    return this.svm.getBalance(decodeAddress(address)) ?? 0n;
  }

  async getAccountInfo(address: Address): Promise<AccountInfo | null> {
    return this.readAccount(address);
  }

  async getMultipleAccounts(addresses: readonly Address[]): Promise<(AccountInfo | null)[]> {
    return addresses.map((address) => this.readAccount(address));
  }

  async getTokenAccount(address: Address): Promise<TokenAccount | null> {
    const account = this.readAccount(address);
    return account ? decodeTokenAccount(address, account.owner, account.data) : null;
  }

  async getTokenAccountBalance(address: Address): Promise<bigint | null> {
    // Only the data is read: a firm quote checks its user's balance on the hot path.
    const account = this.svm.getAccount(decodeAddress(address));
    if (!account || account.lamports() === 0n) return null;
    return tokenAccountAmount(addressOf(account.owner()), account.data());
  }

  async getTokenAccountsByOwner(owner: Address, filter: TokenAccountFilter): Promise<TokenAccount[]> {
    const found: TokenAccount[] = [];
    for (const address of this.tokenAccountsByOwner.get(owner) ?? []) {
      const account = this.readAccount(address as Address);
      if (!account) continue;
      const token = decodeTokenAccount(address as Address, account.owner, account.data);
      if (!token) continue;
      if ("mint" in filter ? token.mint === filter.mint : token.programId === filter.programId)
        found.push(token);
    }
    return found.sort((a, b) => (a.address < b.address ? -1 : 1));
  }

  async getMint(address: Address): Promise<MintInfo | null> {
    const account = this.readAccount(address);
    return account ? decodeMint(address, account.owner, account.data) : null;
  }

  async getSignatureStatuses(signatures: readonly Signature[]): Promise<(SignatureStatus | null)[]> {
    const missing = signatures.filter((signature) => !this.statuses.get(signature)?.committed);
    const stored = missing.length > 0 ? await this.store.getStatuses(missing) : new Map();
    return signatures.map((signature) => {
      const memory = this.statuses.get(signature);
      const status = memory?.committed ? memory : stored.get(signature);
      if (!status) return null;
      // Every commit is durable before anyone hears of it, so nothing landed can roll back.
      return { slot: status.slot, err: status.err, confirmationStatus: "finalized" };
    });
  }

  async getTransaction(signature: Signature): Promise<TransactionRecord | null> {
    const stored = await this.store.getTransaction(signature);
    if (!stored) return null;
    return {
      signature: stored.signature as Signature,
      slot: stored.slot,
      blockTime: stored.blockTime,
      err: stored.err,
      fee: stored.fee,
      computeUnitsConsumed: stored.computeUnits,
      logs: stored.logs,
      preBalances: stored.preBalances,
      postBalances: stored.postBalances,
      wire: stored.wire,
    };
  }

  async getMinimumBalanceForRentExemption(space: number): Promise<bigint> {
    return this.svm.minimumBalanceForRentExemption(BigInt(space));
  }

  async requestAirdrop(address: Address, lamports: bigint): Promise<Signature> {
    if (!this.airdropBuilder) throw new ChainError(RPC_ERROR.internalError, "airdrops are not available");
    decodeAddress(address);
    if (lamports <= 0n) throw ChainError.invalidParams("airdrop amount must be positive");
    const wire = await this.airdropBuilder(address, lamports, await this.getLatestBlockhash());
    return this.sendTransaction(wire);
  }

  /** The token accounts held by any owner, for invariant checks: address → decoded account. */
  allTokenAccounts(): TokenAccount[] {
    const found: TokenAccount[] = [];
    for (const address of this.tokenOwnerOf.keys()) {
      const account = this.readAccount(address as Address);
      const token = account && decodeTokenAccount(address as Address, account.owner, account.data);
      if (token) found.push(token);
    }
    return found;
  }

  /** Stops taking sends, waits for those already queued to be answered, and releases the lease. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
    await this.verifier.close();
    await this.store.close();
    await this.lease.release();
  }

  /** An account as LiteSVM holds it now, read synchronously (for the RPC server's encoders). */
  peekAccount(address: Address): AccountInfo | null {
    return this.readAccount(address);
  }

  /** How many transactions have landed since genesis. */
  transactionCount(): number {
    return this.landedCount;
  }

  private readAccount(address: string): AccountInfo | null {
    const account = this.svm.getAccount(decodeAddress(address));
    if (!account) return null;
    const lamports = account.lamports();
    if (lamports === 0n) return null;
    return {
      lamports,
      owner: addressOf(account.owner()) as Address,
      data: account.data(),
      executable: account.executable(),
    };
  }

  private enqueue(job: Job): void {
    if (this.halted) {
      job.reject(this.halted);
      return;
    }
    if (this.closed) {
      job.reject(new ChainError(RPC_ERROR.nodeUnhealthy, "Node is shutting down"));
      return;
    }
    this.queue.push(job);
    this.wakeDrain();
    this.draining ??= this.drain();
  }

  private wakeDrain(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  // Executes queued jobs and commits what they wrote, answering each caller only after the commit
  // that holds its transaction. Execution and commits overlap: while commits are being written, the
  // jobs that arrive meanwhile execute (on top of their state) and go into the next commit together
  // (group commit); the store says how many commits may be in flight at once. `draining` is cleared
  // in the same synchronous step that finds nothing left to do: a caller resumed by the last answer
  // may enqueue at once, and must then start a new drain.
  private async drain(): Promise<void> {
    // Yield once so that sends arriving in the same tick join the first group.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      await this.drainQueue();
    } catch (error) {
      // Storage failed even to reload: LiteSVM may hold uncommitted effects, so reload before the next group.
      this.logger?.error({ err: error }, "sandbox chain could not reload its state from storage");
      this.needsReload = true;
      const failure = new ChainError(RPC_ERROR.internalError, "Storage is unavailable; retry");
      for (const job of this.queue.splice(0)) job.reject(failure);
      this.rejectUncommitted(failure);
      this.draining = null;
    }
  }

  private async drainQueue(): Promise<void> {
    for (;;) {
      if (this.halted) {
        // Nothing more executes or commits; the commits in flight fail their lease check.
        for (const job of this.queue.splice(0)) job.reject(this.halted);
        this.rejectUncommitted(this.halted);
        if (this.commitsInFlight === 0) {
          this.draining = null;
          return;
        }
      }
      if (this.needsReload && this.commitsInFlight === 0) {
        await this.loadFromStore();
        this.store.resumeCommits();
        this.needsReload = false;
      }
      const ready = this.readyJobs();
      if (ready > 0 && !this.needsReload) {
        this.executeGroup(this.queue.splice(0, ready));
        // Let I/O in (more sends, and the answers of a commit that has finished) before the next group.
        if (this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
      }
      if (
        this.commitsInFlight < this.store.maxCommitsInFlight() &&
        this.uncommitted.jobs.length > 0 &&
        !this.needsReload
      ) {
        this.startCommit();
      }
      if (this.readyJobs() > 0 && !this.needsReload) continue;
      if (this.commitsInFlight === 0 && this.uncommitted.jobs.length === 0 && this.queue.length === 0) {
        if (!this.needsReload || this.closed) {
          this.draining = null;
          return;
        }
        continue;
      }
      // Wait for a new job, a signature verdict or a commit in flight to settle.
      this.verifier.flush();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  // How many jobs at the head of the queue can execute now (at most MAX_BATCH): those before the
  // first still waiting for its signature verdict.
  private readyJobs(): number {
    const limit = Math.min(this.queue.length, MAX_BATCH);
    let ready = 0;
    while (ready < limit) {
      const job = this.queue[ready] as Job;
      if (job.kind === "send" && job.signatures === undefined) break;
      ready++;
    }
    return ready;
  }

  private useSigverify(on: boolean): void {
    if (this.svmSigverify === on) return;
    this.svm.setSigverify(on);
    this.svmSigverify = on;
  }

  // Executes `jobs` against LiteSVM (synchronously) and adds what they wrote to the next commit.
  private executeGroup(jobs: Job[]): void {
    const slot = this.slots.slot();
    this.syncSvmSlot(slot);
    const next = this.uncommitted;
    if (slot > next.slot) next.slot = slot;
    for (const job of jobs) {
      try {
        if (job.kind === "install") {
          for (const account of job.accounts) {
            putAccount(this.svm, account);
            next.written.set(account.address, decodeAddress(account.address));
          }
          next.jobs.push({ job });
        } else {
          const executed = this.execute(job, slot, next.written);
          next.transactions.push(executed.record);
          next.jobs.push({ job, signature: executed.signature });
        }
      } catch (error) {
        job.reject(error);
      }
    }
  }

  // Sends everything executed so far to storage as one batch. The accounts are read from LiteSVM
  // now, once each however many transactions wrote them: LiteSVM holds exactly the effects of the
  // transactions in this batch (and of those committed before).
  private startCommit(): void {
    const group = this.uncommitted;
    this.uncommitted = emptyGroup();
    const batch: CommitBatch = { accounts: new Map(), transactions: group.transactions };
    try {
      for (const [address, bytes] of group.written) {
        const account = toStoredAccount(address, this.svm.getAccount(bytes));
        batch.accounts.set(address, account);
        this.indexTokenAccount(address, account);
      }
    } catch (error) {
      this.commitFailed(group, error);
      return;
    }
    this.commitsInFlight++;
    this.store
      .commit(batch)
      .then(
        () => this.committed(group, batch),
        (error: unknown) => this.commitFailed(group, error),
      )
      .finally(() => {
        this.commitsInFlight--;
        this.wakeDrain();
      });
  }

  private committed(group: UncommittedGroup, batch: CommitBatch): void {
    this.landedCount += batch.transactions.length;
    for (const tx of batch.transactions) {
      this.statuses.set(tx.signature, { slot: tx.slot, err: tx.err, committed: true });
    }
    for (const { job, signature } of group.jobs) {
      if (job.kind === "install") job.resolve();
      else job.resolve(signature as Signature);
    }
    this.publish({
      slot: group.slot,
      transactions: batch.transactions.map((tx) => ({ signature: tx.signature, err: tx.err })),
      accounts: batch.accounts,
    });
  }

  // A failed commit fails its own jobs and every job executed after it (they ran on its effects);
  // LiteSVM is rebuilt from storage before anything else executes.
  // After the lease is lost (the store then failed the commit), they are refused for good instead.
  private commitFailed(group: UncommittedGroup, error: unknown): void {
    const failure =
      this.halted ?? new ChainError(RPC_ERROR.internalError, "Transaction could not be committed; retry");
    if (!this.halted) {
      this.logger?.error({ err: error }, "sandbox chain commit failed; reloading state from storage");
      this.needsReload = true;
    }
    for (const { job } of group.jobs) job.reject(failure);
    this.rejectUncommitted(failure);
  }

  // Another process runs the chain now: what LiteSVM holds may be stale, and nothing can be stored.
  private leaseLost(error: ChainLeaseLostError): void {
    if (this.halted) return;
    this.logger?.error({ err: error }, "sandbox chain lost its lease; it takes no more transactions");
    this.halted = new ChainError(
      RPC_ERROR.nodeUnhealthy,
      `Node no longer runs the sandbox chain: ${error.message}; restart it to use the instance that does`,
    );
    this.wakeDrain();
  }

  private rejectUncommitted(failure: ChainError): void {
    const group = this.uncommitted;
    this.uncommitted = emptyGroup();
    for (const { job } of group.jobs) job.reject(failure);
  }

  private publish(event: CommitEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger?.error({ err: error }, "sandbox chain commit listener failed");
      }
    }
  }

  // Runs one transaction against LiteSVM; throws (with LiteSVM's state untouched) when it is refused.
  private execute(job: SendJob, slot: bigint, written: Map<string, Uint8Array>): Executed {
    const tx = job.tx;
    const signature = transactionId(tx);
    if (this.statuses.has(signature)) throw ChainError.transactionFailed("AlreadyProcessed");
    if (this.slots.validSlotOf(addressOf(tx.recentBlockhash), slot) === undefined) {
      throw ChainError.transactionFailed("BlockhashNotFound");
    }
    if (job.signatures === "invalid") throw ChainError.signatureVerificationFailed();
    // Signatures the verifier found valid are not checked again; any others LiteSVM checks.
    this.useSigverify(job.signatures !== "valid");
    const keys = this.resolveAccountKeys(tx);
    const count = keys.length;
    // Writable accounts as they were, to undo a refused transaction's fee; every key's lamports.
    const before: (Account | null)[] = new Array(count);
    const preBalances: bigint[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const key = keys[i] as ResolvedKey;
      if (key.writable) {
        const account = this.svm.getAccount(key.bytes);
        before[i] = account;
        preBalances[i] = account?.lamports() ?? 0n;
      } else {
        before[i] = null;
        preBalances[i] = this.svm.getBalance(key.bytes) ?? 0n;
      }
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
        // A preflight would have refused it before it landed: undo the fee LiteSVM charged.
        keys.forEach((key, i) => {
          if (key.writable) this.svm.setAccount(key.bytes, before[i] ?? emptyAccount());
        });
        throw ChainError.transactionFailed(err, logs, meta.computeUnitsConsumed());
      }
    }
    // The accounts themselves are read once per commit (startCommit); here only their lamports.
    const postBalances: bigint[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const key = keys[i] as ResolvedKey;
      if (!key.writable) {
        postBalances[i] = preBalances[i] ?? 0n;
        continue;
      }
      written.set(key.address, key.bytes);
      postBalances[i] = this.svm.getBalance(key.bytes) ?? 0n;
    }
    this.statuses.set(signature, { slot, err, committed: false });
    const record: StoredTransaction = {
      signature,
      slot,
      blockTime: this.slots.blockTime(slot),
      err,
      fee: transactionFee(tx),
      computeUnits: meta.computeUnitsConsumed(),
      logs: meta.logs(),
      preBalances,
      postBalances,
      wire: job.wire,
    };
    return { signature, record };
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

  private syncSvmSlot(slot: bigint): void {
    if (slot === this.svmSlot) return;
    this.svmSlot = slot;
    setSvmSlot(this.svm, slot, this.slots.blockTime(slot));
    if (slot - this.lastPrunedSlot > BigInt(BLOCKHASH_VALIDITY_BLOCKS)) this.pruneStatuses(slot);
  }

  private pruneStatuses(slot: bigint): void {
    this.lastPrunedSlot = slot;
    for (const [signature, status] of this.statuses) {
      if (status.committed && slot - status.slot > REPLAY_MEMORY_SLOTS) this.statuses.delete(signature);
    }
  }

  private indexTokenAccount(address: string, account: StoredAccount | null): void {
    const previousOwner = this.tokenOwnerOf.get(address);
    const isTokenAccount = account !== null && tokenAccountKind(account.owner, account.data) === "account";
    const owner = isTokenAccount ? tokenAccountMintAndOwner(account.data).owner : undefined;
    if (previousOwner === owner) return;
    if (previousOwner !== undefined) {
      this.tokenAccountsByOwner.get(previousOwner)?.delete(address);
      this.tokenOwnerOf.delete(address);
    }
    if (owner !== undefined) {
      let set = this.tokenAccountsByOwner.get(owner);
      if (!set) {
        set = new Set();
        this.tokenAccountsByOwner.set(owner, set);
      }
      set.add(address);
      this.tokenOwnerOf.set(address, owner);
    }
  }
}

// The SQLite file behind `storage`, if it is one on disk (a second connection can then write it).
function sqliteFileOf(storage: SandboxChainOptions["storage"]): string | undefined {
  if (storage.dialect !== "sqlite" || !storage.location) return undefined;
  return fs.existsSync(storage.location) ? storage.location : undefined;
}

/** Decodes a base58 address (its length checked first); throws -32602 when it is not 32 bytes of base58. */
export function decodeAddress(address: string): Uint8Array {
  return decodeAddressParam(address);
}
