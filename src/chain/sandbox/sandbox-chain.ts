/**
 * The embedded chain: the `Chain` interface over LiteSVM, durable in the venue's storage. Sends go
 * through the commit pipeline (commit-pipeline.ts), which executes them (transaction-executor.ts)
 * and answers each only once its group is committed; reads come straight from LiteSVM, from the
 * recent-signature memory (signature-statuses.ts) and the token-account index
 * (token-account-index.ts). The chain runs only while it holds its database's lease (lease.ts): it
 * takes it before reading any state, every commit proves it, and once another process has taken it
 * the chain refuses every send. Its state is the writer's only while the lease is `held` (lease.ts):
 * otherwise `unhealthy()` says why, and every read of accounts, balances, simulations and statuses
 * throws that error (-32005, as an unhealthy node answers) rather than answer from a copy another
 * instance may have moved on from. The slot, block height and blockhashes come from the genesis
 * clock in storage, the same on every instance, and stay readable (the JSON-RPC refuses them too, see
 * rpc-methods.ts); stored transactions are the writer's own records, read from storage. In
 * development the writer may move its clock forward or pause it (cheatcodes.ts): the shift is stored
 * before it takes effect, so a restart never finds the chain earlier than it was.
 */
import fs from "node:fs";
import type { Address, Blockhash, Signature } from "@solana/kit";
import type { Storage } from "../../storage/database.js";
import { addressOf, encodeBase58 } from "../base58.js";
import type {
  AccountInfo,
  Chain,
  LatestBlockhash,
  MintInfo,
  SendOptions,
  SignatureStatus,
  SimulateOptions,
  SlotPrioritizationFees,
  TokenAccount,
  TokenAccountFilter,
  TransactionRecord,
} from "../chain.js";
import { ChainError, NodeUnhealthyError, RPC_ERROR } from "../errors.js";
import { decodeMint, decodeTokenAccount, tokenAccountAmount } from "../token-layout.js";
import { ChainHistory } from "./chain-history.js";
import { ChainStore } from "./chain-store.js";
import type { StoredAccount } from "./commit-batch.js";
import { type ChainLogger, type CommitEvent, CommitPipeline } from "./commit-pipeline.js";
import type { DeferredAccounts } from "./deferred-accounts.js";
import { ChainLease, type ChainLeaseSettings } from "./lease.js";
import { RecentPrioritizationFees, type SlotPrioritizationFee } from "./prioritization-fees.js";
import { bothIndexes, ProgramAccountIndex } from "./program-account-index.js";
import { decodeAddressParam } from "./rpc-encoding.js";
import { SignatureStatuses } from "./signature-statuses.js";
import {
  BLOCKHASH_VALIDITY_BLOCKS,
  type ClockShift,
  NO_SHIFT,
  SlotClock,
  systemClock,
  type WallClock,
} from "./slot-clock.js";
import { TokenAccountIndex } from "./token-account-index.js";
import { type SandboxSimulation, TransactionExecutor } from "./transaction-executor.js";
import { emptyMetaExtras, type TransactionMetaExtras } from "./transaction-meta.js";

/** A landed transaction with what execution alone knows of it (transaction-meta.ts). */
export interface SandboxTransactionRecord extends TransactionRecord {
  meta: TransactionMetaExtras;
}

export type { ChainLogger, CommitEvent };

/** Builds and signs the transfer that pays an airdrop; the sandbox owns no keys itself. */
export type AirdropBuilder = (
  recipient: Address,
  lamports: bigint,
  latest: LatestBlockhash,
) => Promise<Uint8Array>;

export interface SandboxChainOptions {
  /** With `dialect` and `location` (as `openStorage` gives them), SQLite commits run off the main thread. */
  storage: Pick<Storage, "db"> & Partial<Pick<Storage, "dialect" | "location">>;
  clock?: WallClock;
  logger?: ChainLogger;
  /** Timings of the lease (tests shorten them); see lease.ts. */
  lease?: ChainLeaseSettings;
  /** Transactions per step of the history index (HISTORY_MERGE_EVERY); tests lower it. */
  historyMergeEvery?: number;
}

/** The embedded LiteSVM chain (see the module comment). */
export class SandboxChain implements Chain {
  private readonly statuses: SignatureStatuses;
  private readonly tokenAccounts = new TokenAccountIndex();
  private readonly programAccounts = new ProgramAccountIndex();
  private readonly prioritizationFees = new RecentPrioritizationFees();
  private readonly executor: TransactionExecutor;
  private readonly pipeline: CommitPipeline;
  /** What has landed, read from storage: address histories and blocks (the JSON-RPC's history methods). */
  readonly history: ChainHistory;
  private airdropBuilder: AirdropBuilder | null = null;
  private readonly genesisAccounts = new Map<string, StoredAccount>();
  // The clock change in progress: changes are stored and applied one after the other.
  private clockChange: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: ChainStore,
    readonly slots: SlotClock,
    readonly genesisHash: string,
    logger: ChainLogger | undefined,
    /** The lease this chain runs under. */
    readonly lease: ChainLease,
    history: ChainHistory,
  ) {
    this.history = history;
    this.statuses = new SignatureStatuses(store);
    this.executor = new TransactionExecutor(slots, this.statuses);
    this.pipeline = new CommitPipeline(
      store,
      slots,
      this.executor,
      this.statuses,
      bothIndexes(this.tokenAccounts, this.programAccounts),
      logger,
      this.prioritizationFees,
    );
    lease.onLost((error) => this.pipeline.leaseLost(error));
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
      store = await ChainStore.open(options.storage.db, {
        sqliteFile: sqliteFileOf(options.storage),
        lease,
        historyMergeEvery: options.historyMergeEvery,
      });
      const genesis = await store.settleGenesis({
        genesisHash: encodeBase58(crypto.getRandomValues(new Uint8Array(32))),
        genesisMs: clock.now(),
      });
      const shift = (await store.loadClockShift()) ?? NO_SHIFT;
      const chain = new SandboxChain(
        store,
        new SlotClock(genesis.genesisMs, genesis.genesisHash, clock, shift),
        genesis.genesisHash,
        options.logger,
        lease,
        new ChainHistory(options.storage.db),
      );
      await chain.pipeline.load();
      return chain;
    } catch (error) {
      await store?.close();
      await lease.release();
      throw error;
    }
  }

  /** Sets how `requestAirdrop` builds its funding transfer (done once the venue's keys are loaded). */
  setAirdropBuilder(builder: AirdropBuilder): void {
    this.airdropBuilder = builder;
  }

  /** Calls `listener` after every commit; returns the function that removes it. */
  onCommit(listener: (event: CommitEvent) => void): () => void {
    return this.pipeline.onCommit(listener);
  }

  /** Calls `listener` with the signature of every transaction taken to execute; returns its remover. */
  onReceived(listener: (signature: Signature) => void): () => void {
    return this.pipeline.onReceived(listener);
  }

  /**
   * Writes accounts directly, bypassing transactions (genesis, and development's account cheatcodes),
   * through the commit path: durable when it resolves, and heard by commit listeners. An account
   * with 0 lamports is deleted.
   */
  installAccounts(accounts: StoredAccount[]): Promise<void> {
    return this.pipeline.install(accounts);
  }

  /** Remembers what genesis gives `accounts` (genesis.ts), for `genesisAccountOf`. */
  recordGenesis(accounts: readonly StoredAccount[]): void {
    for (const account of accounts) this.genesisAccounts.set(account.address, account);
  }

  /** The account genesis gave `address` (a venue account or a deferred market account), if any. */
  genesisAccountOf(address: Address): StoredAccount | undefined {
    return this.genesisAccounts.get(address) ?? this.executor.deferredAccounts.account(address);
  }

  /**
   * Why this chain's state is not the writer's now, or null while it holds its lease (see the module
   * comment): `fenced` once another instance took the lease (this process will not get it back:
   * restart it), `unconfirmed` while the lease has gone unrenewed for its TTL.
   */
  unhealthy(): NodeUnhealthyError | null {
    const standing = this.lease.standing();
    if (standing === "held") return null;
    if (standing === "unconfirmed")
      return new NodeUnhealthyError(
        "unconfirmed",
        `Node is unhealthy: this sandbox chain has not renewed its lease for ${this.lease.ttlMs} ms ` +
          "(paused, or cut off from storage) and may no longer be its database's writer; retry shortly",
      );
    return new NodeUnhealthyError(
      "fenced",
      standing === "lost"
        ? "Node is unhealthy: another instance took over this sandbox chain's lease; this instance's " +
            "chain state is stale and it serves none of it: restart it, or use the JSON-RPC of the " +
            "instance that holds the lease"
        : "Node is unhealthy: this sandbox chain is closed",
    );
  }

  /** Calls `listener` when the lease is lost (see `unhealthy`); returns the function that stops it. */
  onUnhealthy(listener: () => void): () => void {
    return this.lease.onLost(() => listener());
  }

  /** Throws `unhealthy()`'s error, if any: reads of state answer only while this is the writer. */
  private current(): void {
    const error = this.unhealthy();
    if (error) throw error;
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
    return this.pipeline.send(wire, options.skipPreflight ?? false, options.signaturesChecked ?? false);
  }

  /** Simulates `wire`; `accounts` names accounts to answer as the simulation left them. */
  async simulateTransaction(
    wire: Uint8Array,
    options: SimulateOptions = {},
    accounts: readonly Address[] = [],
  ): Promise<SandboxSimulation> {
    this.current();
    return this.executor.simulate(wire, options, accounts);
  }

  async getBalance(address: Address): Promise<bigint> {
    this.current();
    const lamports = this.executor.svm.getBalance(decodeAddressParam(address));
    return lamports ?? this.executor.deferredAccounts.account(address)?.lamports ?? 0n;
  }

  /** Genesis accounts of market rails, answered from here until a transaction first names one. */
  get deferredAccounts(): DeferredAccounts {
    return this.executor.deferredAccounts;
  }

  async getAccountInfo(address: Address): Promise<AccountInfo | null> {
    this.current();
    return this.readAccount(address);
  }

  async getMultipleAccounts(addresses: readonly Address[]): Promise<(AccountInfo | null)[]> {
    this.current();
    return addresses.map((address) => this.readAccount(address));
  }

  async getTokenAccount(address: Address): Promise<TokenAccount | null> {
    this.current();
    const account = this.readAccount(address);
    return account ? decodeTokenAccount(address, account.owner, account.data) : null;
  }

  async getTokenAccountBalance(address: Address): Promise<bigint | null> {
    this.current();
    // Only the data is read: a firm quote checks its user's balance on the hot path.
    const account = this.executor.svm.getAccount(decodeAddressParam(address));
    if (!account || account.lamports() === 0n) return null;
    return tokenAccountAmount(addressOf(account.owner()), account.data());
  }

  async getTokenAccountsByOwner(owner: Address, filter: TokenAccountFilter): Promise<TokenAccount[]> {
    this.current();
    return this.tokenAccountsAmong(this.tokenAccounts.ownedBy(owner), filter);
  }

  /** The token accounts `delegate` may spend from (a scan of every token account: no index by delegate). */
  async getTokenAccountsByDelegate(delegate: Address, filter: TokenAccountFilter): Promise<TokenAccount[]> {
    this.current();
    return this.tokenAccountsAmong(this.tokenAccounts.all(), filter, (token) => token.delegate === delegate);
  }

  // The token accounts among `addresses` that match `filter` (and `also`), by address.
  private tokenAccountsAmong(
    addresses: Iterable<Address>,
    filter: TokenAccountFilter,
    also: (token: TokenAccount) => boolean = () => true,
  ): TokenAccount[] {
    const found: TokenAccount[] = [];
    for (const address of addresses) {
      const account = this.readAccount(address);
      const token = account && decodeTokenAccount(address, account.owner, account.data);
      if (!token || !also(token)) continue;
      if ("mint" in filter ? token.mint === filter.mint : token.programId === filter.programId)
        found.push(token);
    }
    return found.sort((a, b) => (a.address < b.address ? -1 : 1));
  }

  /**
   * The addresses of accounts `program` may own, for `getProgramAccounts` (read each with
   * `peekAccount` and check its owner: a transaction executed since the last commit may have moved
   * it): the stored ones and the deferred ones no transaction has written.
   */
  programAccountAddresses(program: Address, dataSize?: number): Iterable<Address> {
    this.current();
    return this.withDeferred(
      this.programAccounts.ownedBy(program),
      this.deferredAccounts.ownedBy(program, dataSize),
    );
  }

  /** The addresses of the token accounts `owner` holds (its token-account index). */
  tokenAccountAddressesOf(owner: Address): Iterable<Address> {
    this.current();
    return this.tokenAccounts.ownedBy(owner);
  }

  /** Every account's address and lamports, stored or deferred, for getSupply and getLargestAccounts. */
  *everyAccountBalance(): Iterable<{ address: Address; lamports: bigint }> {
    this.current();
    const svm = this.executor.svm;
    for (const address of this.programAccounts.all()) {
      yield { address, lamports: svm.getBalance(decodeAddressParam(address)) ?? 0n };
    }
    // One never written is still the pristine account (deferred-accounts.ts): its balance is known.
    for (const address of this.deferredAccounts.all()) {
      if (!this.programAccounts.has(address))
        yield { address, lamports: this.deferredAccounts.lamportsAt(address) };
    }
  }

  // `stored`, then those of `deferred` not among them (a deferred account once written is stored).
  private *withDeferred(stored: Iterable<Address>, deferred: Iterable<Address>): Iterable<Address> {
    yield* stored;
    for (const address of deferred) if (!this.programAccounts.has(address)) yield address;
  }

  async getMint(address: Address): Promise<MintInfo | null> {
    this.current();
    const account = this.readAccount(address);
    return account ? decodeMint(address, account.owner, account.data) : null;
  }

  async getSignatureStatuses(signatures: readonly Signature[]): Promise<(SignatureStatus | null)[]> {
    this.current();
    return this.statuses.lookup(signatures);
  }

  async getTransaction(signature: Signature): Promise<SandboxTransactionRecord | null> {
    const stored = await this.store.getTransaction(signature);
    if (!stored) return null;
    return {
      // The stored row is the one whose signature this is.
      signature,
      slot: stored.slot,
      blockTime: stored.blockTime,
      err: stored.err,
      fee: stored.fee,
      computeUnitsConsumed: stored.computeUnits,
      logs: stored.logs,
      preBalances: stored.preBalances,
      postBalances: stored.postBalances,
      wire: stored.wire,
      meta: stored.meta ?? emptyMetaExtras(),
    };
  }

  async getMinimumBalanceForRentExemption(space: number): Promise<bigint> {
    return this.executor.svm.minimumBalanceForRentExemption(BigInt(space));
  }

  async getRecentPrioritizationFees(): Promise<SlotPrioritizationFees[]> {
    return this.prioritizationFees.recent(this.slots.slot());
  }

  /** Solana's getRecentPrioritizationFees with its accounts filter, oldest slot first (for the JSON-RPC). */
  prioritizationFeesFor(accounts: readonly Address[]): SlotPrioritizationFee[] {
    this.current();
    return this.prioritizationFees.forAccounts(this.slots.slot(), accounts);
  }

  async requestAirdrop(address: Address, lamports: bigint): Promise<Signature> {
    if (!this.airdropBuilder) throw new ChainError(RPC_ERROR.internalError, "airdrops are not available");
    decodeAddressParam(address);
    if (lamports <= 0n) throw ChainError.invalidParams("airdrop amount must be positive");
    const wire = await this.airdropBuilder(address, lamports, await this.getLatestBlockhash());
    return this.sendTransaction(wire);
  }

  /** The token accounts held by any owner, for invariant checks: address → decoded account. */
  allTokenAccounts(): TokenAccount[] {
    const found: TokenAccount[] = [];
    for (const address of this.tokenAccounts.all()) {
      const account = this.readAccount(address);
      const token = account && decodeTokenAccount(address, account.owner, account.data);
      if (token) found.push(token);
    }
    return found;
  }

  /** Moves chain time forward to `instantMs` (an instant already passed changes nothing); a pause holds. */
  travelTo(instantMs: number): Promise<void> {
    return this.changeClock(() => this.slots.shiftTo(instantMs));
  }

  /** Freezes chain time: no slot passes, no blockhash expires, until `resumeClock`. */
  pauseClock(): Promise<void> {
    // Frozen at once: the instant it is frozen at must not pass while the pause is being stored.
    return this.changeClock(() => this.slots.pausedShift(), "before storing");
  }

  /** Lets chain time run on from where it was paused. */
  resumeClock(): Promise<void> {
    return this.changeClock(() => this.slots.runningShift());
  }

  // Stores the shift `next` computes (from the clock as it is once earlier changes are done) and puts
  // it in force, after storing it unless told `before storing`; only the lease holder may. A failed
  // store leaves the clock as it was, and time never goes back either way: a travel's shift keeps
  // its target ahead while it is stored, and a pause undone lets the frozen clock run on.
  private changeClock(next: () => ClockShift, apply: "after storing" | "before storing" = "after storing") {
    const change = this.clockChange.then(async () => {
      this.current();
      const previous = this.slots.currentShift();
      const shift = next();
      if (apply === "before storing") this.slots.apply(shift);
      try {
        await this.store.saveClockShift(shift);
      } catch (error) {
        this.slots.apply(previous);
        throw error;
      }
      this.slots.apply(shift);
    });
    this.clockChange = change.catch(() => undefined);
    return change;
  }

  /** Stops taking sends, waits for those already queued to be answered, and releases the lease. */
  async close(): Promise<void> {
    await this.pipeline.close();
    await this.store.close();
    await this.lease.release();
  }

  /** An account as LiteSVM holds it now, read synchronously (for the RPC server's encoders). */
  peekAccount(address: Address): AccountInfo | null {
    this.current();
    return this.readAccount(address);
  }

  /** How many transactions have landed since genesis. */
  transactionCount(): number {
    this.current();
    return this.pipeline.landedCount;
  }

  private readAccount(address: Address): AccountInfo | null {
    const account = this.executor.svm.getAccount(decodeAddressParam(address));
    if (!account) {
      const deferred = this.executor.deferredAccounts.account(address);
      if (!deferred) return null;
      const { lamports, owner, data, executable } = deferred;
      return { lamports, owner, data, executable };
    }
    const lamports = account.lamports();
    if (lamports === 0n) return null;
    return {
      lamports,
      owner: addressOf(account.owner()),
      data: account.data(),
      executable: account.executable(),
    };
  }
}

// The SQLite file behind `storage`, if it is one on disk (a second connection can then write it).
function sqliteFileOf(storage: SandboxChainOptions["storage"]): string | undefined {
  if (storage.dialect !== "sqlite" || !storage.location) return undefined;
  return fs.existsSync(storage.location) ? storage.location : undefined;
}
