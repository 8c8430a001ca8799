/**
 * Chain failures in Solana's own terms: `TransactionError` is exactly the JSON a Solana node returns
 * in `err` fields, `ChainError` carries the JSON-RPC error code and message a node would answer with.
 */

/** JSON-RPC error codes used by Solana nodes (and by us). */
export const RPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  blockCleanedUp: -32001,
  sendTransactionPreflightFailure: -32002,
  transactionSignatureVerificationFailure: -32003,
  blockNotAvailable: -32004,
  nodeUnhealthy: -32005,
  transactionPrecompileVerificationFailure: -32006,
  slotSkipped: -32007,
  transactionHistoryNotAvailable: -32011,
  transactionSignatureLengthMismatch: -32013,
  minContextSlotNotReached: -32016,
} as const;

/** Solana's `InstructionError` in its JSON form: a variant name, `{Custom: n}` or `{BorshIoError: msg}`. */
export type InstructionErrorDetail = string | { Custom: number } | { BorshIoError: string };

/** Solana's `TransactionError` in its JSON form, as in `err` of statuses and simulations. */
export type TransactionError =
  | string
  | { InstructionError: [number, InstructionErrorDetail] }
  | { DuplicateInstruction: number }
  | { InsufficientFundsForRent: { account_index: number } }
  | { ProgramExecutionTemporarilyRestricted: { account_index: number } };

/** Names of Solana's fieldless TransactionError variants, indexed by their enum value. */
export const TRANSACTION_ERROR_NAMES = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
] as const;

/** Names of Solana's fieldless InstructionError variants, indexed by their enum value. */
export const INSTRUCTION_ERROR_NAMES = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
] as const;

// The texts Solana's `Display` gives these errors, which clients show and sometimes match on.
const TRANSACTION_ERROR_TEXT: Record<string, string> = {
  AccountInUse: "Account in use",
  AccountLoadedTwice: "Account loaded twice",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  ProgramAccountNotFound: "Attempt to load a program that does not exist",
  InsufficientFundsForFee: "Insufficient funds for fee",
  InvalidAccountForFee: "This account may not be used to pay transaction fees",
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  SignatureFailure: "Transaction did not pass signature verification",
  SanitizeFailure: "Transaction failed to sanitize accounts offsets correctly",
  UnsupportedVersion: "Transaction version is unsupported",
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
  InvalidAccountIndex: "Transaction contains an invalid account reference",
  MissingSignatureForFee: "Transaction requires a fee but has no signature present",
};

const INSTRUCTION_ERROR_TEXT: Record<string, string> = {
  GenericError: "generic instruction error",
  InvalidArgument: "invalid program argument",
  InvalidInstructionData: "invalid instruction data",
  InvalidAccountData: "invalid account data for instruction",
  AccountDataTooSmall: "account data too small for instruction",
  InsufficientFunds: "insufficient funds for instruction",
  IncorrectProgramId: "incorrect program id for instruction",
  MissingRequiredSignature: "missing required signature for instruction",
  AccountAlreadyInitialized: "instruction requires an uninitialized account",
  UninitializedAccount: "instruction requires an initialized account",
};

/** Solana's human text for a transaction error, e.g. `Error processing Instruction 0: custom program error: 0x1`. */
export function describeTransactionError(error: TransactionError): string {
  if (typeof error === "string") return TRANSACTION_ERROR_TEXT[error] ?? error;
  if ("InstructionError" in error) {
    const [index, detail] = error.InstructionError;
    return `Error processing Instruction ${index}: ${describeInstructionError(detail)}`;
  }
  if ("DuplicateInstruction" in error) {
    return `Transaction contains a duplicate instruction (${error.DuplicateInstruction}) that is not allowed`;
  }
  if ("InsufficientFundsForRent" in error) {
    return `Transaction results in an account (${error.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  }
  return `Execution of the program referenced by account at index ${error.ProgramExecutionTemporarilyRestricted.account_index} is temporarily restricted.`;
}

function describeInstructionError(detail: InstructionErrorDetail): string {
  if (typeof detail === "string") return INSTRUCTION_ERROR_TEXT[detail] ?? detail;
  if ("Custom" in detail) return `custom program error: 0x${detail.Custom.toString(16)}`;
  return `Failed to serialize or deserialize account data: ${detail.BorshIoError}`;
}

/** The variant name of a transaction error: `BlockhashNotFound`, `InstructionError`, ... */
export function transactionErrorName(error: TransactionError): string {
  return typeof error === "string" ? error : (Object.keys(error)[0] ?? "Unknown");
}

/** A failed chain call: a JSON-RPC error code and message, and the transaction error behind it if any. */
export class ChainError extends Error {
  override name = "ChainError";
  constructor(
    /** The JSON-RPC error code a Solana node answers with, e.g. -32002 for a failed preflight. */
    readonly code: number,
    message: string,
    readonly transactionError: TransactionError | null = null,
    readonly logs: readonly string[] = [],
    readonly unitsConsumed = 0n,
  ) {
    super(message);
  }

  /** A refused transaction: Solana's preflight failure for `error`. */
  static transactionFailed(
    error: TransactionError,
    logs: readonly string[] = [],
    unitsConsumed = 0n,
  ): ChainError {
    return new ChainError(
      RPC_ERROR.sendTransactionPreflightFailure,
      `Transaction simulation failed: ${describeTransactionError(error)}`,
      error,
      logs,
      unitsConsumed,
    );
  }

  /** A transaction whose signatures do not verify. */
  static signatureVerificationFailed(): ChainError {
    return new ChainError(
      RPC_ERROR.transactionSignatureVerificationFailure,
      "Transaction signature verification failure",
      "SignatureFailure",
    );
  }

  /** A call with malformed parameters. */
  static invalidParams(message: string): ChainError {
    return new ChainError(RPC_ERROR.invalidParams, message);
  }

  /** The transaction error's variant name (`BlockhashNotFound`, `AlreadyProcessed`, `InstructionError`, ...), else null. */
  get kind(): string | null {
    return this.transactionError === null ? null : transactionErrorName(this.transactionError);
  }

  /** Index of the failing instruction for an InstructionError, else null. */
  get instructionIndex(): number | null {
    const error = this.transactionError;
    return typeof error === "object" && error !== null && "InstructionError" in error
      ? error.InstructionError[0]
      : null;
  }

  /** The program's custom error code for `InstructionError [i, {Custom: n}]`, else null. */
  get customCode(): number | null {
    const error = this.transactionError;
    if (typeof error !== "object" || error === null || !("InstructionError" in error)) return null;
    const detail = error.InstructionError[1];
    return typeof detail === "object" && "Custom" in detail ? detail.Custom : null;
  }
}

/**
 * A node whose state is not current (Solana's -32005, "Node is unhealthy"): here, an embedded sandbox
 * that is not, or can no longer prove it is, its database's chain writer (sandbox/lease.ts). Nothing
 * may be quoted, signed or answered from its state. `fenced`: another instance took the lease, and
 * this process will not get it back; `unconfirmed`: its lease went unrenewed for a whole TTL (a pause,
 * a storage outage), and the next renewal tells whether it still holds.
 */
export class NodeUnhealthyError extends ChainError {
  override name = "NodeUnhealthyError";
  constructor(
    readonly state: "fenced" | "unconfirmed",
    message: string,
  ) {
    super(RPC_ERROR.nodeUnhealthy, message);
  }
}

/**
 * A sent transaction whose fate the sender cannot know: the node could not be reached, did not
 * answer, answered with an internal error, or failed after the transaction may have executed. It may
 * have landed, or may still land until its blockhash expires; only its signature's status tells.
 */
export class TransactionOutcomeUnknown extends ChainError {
  override name = "TransactionOutcomeUnknown";
  constructor(message: string, options?: { cause?: unknown }) {
    super(RPC_ERROR.internalError, message);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * What a failed `sendTransaction` says about its transaction. `refused`: it did not land and cannot
 * as sent (preflight or simulation failed, signatures or encoding refused, blockhash expired);
 * `landed`: the chain already holds it (AlreadyProcessed); `unknown`: anything else, since a
 * transport failure, a timeout or a node's internal error can come after it executed.
 */
export type SendFailure = "refused" | "landed" | "unknown";

// JSON-RPC errors a node answers only for a transaction it did not execute and will not execute as sent.
const REFUSAL_CODES: ReadonlySet<number> = new Set([
  RPC_ERROR.parseError,
  RPC_ERROR.invalidRequest,
  RPC_ERROR.methodNotFound,
  RPC_ERROR.invalidParams,
  RPC_ERROR.sendTransactionPreflightFailure,
  RPC_ERROR.transactionSignatureVerificationFailure,
  RPC_ERROR.transactionPrecompileVerificationFailure,
  RPC_ERROR.transactionSignatureLengthMismatch,
]);

/** Classifies an error `sendTransaction` rejected with (see SendFailure); unknown unless proven otherwise. */
export function sendFailureOf(error: unknown): SendFailure {
  if (!(error instanceof ChainError) || error instanceof TransactionOutcomeUnknown) return "unknown";
  if (error.kind === "AlreadyProcessed") return "landed";
  return REFUSAL_CODES.has(error.code) ? "refused" : "unknown";
}
