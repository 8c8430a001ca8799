/**
 * The sandbox chain's status cache: every transaction executed (committed or still on its way to
 * storage) within the replay window, by signature and by message hash, as Agave's. It refuses
 * replays, which LiteSVM would only catch among its last few dozen signatures; the message hash
 * refuses a re-signed copy too, which carries a new signature (Ed25519 signatures are not unique) and
 * would otherwise execute a venue-signed quote again. It answers status queries without a storage
 * read; older statuses are read from storage.
 */
import type { Signature } from "@solana/kit";
import type { SignatureStatus } from "../chain.js";
import type { TransactionError } from "../errors.js";
import type { ChainStore } from "./chain-store.js";
import type { CommittedStatus, StoredTransaction } from "./commit-batch.js";
import { BLOCKHASH_VALIDITY_BLOCKS } from "./slot-clock.js";

const VALIDITY_SLOTS = BigInt(BLOCKHASH_VALIDITY_BLOCKS);
// Signatures are remembered for longer than any blockhash stays valid; older ones can only be
// replayed with an expired blockhash, which the blockhash check refuses anyway.
const REPLAY_MEMORY_SLOTS = 2n * VALIDITY_SLOTS;

interface Status {
  slot: bigint;
  err: TransactionError | null;
  /** False while the transaction has executed but its commit has not finished. */
  committed: boolean;
}

/** Recent signatures and their outcomes (see the module comment). */
export class SignatureStatuses {
  private readonly statuses = new Map<string, Status>();
  /** The slot each recent message hash executed in. */
  private readonly messages = new Map<string, bigint>();
  private lastPrunedSlot = 0n;

  constructor(private readonly store: Pick<ChainStore, "getStatuses">) {}

  /** The first slot whose signatures must be remembered at `slot`: what to load from storage. */
  static rememberedFrom(slot: bigint): bigint {
    return slot > REPLAY_MEMORY_SLOTS ? slot - REPLAY_MEMORY_SLOTS : 0n;
  }

  /** Forgets everything but `committed` (as loaded from storage when the state is rebuilt). */
  replace(committed: readonly CommittedStatus[]): void {
    this.statuses.clear();
    this.messages.clear();
    for (const status of committed) {
      this.statuses.set(status.signature, { slot: status.slot, err: status.err, committed: true });
      this.messages.set(status.messageHash, status.slot);
    }
  }

  /** Whether `signature` has executed within the replay window: sending it again is a replay. */
  has(signature: string): boolean {
    return this.statuses.has(signature);
  }

  /**
   * Whether the message hashed `messageHash` has executed within the replay window, under any
   * signature: sending it again, re-signed, is a replay too.
   */
  hasMessage(messageHash: string): boolean {
    return this.messages.has(messageHash);
  }

  /** Remembers a transaction that has executed and awaits its commit. */
  executed(signature: string, messageHash: string, slot: bigint, err: TransactionError | null): void {
    this.statuses.set(signature, { slot, err, committed: false });
    this.messages.set(messageHash, slot);
  }

  /** Marks the transactions of a finished commit as committed. */
  committed(transactions: readonly StoredTransaction[]): void {
    for (const tx of transactions) {
      const status = this.statuses.get(tx.signature);
      if (status) status.committed = true;
      else this.statuses.set(tx.signature, { slot: tx.slot, err: tx.err, committed: true });
    }
  }

  /** Forgets committed signatures past the replay window (a full walk, so once per validity window). */
  prune(slot: bigint): void {
    if (slot - this.lastPrunedSlot <= VALIDITY_SLOTS) return;
    this.lastPrunedSlot = slot;
    for (const [signature, status] of this.statuses) {
      if (status.committed && slot - status.slot > REPLAY_MEMORY_SLOTS) this.statuses.delete(signature);
    }
    // An uncommitted message is younger than the window: a failed commit reloads them all anyway.
    for (const [hash, executedIn] of this.messages) {
      if (slot - executedIn > REPLAY_MEMORY_SLOTS) this.messages.delete(hash);
    }
  }

  /** The status of each of `signatures`: committed ones from memory, the rest from storage. */
  async lookup(signatures: readonly Signature[]): Promise<(SignatureStatus | null)[]> {
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
}
