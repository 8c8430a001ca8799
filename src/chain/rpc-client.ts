/**
 * The chain interface over a Solana JSON-RPC endpoint (a real cluster via `SOLANA_RPC_URL`, or our
 * own sandbox's :8899), through kit's RPC. Node errors keep their JSON-RPC code and Solana's
 * `TransactionError` JSON, so callers see the same `ChainError`s the embedded sandbox throws.
 */
import {
  type Address,
  type Base64EncodedWireTransaction,
  type Blockhash,
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  lamports,
  type RpcTransport,
  type Signature,
} from "@solana/kit";
import { encodeBlockhash } from "./base58.js";
import type {
  AccountInfo,
  Chain,
  Commitment,
  LatestBlockhash,
  MintInfo,
  SendOptions,
  SignatureStatus,
  SimulateOptions,
  SimulationResult,
  SlotPrioritizationFees,
  TokenAccount,
  TokenAccountFilter,
  TransactionRecord,
} from "./chain.js";
import {
  ChainError,
  RPC_ERROR,
  sendFailureOf,
  type TransactionError,
  TransactionOutcomeUnknown,
} from "./errors.js";
import { decodeMint, decodeTokenAccount, tokenAccountAmount } from "./token-layout.js";
import { parseWireTransaction, transactionId, type WireTransaction } from "./wire.js";

// Limits a node enforces per call (getMultipleAccounts, getSignatureStatuses).
const MAX_ACCOUNTS_PER_CALL = 100;
const MAX_SIGNATURES_PER_CALL = 256;
const COMMITMENT_RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

export interface RpcChainOptions {
  /** The node's JSON-RPC URL, e.g. `https://api.devnet.solana.com` or `http://127.0.0.1:8899`. */
  url: string;
  /** The commitment reads use and `sendTransaction` waits for (default `confirmed`). */
  commitment?: Commitment;
  /** How often `sendTransaction` polls for its signature's status (default 400 ms, one slot). */
  pollIntervalMs?: number;
  /** Sent as `x-api-key` on every call: another Oddsgate instance's chain wants one in production. */
  apiKey?: string;
}

type RawAccount = {
  lamports: bigint;
  owner: Address;
  executable: boolean;
  data: readonly [string, string];
} | null;

// kit parses every number in a response as a bigint; Solana's error JSON is read with plain numbers.
function withNumbers(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(withNumbers);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withNumbers(inner)]));
  }
  return value;
}

function transactionErrorOf(value: unknown): TransactionError | null {
  return value === null || value === undefined ? null : (withNumbers(value) as TransactionError);
}

/** The ChainError for a JSON-RPC error object, keeping a failed preflight's transaction error and logs. */
export function chainErrorFromJsonRpc(error: {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}): ChainError {
  const code = Number(error.code ?? RPC_ERROR.internalError);
  const message = String(error.message ?? "JSON-RPC error");
  const data = (error.data ?? {}) as { err?: unknown; logs?: unknown; unitsConsumed?: unknown };
  if (code === RPC_ERROR.sendTransactionPreflightFailure) {
    const logs = Array.isArray(data.logs) ? data.logs.map(String) : [];
    const units =
      typeof data.unitsConsumed === "bigint" ? data.unitsConsumed : BigInt(Number(data.unitsConsumed ?? 0));
    return new ChainError(code, message, transactionErrorOf(data.err), logs, units);
  }
  if (code === RPC_ERROR.transactionSignatureVerificationFailure) {
    return new ChainError(code, message, "SignatureFailure");
  }
  return new ChainError(code, message);
}

// kit's transport, but a JSON-RPC error becomes our ChainError before kit reshapes it, and a
// transport failure (refused connection, HTTP 5xx) becomes a ChainError too.
function chainErrorTransport(url: string, apiKey: string | undefined): RpcTransport {
  const base = createDefaultRpcTransport({ url, ...(apiKey ? { headers: { "x-api-key": apiKey } } : {}) });
  return (async (config: Parameters<RpcTransport>[0]) => {
    let response: unknown;
    try {
      response = await base(config);
    } catch (error) {
      throw new ChainError(RPC_ERROR.internalError, `Solana RPC ${url} failed: ${(error as Error).message}`);
    }
    const error = (response as { error?: { code?: unknown; message?: unknown; data?: unknown } } | null)
      ?.error;
    if (error) throw chainErrorFromJsonRpc(error);
    return response;
  }) as RpcTransport;
}

function decodeRawAccount(account: RawAccount): AccountInfo | null {
  if (account === null) return null;
  return {
    lamports: account.lamports,
    owner: account.owner,
    executable: account.executable,
    data: new Uint8Array(Buffer.from(account.data[0], "base64")),
  };
}

function base64Of(wire: Uint8Array): Base64EncodedWireTransaction {
  return Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength).toString(
    "base64",
  ) as Base64EncodedWireTransaction;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** A `Chain` served by a Solana JSON-RPC node. */
export class RpcChain implements Chain {
  private readonly rpc;
  private readonly commitment: Commitment;
  private readonly pollIntervalMs: number;

  constructor(options: RpcChainOptions) {
    this.rpc = createSolanaRpcFromTransport(chainErrorTransport(options.url, options.apiKey));
    this.commitment = options.commitment ?? "confirmed";
    this.pollIntervalMs = options.pollIntervalMs ?? 400;
  }

  async getLatestBlockhash(): Promise<LatestBlockhash> {
    const { value } = await this.rpc.getLatestBlockhash({ commitment: this.commitment }).send();
    return { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight };
  }

  async isBlockhashValid(blockhash: Blockhash): Promise<boolean> {
    return (await this.rpc.isBlockhashValid(blockhash, { commitment: this.commitment }).send()).value;
  }

  async getBlockHeight(): Promise<bigint> {
    return this.rpc.getBlockHeight({ commitment: this.commitment }).send();
  }

  async getSlot(): Promise<bigint> {
    return this.rpc.getSlot({ commitment: this.commitment }).send();
  }

  /**
   * Sends, then waits until the signature reaches this client's commitment or its blockhash expires.
   * Rejects with the node's ChainError when it refused the transaction, and with
   * TransactionOutcomeUnknown when it may have landed (the node unreachable, no answer, an internal error).
   */
  async sendTransaction(wire: Uint8Array, options: SendOptions = {}): Promise<Signature> {
    const tx = parseWireTransaction(wire);
    try {
      return await this.sendAndWait(wire, tx, options);
    } catch (error) {
      if (sendFailureOf(error) !== "unknown") throw error;
      throw new TransactionOutcomeUnknown(
        `the outcome of transaction ${transactionId(tx)} is not known: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  private async sendAndWait(wire: Uint8Array, tx: WireTransaction, options: SendOptions): Promise<Signature> {
    const signature = await this.rpc
      .sendTransaction(base64Of(wire), {
        encoding: "base64",
        skipPreflight: options.skipPreflight ?? false,
        preflightCommitment: this.commitment,
      })
      .send();
    if (signature !== transactionId(tx)) {
      throw new ChainError(
        RPC_ERROR.internalError,
        `node answered signature ${signature} for another transaction`,
      );
    }
    await this.waitForLanding(signature, encodeBlockhash(tx.recentBlockhash));
    return signature;
  }

  async simulateTransaction(wire: Uint8Array, options: SimulateOptions = {}): Promise<SimulationResult> {
    // A node refuses sigVerify together with replaceRecentBlockhash, and kit's types say so.
    const check = options.sigVerify
      ? { sigVerify: true as const }
      : { replaceRecentBlockhash: options.replaceRecentBlockhash ?? false };
    const { value } = await this.rpc
      .simulateTransaction(base64Of(wire), { encoding: "base64", commitment: this.commitment, ...check })
      .send();
    return {
      err: transactionErrorOf(value.err),
      logs: [...(value.logs ?? [])],
      unitsConsumed: value.unitsConsumed ?? 0n,
    };
  }

  async getBalance(address: Address): Promise<bigint> {
    return (await this.rpc.getBalance(address, { commitment: this.commitment }).send()).value;
  }

  async getAccountInfo(address: Address): Promise<AccountInfo | null> {
    const { value } = await this.rpc
      .getAccountInfo(address, { encoding: "base64", commitment: this.commitment })
      .send();
    return decodeRawAccount(value);
  }

  async getMultipleAccounts(addresses: readonly Address[]): Promise<(AccountInfo | null)[]> {
    const found: (AccountInfo | null)[] = [];
    for (const group of chunks(addresses, MAX_ACCOUNTS_PER_CALL)) {
      const { value } = await this.rpc
        .getMultipleAccounts(group, { encoding: "base64", commitment: this.commitment })
        .send();
      for (const account of value) found.push(decodeRawAccount(account));
    }
    return found;
  }

  async getTokenAccount(address: Address): Promise<TokenAccount | null> {
    const account = await this.getAccountInfo(address);
    return account ? decodeTokenAccount(address, account.owner, account.data) : null;
  }

  async getTokenAccountBalance(address: Address): Promise<bigint | null> {
    const account = await this.getAccountInfo(address);
    return account ? tokenAccountAmount(account.owner, account.data) : null;
  }

  async getTokenAccountsByOwner(owner: Address, filter: TokenAccountFilter): Promise<TokenAccount[]> {
    const { value } = await this.rpc
      .getTokenAccountsByOwner(owner, filter, { encoding: "base64", commitment: this.commitment })
      .send();
    const found: TokenAccount[] = [];
    for (const { pubkey, account } of value) {
      const decoded = decodeRawAccount(account);
      const token = decoded && decodeTokenAccount(pubkey, decoded.owner, decoded.data);
      if (token) found.push(token);
    }
    return found.sort((a, b) => (a.address < b.address ? -1 : 1));
  }

  async getMint(address: Address): Promise<MintInfo | null> {
    const account = await this.getAccountInfo(address);
    return account ? decodeMint(address, account.owner, account.data) : null;
  }

  async getSignatureStatuses(signatures: readonly Signature[]): Promise<(SignatureStatus | null)[]> {
    const found: (SignatureStatus | null)[] = [];
    for (const group of chunks(signatures, MAX_SIGNATURES_PER_CALL)) {
      const { value } = await this.rpc.getSignatureStatuses(group, { searchTransactionHistory: true }).send();
      for (const status of value) {
        found.push(
          status === null
            ? null
            : {
                slot: status.slot,
                err: transactionErrorOf(status.err),
                // A node leaves it null only for statuses older than its status cache: long finalized.
                confirmationStatus: status.confirmationStatus ?? "finalized",
              },
        );
      }
    }
    return found;
  }

  async getTransaction(signature: Signature): Promise<TransactionRecord | null> {
    const record = await this.rpc
      .getTransaction(signature, {
        encoding: "base64",
        maxSupportedTransactionVersion: 0,
        commitment: this.commitment === "processed" ? "confirmed" : this.commitment,
      })
      .send();
    if (!record) return null;
    const meta = record.meta;
    return {
      signature,
      slot: record.slot,
      blockTime: Number(record.blockTime ?? 0n),
      err: transactionErrorOf(meta?.err),
      fee: meta?.fee ?? 0n,
      computeUnitsConsumed: meta?.computeUnitsConsumed ?? 0n,
      logs: [...(meta?.logMessages ?? [])],
      preBalances: [...(meta?.preBalances ?? [])],
      postBalances: [...(meta?.postBalances ?? [])],
      wire: new Uint8Array(Buffer.from(record.transaction[0], "base64")),
    };
  }

  async getMinimumBalanceForRentExemption(space: number): Promise<bigint> {
    return this.rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
  }

  /** A node reports each slot's lowest price only, without the transactions that paid it. */
  async getRecentPrioritizationFees(): Promise<SlotPrioritizationFees[]> {
    const fees = await this.rpc.getRecentPrioritizationFees().send();
    return fees
      .map(({ slot, prioritizationFee }) => ({ slot, prioritizationFee }))
      .sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
  }

  async requestAirdrop(address: Address, amount: bigint): Promise<Signature> {
    const latest = await this.getLatestBlockhash();
    const signature = await this.rpc
      .requestAirdrop(address, lamports(amount), { commitment: this.commitment })
      .send();
    await this.waitForLanding(signature, latest.blockhash);
    return signature;
  }

  // Polls until the signature reaches the commitment; once `blockhash` has expired without it, it never will.
  private async waitForLanding(signature: Signature, blockhash: Blockhash): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const [status] = await this.getSignatureStatuses([signature]);
      if (status && COMMITMENT_RANK[status.confirmationStatus] >= COMMITMENT_RANK[this.commitment]) return;
      if (!status && attempt > 0 && attempt % 5 === 0 && !(await this.isBlockhashValid(blockhash))) {
        // One last look: it may have landed just before the blockhash expired.
        const [last] = await this.getSignatureStatuses([signature]);
        if (last) continue;
        throw ChainError.transactionFailed("BlockhashNotFound");
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
    }
  }
}
