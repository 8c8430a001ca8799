/**
 * How the sandbox chain lands transactions. Sends queue up in the order they came, wait for their
 * signature verdict (signature-verifier.ts), execute against LiteSVM (transaction-executor.ts) and
 * commit in groups: one database transaction per group, every caller answered only after it, so
 * every landed transaction is durable before anyone hears of it. A failed commit fails its own sends
 * and every send executed after it (they ran on its effects), and LiteSVM is rebuilt from storage
 * before anything else executes. Once the chain's lease is lost, every send is refused.
 */
import type { Address, Signature } from "@solana/kit";
import { addressOf } from "../base58.js";
import { ChainError, RPC_ERROR, type TransactionError } from "../errors.js";
import { parseWireTransaction, transactionId } from "../wire.js";
import type { ChainStore } from "./chain-store.js";
import type { CommitBatch, StoredAccount, StoredTransaction } from "./commit-batch.js";
import type { ChainLeaseLostError } from "./lease.js";
import type { PricedTransaction, RecentPrioritizationFees } from "./prioritization-fees.js";
import type { AccountIndex } from "./program-account-index.js";
import { decodeAddressParam } from "./rpc-encoding.js";
import { SignatureStatuses } from "./signature-statuses.js";
import { SignatureVerifier, usesPrecompile } from "./signature-verifier.js";
import type { SlotClock } from "./slot-clock.js";
import { toStoredAccount } from "./svm.js";
import type { ExecutableTransaction, TransactionExecutor, WrittenAccount } from "./transaction-executor.js";

const MAX_BATCH = 512;

/** Where the chain reports loads and failures (pino's logger fits). */
export interface ChainLogger {
  info(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** What one commit changed, for subscribers. */
export interface CommitEvent {
  slot: bigint;
  /** Each landed transaction with its logs and wire bytes (for PubSub's logs and mentions). */
  transactions: { signature: string; err: TransactionError | null; logs: string[]; wire: Uint8Array }[];
  accounts: Map<string, StoredAccount | null>;
}

interface SendJob extends ExecutableTransaction {
  kind: "send";
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

// Jobs executed against LiteSVM and not yet committed, with the addresses they wrote.
interface UncommittedGroup {
  jobs: ({ job: InstallJob } | { job: SendJob; signature: Signature })[];
  transactions: StoredTransaction[];
  /** Each transaction's price and written accounts, in the order of `transactions`. */
  priced: PricedTransaction[];
  written: Map<Address, WrittenAccount>;
  slot: bigint;
}

function emptyGroup(): UncommittedGroup {
  return { jobs: [], transactions: [], priced: [], written: new Map(), slot: 0n };
}

/** The sandbox chain's send queue, group execution and group commit (see the module comment). */
export class CommitPipeline {
  private readonly verifier = new SignatureVerifier();
  private readonly listeners = new Set<(event: CommitEvent) => void>();
  private readonly receivedListeners = new Set<(signature: Signature) => void>();
  private queue: Job[] = [];
  private draining: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private uncommitted: UncommittedGroup = emptyGroup();
  private commitsInFlight = 0;
  private closed = false;
  private landed = 0;
  private needsReload = false;
  /** Whether a load has filled the executor's LiteSVM; until then it is the empty one it was made with. */
  private loaded = false;
  /** Set once the lease is lost: what every send is refused with from then on. */
  private halted: ChainError | null = null;

  constructor(
    private readonly store: ChainStore,
    private readonly slots: SlotClock,
    private readonly executor: TransactionExecutor,
    private readonly statuses: SignatureStatuses,
    private readonly accountIndex: AccountIndex,
    private readonly logger: ChainLogger | undefined,
    /** Hears the price of every transaction once it has landed durably. */
    private readonly prioritizationFees: RecentPrioritizationFees,
  ) {}

  /** How many transactions have landed since genesis. */
  get landedCount(): number {
    return this.landed;
  }

  /**
   * Rebuilds the state exactly from what was committed. Reads everything first and swaps it in at
   * once, so that reads meanwhile see the old state, not an empty chain.
   */
  async load(): Promise<void> {
    const accounts = await this.store.loadAccounts();
    const landed = await this.store.countTransactions();
    const slot = this.slots.slot();
    const statuses = await this.store.loadRecentStatuses(SignatureStatuses.rememberedFrom(slot));
    // A reload starts over on a new LiteSVM; the first load fills the executor's own, still empty
    // (making one costs ~40 ms of every start).
    if (this.loaded) this.executor.reset();
    this.loaded = true;
    this.statuses.replace(statuses);
    this.accountIndex.clear();
    for (const account of accounts) {
      this.executor.put(account);
      this.accountIndex.update(account.address, account);
    }
    this.landed = landed;
    this.store.numberTransactionsFrom(landed);
    this.logger?.info({ accounts: accounts.length, slot: String(slot) }, "sandbox chain state loaded");
  }

  /** Calls `listener` after every commit; returns the function that removes it. */
  onCommit(listener: (event: CommitEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` with the signature of every send taken into the queue; returns its remover. */
  onReceived(listener: (signature: Signature) => void): () => void {
    this.receivedListeners.add(listener);
    return () => this.receivedListeners.delete(listener);
  }

  /**
   * Queues a wire transaction; resolves with its signature once it has landed durably.
   * `signaturesChecked`: the caller in this process checked them (SendOptions), so they are taken as
   * valid, unless a precompile instruction needs LiteSVM's signature pass.
   */
  send(wire: Uint8Array, skipPreflight: boolean, signaturesChecked = false): Promise<Signature> {
    return new Promise((resolve, reject) => {
      const job: SendJob = {
        kind: "send",
        wire,
        // Malformed bytes are refused here, before they reach the verifier or LiteSVM.
        tx: parseWireTransaction(wire),
        skipPreflight,
        signatures: "unchecked",
        resolve,
        reject,
      };
      // The job takes its place in the queue now (sends execute in the order they came) and
      // executes once its verdict is in.
      if (signaturesChecked && !usesPrecompile(job.tx)) job.signatures = "valid";
      else {
        // Waiting for the worker's verdict, unless it declines (LiteSVM checks them then).
        job.signatures = undefined;
        const checking = this.verifier.verify(wire, job.tx, this.queue.length, (verdict) => {
          job.signatures = verdict;
          this.wakeDrain();
        });
        if (!checking) job.signatures = "unchecked";
      }
      // Only a send the queue takes is received (a halted or closing chain refuses it at once).
      const taken = !this.halted && !this.closed;
      this.enqueue(job);
      if (taken && this.receivedListeners.size > 0) this.announceReceived(transactionId(job.tx));
    });
  }

  private announceReceived(signature: Signature): void {
    this.callEach(this.receivedListeners, signature, "received-transaction");
  }

  /** Writes accounts directly, bypassing transactions (genesis only); durable when it resolves. */
  install(accounts: StoredAccount[]): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "install", accounts, resolve, reject }));
  }

  /** Another process runs the chain now: what LiteSVM holds may be stale, and nothing can be stored. */
  leaseLost(error: ChainLeaseLostError): void {
    if (this.halted) return;
    this.logger?.error({ err: error }, "sandbox chain lost its lease; it takes no more transactions");
    this.halted = new ChainError(
      RPC_ERROR.nodeUnhealthy,
      `Node no longer runs the sandbox chain: ${error.message}; restart it to use the instance that does`,
    );
    this.wakeDrain();
  }

  /** Stops taking sends and waits for those already queued to be answered. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
    await this.verifier.close();
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
        await this.load();
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

  // Executes `jobs` against LiteSVM (synchronously) and adds what they wrote to the next commit.
  private executeGroup(jobs: Job[]): void {
    const slot = this.slots.slot();
    this.executor.syncSlot(slot);
    const next = this.uncommitted;
    if (slot > next.slot) next.slot = slot;
    for (const job of jobs) {
      try {
        if (job.kind === "install") {
          for (const account of job.accounts) {
            this.executor.put(account);
            const key = decodeAddressParam(account.address);
            next.written.set(addressOf(key), { bytes: key });
          }
          next.jobs.push({ job });
        } else {
          const executed = this.executor.execute(job, slot, next.written);
          next.transactions.push(executed.record);
          next.priced.push(executed.priced);
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
      for (const [address, written] of group.written) {
        const read =
          written.account !== undefined ? written.account : this.executor.svm.getAccount(written.bytes);
        const account = toStoredAccount(address, read, written);
        batch.accounts.set(address, account);
        this.accountIndex.update(address, account);
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
    this.landed += batch.transactions.length;
    this.statuses.committed(batch.transactions);
    for (const landed of group.jobs) {
      if ("signature" in landed) landed.job.resolve(landed.signature);
      else landed.job.resolve();
    }
    // Recorded in the same turn as the answers, so a sender that awaited its send reads its own price.
    batch.transactions.forEach((tx, i) => {
      const priced = group.priced[i];
      if (priced) this.prioritizationFees.record(tx.slot, priced);
    });
    this.publish({
      slot: group.slot,
      transactions: batch.transactions.map(({ signature, err, logs, wire }) => ({
        signature,
        err,
        logs,
        wire,
      })),
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

  private rejectUncommitted(failure: ChainError): void {
    const group = this.uncommitted;
    this.uncommitted = emptyGroup();
    for (const { job } of group.jobs) job.reject(failure);
  }

  private publish(event: CommitEvent): void {
    this.callEach(this.listeners, event, "commit");
  }

  // A listener's failure is logged: it must not fail the commit, nor the listeners after it.
  private callEach<T>(listeners: Set<(value: T) => void>, value: T, what: string): void {
    for (const listener of listeners) {
      try {
        listener(value);
      } catch (error) {
        this.logger?.error({ err: error }, `sandbox chain ${what} listener failed`);
      }
    }
  }
}
