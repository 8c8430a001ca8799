/**
 * Checks transactions' Ed25519 signatures on a worker thread. The sandbox executes every
 * transaction on the main thread, one after another, and the signature check is most of that work
 * (~40 of ~45 µs for a token transfer here), so moving it beside the main thread lets the node's
 * throughput approach LiteSVM's own. The worker checks with LiteSVM itself (node:crypto takes about
 * twice as long per signature): it simulates the transaction on an empty LiteSVM, which checks the
 * signatures first and, when they hold, stops at the fee payer it does not have.
 *
 * Only those two outcomes are taken as verdicts; anything else (a transaction using a
 * signature-verifying precompile, any other outcome, a busy or failed worker) stays "unchecked" and
 * the main thread's LiteSVM checks it exactly as it did before this worker existed. Only parsed
 * transactions are taken: LiteSVM aborts the whole process on bytes it cannot deserialize.
 *
 * The worker is plain JavaScript evaluated from a string (as the SQLite writer is), so that it runs
 * the same under tsx, vitest and the compiled build.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { decodeAddressBytes } from "../base58.js";
import { TRANSACTION_ERROR_NAMES } from "../errors.js";
import type { WireTransaction } from "../wire.js";

/** What the worker found: every signature valid, one invalid, or not checked (left to LiteSVM). */
export type SignatureVerdict = "valid" | "invalid" | "unchecked";

const VERDICTS: readonly SignatureVerdict[] = ["valid", "invalid", "unchecked"];

// Programs whose instructions verify further signatures; LiteSVM may check those with the
// transaction's signatures, so such transactions are always left to the main thread.
const PRECOMPILES = [
  "Ed25519SigVerify111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Secp256r1SigVerify1111111111111111111111111",
].map((address) => Buffer.from(decodeAddressBytes(address)));

/** Whether `tx` names a precompile, whose signature checks LiteSVM runs only with its own signature pass. */
export function usesPrecompile(tx: WireTransaction): boolean {
  return tx.accountKeys.some((key) => PRECOMPILES.some((precompile) => precompile.equals(key)));
}

// Runs in the worker. A request is one buffer holding many wire transactions back to back, with
// their end offsets; the answer holds one verdict index per transaction.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { LiteSvm, FailedTransactionMetadata } = require(workerData.litesvm);
const svm = new LiteSvm();
svm.setSigverify(true);
svm.setBlockhashCheck(false);
svm.setTransactionHistory(0n);
function verdict(wire) {
  const version = wire[1 + 64 * wire[0]];
  const result = version & 0x80 ? svm.simulateVersionedTransaction(wire) : svm.simulateLegacyTransaction(wire);
  if (!(result instanceof FailedTransactionMetadata)) return 2;
  const err = result.err();
  if (err === workerData.accountNotFound) return 0;
  if (err === workerData.signatureFailure) return 1;
  return 2;
}
parentPort.on("message", ({ id, buffer, ends }) => {
  const all = Buffer.from(buffer);
  const verdicts = new Uint8Array(ends.length);
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    let found = 2;
    try { found = verdict(all.subarray(start, ends[i])); } catch {}
    verdicts[i] = found;
    start = ends[i];
  }
  parentPort.postMessage({ id, verdicts }, [verdicts.buffer]);
});
`;

/** Transactions that fill a message to the worker; fewer wait until the caller flushes. */
const FLUSH_AT = 16;

/**
 * Signatures the worker always takes waiting (~10 ms of its work at ~40 µs each). Beyond them it
 * takes a transaction only while fewer wait than sends are queued ahead of it: those execute on
 * the main thread meanwhile, so its verdict comes no later than its turn, and under a deep queue
 * the checks split between the two threads instead of falling to the main thread alone.
 */
const ALWAYS_TAKEN_SIGNATURES = 256;

interface Waiting {
  settle(verdict: SignatureVerdict): void;
  signatures: number;
}

/** Verifies transactions' signatures off the main thread (see the module comment). */
export class SignatureVerifier {
  // Started by the first transaction, not with the chain: its isolate and LiteSVM (~15 MB, and CPU
  // that competed with the venue's start-up) are spent only by a venue that is sent transactions.
  private worker: Worker | undefined;
  private readonly sent = new Map<number, Waiting[]>();
  private batch: { wire: Uint8Array; waiting: Waiting }[] = [];
  private nextId = 0;
  private waitingSignatures = 0;
  private stopped = false;

  private startWorker(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        litesvm: createRequire(import.meta.url).resolve("litesvm/dist/internal.js"),
        accountNotFound: TRANSACTION_ERROR_NAMES.indexOf("AccountNotFound"),
        signatureFailure: TRANSACTION_ERROR_NAMES.indexOf("SignatureFailure"),
      },
    });
    worker.unref();
    worker.on("message", ({ id, verdicts }: { id: number; verdicts: Uint8Array }) => {
      const waiting = this.sent.get(id);
      if (!waiting) return;
      this.sent.delete(id);
      if (this.sent.size === 0) worker.unref();
      waiting.forEach((one, i) => {
        this.settle(one, VERDICTS[verdicts[i] ?? 2] ?? "unchecked");
      });
    });
    const stop = () => {
      // Whatever was sent is left to the main thread's LiteSVM; nothing more is sent.
      this.stopped = true;
      for (const waiting of this.sent.values()) for (const one of waiting) this.settle(one, "unchecked");
      this.sent.clear();
    };
    worker.on("error", stop);
    worker.on("exit", stop);
    return worker;
  }

  /**
   * Takes the signatures of `wire` (already parsed as `tx`) to check, and calls `settle` with the
   * verdict later; false when it does not take them and the main thread's LiteSVM should check them
   * (the worker is busy, or the transaction uses a precompile). `queuedAhead`: the sends the main
   * thread executes before this one. A callback, not a promise: every send passes here.
   */
  verify(
    wire: Uint8Array,
    tx: WireTransaction,
    queuedAhead: number,
    settle: (verdict: SignatureVerdict) => void,
  ): boolean {
    const signatures = tx.signatures.length;
    const takes = Math.max(ALWAYS_TAKEN_SIGNATURES, queuedAhead);
    if (this.stopped || this.waitingSignatures + signatures > takes || usesPrecompile(tx)) return false;
    this.waitingSignatures += signatures;
    this.batch.push({ wire, waiting: { settle, signatures } });
    if (this.batch.length >= FLUSH_AT) this.flush();
    return true;
  }

  /** Stops the worker; verdicts still outstanding become "unchecked". */
  async close(): Promise<void> {
    this.stopped = true;
    this.flush();
    await this.worker?.terminate();
  }

  /**
   * Sends the transactions collected so far to the worker. Each message wakes the worker thread,
   * which costs the sender far more than the copy (tens of µs in a VM), so transactions travel in
   * groups: a full group at once, the rest when the caller has nothing else to do.
   */
  flush(): void {
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    if (this.stopped) {
      for (const { waiting } of batch) this.settle(waiting, "unchecked");
      return;
    }
    let size = 0;
    for (const { wire } of batch) size += wire.length;
    const buffer = new Uint8Array(size);
    const ends = new Uint32Array(batch.length);
    let offset = 0;
    batch.forEach(({ wire }, i) => {
      buffer.set(wire, offset);
      offset += wire.length;
      ends[i] = offset;
    });
    const id = this.nextId++;
    this.sent.set(
      id,
      batch.map(({ waiting }) => waiting),
    );
    this.worker ??= this.startWorker();
    if (this.sent.size === 1) this.worker.ref();
    this.worker.postMessage({ id, buffer: buffer.buffer, ends }, [buffer.buffer, ends.buffer]);
  }

  private settle(waiting: Waiting, verdict: SignatureVerdict): void {
    this.waitingSignatures -= waiting.signatures;
    waiting.settle(verdict);
  }
}
