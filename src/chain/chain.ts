/**
 * The one chain interface trading code uses. Two implementations: the embedded LiteSVM sandbox
 * (`sandbox/sandbox-chain.ts`) and a Solana JSON-RPC client (`rpc-client.ts`); callers never know
 * which one they hold. Addresses, signatures and blockhashes are base58 strings typed as in
 * `@solana/kit`, amounts and heights are bigints.
 */
import type { Address, Blockhash, Signature } from "@solana/kit";
import type { NodeUnhealthyError, TransactionError } from "./errors.js";

export interface LatestBlockhash {
  blockhash: Blockhash;
  /** The last block height at which a transaction using `blockhash` can still land. */
  lastValidBlockHeight: bigint;
}

export interface AccountInfo {
  lamports: bigint;
  owner: Address;
  data: Uint8Array;
  executable: boolean;
}

export type TokenAccountState = "initialized" | "frozen" | "uninitialized";

export interface TokenAccount {
  address: Address;
  /** The token program that owns it: SPL Token or Token-2022. */
  programId: Address;
  mint: Address;
  owner: Address;
  amount: bigint;
  state: TokenAccountState;
  delegate: Address | null;
  delegatedAmount: bigint;
  isNative: boolean;
  /** Rent-exempt reserve of a wrapped-SOL account, else null. */
  rentExemptReserve: bigint | null;
  closeAuthority: Address | null;
}

export interface MintInfo {
  address: Address;
  programId: Address;
  supply: bigint;
  decimals: number;
  mintAuthority: Address | null;
  freezeAuthority: Address | null;
  isInitialized: boolean;
}

export type TokenAccountFilter = { mint: Address } | { programId: Address };

export type Commitment = "processed" | "confirmed" | "finalized";

export interface SignatureStatus {
  slot: bigint;
  /** Null when the transaction succeeded. */
  err: TransactionError | null;
  confirmationStatus: Commitment;
}

export interface TransactionRecord {
  signature: Signature;
  slot: bigint;
  /** Unix seconds. */
  blockTime: number;
  err: TransactionError | null;
  fee: bigint;
  computeUnitsConsumed: bigint;
  logs: string[];
  /** Lamports of every account key, in message order, before and after. */
  preBalances: bigint[];
  postBalances: bigint[];
  /** The signed transaction as sent. */
  wire: Uint8Array;
}

export interface SimulationResult {
  err: TransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
}

export interface SendOptions {
  /**
   * Land the transaction even when it fails (its fee is charged, its error recorded), as Solana does
   * with `skipPreflight`. Without it a failing transaction is refused and nothing lands.
   */
  skipPreflight?: boolean;
  /**
   * The caller has checked every signature of these exact bytes (it made them, or verified them
   * itself): a chain in this process need not check them again. A remote node checks them anyway.
   */
  signaturesChecked?: boolean;
}

export interface SimulateOptions {
  /** Check signatures too (default false, as in Solana's simulateTransaction). */
  sigVerify?: boolean;
  /** Run against the latest blockhash instead of the transaction's own. */
  replaceRecentBlockhash?: boolean;
}

/** What the transactions that landed in one recent slot paid per compute unit, in micro-lamports. */
export interface SlotPrioritizationFees {
  slot: bigint;
  /** The lowest price any of them paid (Solana's `prioritizationFee`); 0 when one paid none. */
  prioritizationFee: bigint;
  /**
   * What they paid, per fee payer and price, with the compute units that paid it, where the chain
   * reports it (the sandbox does, for a bounded number a slot); a Solana node reports only the lowest
   * price, so from one this is absent.
   */
  transactions?: readonly LandedPrice[];
}

/** The compute units that landed in a slot paying one price per unit, all of one fee payer. */
export interface LandedPrice {
  feePayer: Address;
  /** Micro-lamports per compute unit. */
  computeUnitPrice: bigint;
  /** Compute units consumed, summed over the payer's transactions at this price in the slot. */
  computeUnits: bigint;
}

/** A Solana chain as trading code sees it. Every failure is a `ChainError`. */
export interface Chain {
  getLatestBlockhash(): Promise<LatestBlockhash>;
  isBlockhashValid(blockhash: Blockhash): Promise<boolean>;
  getBlockHeight(): Promise<bigint>;
  getSlot(): Promise<bigint>;
  /** Sends a signed wire transaction; resolves once it has landed durably, with its first signature. */
  sendTransaction(wire: Uint8Array, options?: SendOptions): Promise<Signature>;
  simulateTransaction(wire: Uint8Array, options?: SimulateOptions): Promise<SimulationResult>;
  getBalance(address: Address): Promise<bigint>;
  getAccountInfo(address: Address): Promise<AccountInfo | null>;
  getMultipleAccounts(addresses: readonly Address[]): Promise<(AccountInfo | null)[]>;
  getTokenAccount(address: Address): Promise<TokenAccount | null>;
  /** The amount a token account holds; null when there is no initialized token account there. */
  getTokenAccountBalance(address: Address): Promise<bigint | null>;
  getTokenAccountsByOwner(owner: Address, filter: TokenAccountFilter): Promise<TokenAccount[]>;
  getMint(address: Address): Promise<MintInfo | null>;
  getSignatureStatuses(signatures: readonly Signature[]): Promise<(SignatureStatus | null)[]>;
  getTransaction(signature: Signature): Promise<TransactionRecord | null>;
  getMinimumBalanceForRentExemption(space: number): Promise<bigint>;
  /**
   * The compute-unit prices paid in the recent slots that landed transactions (the last 150 slots, as
   * Solana's getRecentPrioritizationFees), oldest first; slots that landed nothing are left out.
   */
  getRecentPrioritizationFees(): Promise<SlotPrioritizationFees[]>;
  /** Credits lamports from the cluster's faucet (sandbox and test clusters only). */
  requestAirdrop(address: Address, lamports: bigint): Promise<Signature>;
  /**
   * Why this chain's state cannot be trusted now, or null. The embedded sandbox says so when it is not
   * (or cannot prove it still is) its database's writer; its state reads then throw the same error.
   * Whatever quotes, signs or reports from chain state checks it first. A chain without it is trusted.
   */
  unhealthy?(): NodeUnhealthyError | null;
  /** Calls `listener` when `unhealthy` may have changed at once (the sandbox's lease was lost); returns the function that stops it. */
  onUnhealthy?(listener: () => void): () => void;
}
