/**
 * The history methods of the sandbox's JSON-RPC, answered as Agave's rpc.rs answers them from its
 * blockstore: getSignaturesForAddress (chain_address_transactions, chain-history.ts), getBlock,
 * getBlocks, getBlocksWithLimit and getBlockTime. The sandbox makes one block per 400 ms slot and
 * skips none (slot-clock.ts): every slot from genesis to the current one is a block, with or without
 * transactions, its blockhash derived as the chain derives it. Slots ahead of the chain are -32004,
 * as a node answers for a block it does not have yet. Block transactions are encoded by the
 * chain's own getTransaction, so both answer any transaction alike.
 */
import { encodeBase58 } from "../base58.js";
import { ChainError, RPC_ERROR } from "../errors.js";
import { parseWireTransaction, type WireTransaction } from "../wire.js";
import type { AddressHistoryEntry, ChainPosition } from "./chain-history.js";
import {
  addressArg,
  assertConfirmedCommitment,
  assertMinContextSlot,
  configArg,
  countArg,
  type HistoryConfig,
  signatureArg,
  slotArg,
} from "./rpc-history-params.js";
import { createScheduleMethods } from "./rpc-schedule.js";
import type { SandboxChain } from "./sandbox-chain.js";

type Method = (params: unknown[]) => Promise<unknown>;

/** What the history methods take from the method table (rpc-methods.ts) that registers them. */
export interface HistoryMethodDependencies {
  /** The table's getTransaction, through which block transactions are encoded. */
  getTransaction: Method;
  /** Wraps a value as `{context: {slot, apiVersion}, value}`, as the table's other methods do. */
  withContext(value: unknown): Promise<unknown>;
}

/** Agave's MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT: the default and the most per page. */
export const MAX_SIGNATURES_PER_PAGE = 1000;
/** Agave's MAX_GET_CONFIRMED_BLOCKS_RANGE: the widest getBlocks range and getBlocksWithLimit limit. */
export const MAX_BLOCKS_RANGE = 500_000n;
/** The first slot this node has a block for: it keeps every slot since genesis. */
export const FIRST_AVAILABLE_SLOT = 0n;

const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);
const TRANSACTION_DETAILS = new Set(["full", "accounts", "signatures", "none"]);
const BLOCK_ENCODINGS = new Set(["json", "jsonParsed", "base58", "base64"]);
// The previous blockhash of the genesis block, which has no parent: Agave's Hash::default().
const NO_PARENT_BLOCKHASH = "11111111111111111111111111111111";

/** The history, block and schedule methods over `chain`. */
export function createHistoryMethods(
  chain: SandboxChain,
  table: HistoryMethodDependencies,
): Record<string, Method> {
  const blocks = new BlockReader(chain, table.getTransaction);
  return {
    getSignaturesForAddress: (params) => signaturesForAddress(chain, params),
    getBlock: (params) => blocks.block(params),
    getBlocks: (params) => blocks.range(params),
    getBlocksWithLimit: (params) => blocks.withLimit(params),
    getBlockTime: (params) => blocks.time(params),
    ...createScheduleMethods(chain, table.withContext),
  };
}

// getSignaturesForAddress: newest first, paged by `before` and `until` (both exclusive). A `before`
// that never landed gives an empty page and an `until` that never landed no lower bound, as in
// Agave's blockstore.
async function signaturesForAddress(chain: SandboxChain, params: unknown[]) {
  const address = addressArg(params[0], "address");
  const config = configArg(params[1]);
  assertConfirmedCommitment(config);
  const limit = countArg(config.limit, "limit", MAX_SIGNATURES_PER_PAGE);
  if (limit === 0 || limit > MAX_SIGNATURES_PER_PAGE) {
    throw ChainError.invalidParams(`Invalid limit; max ${MAX_SIGNATURES_PER_PAGE}`);
  }
  const before = await cursorOf(chain, config.before, "before");
  const until = await cursorOf(chain, config.until, "until");
  await assertMinContextSlot(chain, config);
  if (before === null) return [];
  const entries = await chain.history.forAddress(address, {
    before: before ?? undefined,
    until: until ?? undefined,
    limit,
  });
  return entries.map(signatureInfo);
}

// Where a `before`/`until` signature sits: undefined when not given, null when it never landed.
async function cursorOf(
  chain: SandboxChain,
  value: unknown,
  name: string,
): Promise<ChainPosition | null | undefined> {
  if (value === undefined || value === null) return undefined;
  return chain.history.positionOf(signatureArg(value, name));
}

function signatureInfo(entry: AddressHistoryEntry) {
  return {
    signature: entry.signature,
    slot: Number(entry.slot),
    err: entry.err,
    memo: memoOf(parseWireTransaction(entry.wire)),
    blockTime: entry.blockTime,
    confirmationStatus: "finalized",
  };
}

/** The SPL Memo instructions' texts as Agave formats them: "[byte length] text", joined by "; ". */
export function memoOf(tx: WireTransaction): string | null {
  const memos: string[] = [];
  for (const instruction of tx.instructions) {
    const program = tx.accountKeys[instruction.programIdIndex];
    if (!program || !MEMO_PROGRAMS.has(encodeBase58(program))) continue;
    memos.push(`[${instruction.data.length}] ${utf8OrUnparseable(instruction.data)}`);
  }
  return memos.length === 0 ? null : memos.join("; ");
}

function utf8OrUnparseable(data: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    return "(unparseable)";
  }
}

interface BlockOptions {
  encoding: string;
  details: string;
  rewards: boolean;
  maxSupportedTransactionVersion: unknown;
}

// getBlock and the block lists (see the module comment).
class BlockReader {
  constructor(
    private readonly chain: SandboxChain,
    private readonly getTransaction: Method,
  ) {}

  async block(params: unknown[]) {
    const slot = slotArg(params, 0, "slot");
    const options = blockOptionsOf(params[1]);
    await this.assertBlockAvailable(slot);
    const slots = this.chain.slots;
    const block: Record<string, unknown> = {
      blockHeight: Number(slot),
      blockTime: slots.blockTime(slot),
      blockhash: slots.blockhashOf(slot),
      parentSlot: Number(slot > 0n ? slot - 1n : 0n),
      previousBlockhash: slot > 0n ? slots.blockhashOf(slot - 1n) : NO_PARENT_BLOCKHASH,
    };
    if (options.details !== "none") {
      const signatures = await this.chain.history.signaturesInSlot(slot);
      if (options.details === "signatures") block.signatures = signatures;
      else block.transactions = await this.blockTransactions(signatures, options);
    }
    // The sandbox pays no rewards: none to list, where a node lists the block's.
    if (options.rewards) block.rewards = [];
    return block;
  }

  async range(params: unknown[]) {
    const start = slotArg(params, 0, "start slot");
    const endGiven = typeof params[1] === "number" ? slotArg(params, 1, "end slot") : undefined;
    assertConfirmedCommitment(configArg(typeof params[1] === "object" ? params[1] : params[2]));
    const highest = await this.chain.getSlot();
    const end = minOf(endGiven ?? start + MAX_BLOCKS_RANGE, highest);
    if (end < start) return [];
    if (end - start > MAX_BLOCKS_RANGE) {
      throw ChainError.invalidParams(`Slot range too large; max ${MAX_BLOCKS_RANGE}`);
    }
    return slotsBetween(maxOf(start, FIRST_AVAILABLE_SLOT), end);
  }

  async withLimit(params: unknown[]) {
    const start = slotArg(params, 0, "start slot");
    const limit = slotArg(params, 1, "limit");
    assertConfirmedCommitment(configArg(params[2]));
    if (limit > MAX_BLOCKS_RANGE) throw ChainError.invalidParams(`Limit too large; max ${MAX_BLOCKS_RANGE}`);
    if (limit === 0n) return [];
    const first = maxOf(start, FIRST_AVAILABLE_SLOT);
    return slotsBetween(first, minOf(first + limit - 1n, await this.chain.getSlot()));
  }

  async time(params: unknown[]) {
    const slot = slotArg(params, 0, "slot");
    await this.assertBlockAvailable(slot);
    return this.chain.slots.blockTime(slot);
  }

  // Agave's errors for a block it cannot answer: not produced yet (-32004).
  private async assertBlockAvailable(slot: bigint): Promise<void> {
    if (slot > (await this.chain.getSlot())) {
      throw new ChainError(RPC_ERROR.blockNotAvailable, `Block not available for slot ${slot}`);
    }
  }

  // Each transaction as getTransaction encodes it, in the block's shape: `full` keeps it whole,
  // `accounts` keeps its signatures, account keys and balances.
  private async blockTransactions(signatures: string[], options: BlockOptions) {
    const config = {
      encoding: options.details === "accounts" ? "json" : options.encoding,
      maxSupportedTransactionVersion: options.maxSupportedTransactionVersion,
    };
    const entries: unknown[] = [];
    for (const signature of signatures) {
      const found = (await this.getTransaction([signature, config])) as EncodedTransaction | null;
      if (!found) continue;
      entries.push(blockEntry(found, options));
    }
    return entries;
  }
}

/** getTransaction's answer, as far as a block entry reads it. */
interface EncodedTransaction {
  transaction: unknown;
  meta: Record<string, unknown>;
  version: "legacy" | 0;
}

function blockEntry(found: EncodedTransaction, options: BlockOptions) {
  const meta = options.details === "accounts" ? accountsMeta(found.meta) : { ...found.meta };
  if (!options.rewards) delete meta.rewards;
  const transaction =
    options.details === "accounts" ? accountsTransaction(found.transaction, found.meta) : found.transaction;
  const entry: Record<string, unknown> = { transaction, meta };
  // Agave reports a version only to clients that said which they support.
  if (options.maxSupportedTransactionVersion !== undefined) entry.version = found.version;
  return entry;
}

// The meta of `transactionDetails: "accounts"`: Agave's build_simple_ui_transaction_status_meta.
function accountsMeta(meta: Record<string, unknown>): Record<string, unknown> {
  const kept = [
    "err",
    "status",
    "fee",
    "preBalances",
    "postBalances",
    "preTokenBalances",
    "postTokenBalances",
  ];
  const simple: Record<string, unknown> = {};
  for (const key of [...kept, "rewards"]) if (key in meta) simple[key] = meta[key];
  return simple;
}

interface JsonMessage {
  accountKeys: string[];
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
}

// The transaction of `transactionDetails: "accounts"`: its signatures and every account key with
// its role, the loaded ones last, as Agave's build_json_accounts lists them.
function accountsTransaction(transaction: unknown, meta: Record<string, unknown>) {
  const { signatures, message } = transaction as { signatures: string[]; message: JsonMessage };
  const { header, accountKeys } = message;
  const staticKeys = accountKeys.map((pubkey, i) => {
    const signer = i < header.numRequiredSignatures;
    const writable = signer
      ? i < header.numRequiredSignatures - header.numReadonlySignedAccounts
      : i < accountKeys.length - header.numReadonlyUnsignedAccounts;
    return { pubkey, writable, signer, source: "transaction" };
  });
  const loaded = (meta.loadedAddresses ?? { writable: [], readonly: [] }) as {
    writable: string[];
    readonly: string[];
  };
  const lookedUp = [
    ...loaded.writable.map((pubkey) => ({ pubkey, writable: true, signer: false, source: "lookupTable" })),
    ...loaded.readonly.map((pubkey) => ({ pubkey, writable: false, signer: false, source: "lookupTable" })),
  ];
  return { signatures, accountKeys: [...staticKeys, ...lookedUp] };
}

// getBlock's second param: a bare encoding (the old form) or a config, checked as Agave checks it.
function blockOptionsOf(value: unknown): BlockOptions {
  const config: HistoryConfig = typeof value === "string" ? { encoding: value } : configArg(value);
  assertConfirmedCommitment(config);
  const encoding = config.encoding ?? "json";
  if (typeof encoding !== "string" || !BLOCK_ENCODINGS.has(encoding)) {
    throw ChainError.invalidParams("Invalid params: unknown encoding");
  }
  const details = config.transactionDetails ?? "full";
  if (typeof details !== "string" || !TRANSACTION_DETAILS.has(details)) {
    throw ChainError.invalidParams("Invalid params: unknown transactionDetails");
  }
  const rewards = config.rewards ?? true;
  if (typeof rewards !== "boolean")
    throw ChainError.invalidParams("Invalid params: rewards must be a boolean");
  const max = config.maxSupportedTransactionVersion;
  if (max !== undefined && max !== null) countArg(max, "maxSupportedTransactionVersion", 0);
  return { encoding, details, rewards, maxSupportedTransactionVersion: max ?? undefined };
}

function slotsBetween(first: bigint, last: bigint): number[] {
  const slots: number[] = [];
  for (let slot = first; slot <= last; slot++) slots.push(Number(slot));
  return slots;
}

function minOf(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
