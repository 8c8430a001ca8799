/**
 * The Solana JSON-RPC methods the sandbox serves (contract §7), answered from a `SandboxChain` in the
 * exact shapes a validator returns. Transport-free: `rpc-server.ts` carries them over HTTP. While the
 * chain is not its database's writer (`SandboxChain.unhealthy`: another instance took its lease),
 * every method but those naming the node itself answers as an unhealthy node does: -32005, with
 * `{"numSlotsBehind": null}`, never from the stale copy.
 */
import type { Address, Blockhash } from "@solana/kit";
import { RPC_LIMITS } from "../../limits.js";
import { encodeBlockhash } from "../base58.js";
import { ChainError, RPC_ERROR, type TransactionError } from "../errors.js";
import { transactionFee } from "../fees.js";
import { decodeMint, decodeTokenAccount } from "../token-layout.js";
import { decodeWireTransaction, parseWireTransaction, type WireTransaction } from "../wire.js";
import { createCheatcodeMethods, epochInfoOf } from "./cheatcodes.js";
import { createClusterMethods, FEATURE_SET, SOLANA_CORE_VERSION } from "./rpc-cluster.js";
import { ChainErrorWithData, checkingCommitment } from "./rpc-commitment.js";
import { type AccountEncoding, assertBlockhashParam, encodeAccount, tokenAmount } from "./rpc-encoding.js";
import { createHistoryMethods } from "./rpc-history.js";
import {
  addressParam,
  type Config,
  configParam,
  dataSliceOf,
  encodingOf,
  invalid,
  type Params,
  quoted,
  type RpcMethod,
  signatureParam,
  stringParam,
  u64Param,
} from "./rpc-params.js";
import { createProgramAccountMethods, tokenAccountFilterParam } from "./rpc-program-accounts.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOTS_PER_EPOCH } from "./slot-clock.js";
import {
  encodeTransactionWithMeta,
  parsedInnerInstructions,
  returnDataJson,
  transactionEncodingOf,
} from "./transaction-encoding.js";

export { SOLANA_CORE_VERSION };

/** Methods an unhealthy node still answers: they name the node and its cluster, not its state. */
const ANSWERED_WHEN_UNHEALTHY = new Set(["getVersion", "getGenesisHash", "getIdentity"]);

/** Accounts one getRecentPrioritizationFees may name: Solana's bound (MAX_TX_ACCOUNT_LOCKS). */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

/** How many inputs one call may name (RPC_LIMITS by default). */
export interface RpcMethodLimits {
  multipleAccounts: number;
  signatureStatuses: number;
  /** Default MAX_PRIORITIZATION_FEE_ACCOUNTS. */
  prioritizationFeeAccounts: number;
}

export interface RpcMethodOptions {
  /**
   * Production refuses `requestAirdrop`: it would pay out of the venue's treasury; and it has no
   * clock cheatcodes (cheatcodes.ts): they answer as unknown methods.
   */
  mode?: "development" | "production";
  limits?: Partial<RpcMethodLimits>;
  /** The RPC's own `host:port` once it listens, for getClusterNodes. */
  rpcAddress?: () => string | null;
}

export type { RpcMethod };

function wireEncodingOf(config: Config): "base58" | "base64" {
  const encoding = config.encoding ?? "base58";
  if (encoding !== "base58" && encoding !== "base64") {
    throw invalid(
      `Invalid params: unsupported encoding: ${quoted(encoding)}. Supported encodings: base58, base64`,
    );
  }
  return encoding;
}

/** The error `sendTransaction` answers with when the preflight refuses a transaction, as a node shapes it. */
export function preflightErrorData(error: ChainError) {
  return {
    accounts: null,
    err: error.transactionError,
    innerInstructions: null,
    logs: [...error.logs],
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed: Number(error.unitsConsumed),
  };
}

function statusJson(err: TransactionError | null) {
  return err === null ? { Ok: null } : { Err: err };
}

/** Builds the method table over `chain`. */
export function createRpcMethods(
  chain: SandboxChain,
  options: RpcMethodOptions = {},
): Map<string, RpcMethod> {
  const maxAccounts = options.limits?.multipleAccounts ?? RPC_LIMITS.multipleAccounts;
  const maxSignatures = options.limits?.signatureStatuses ?? RPC_LIMITS.signatureStatuses;
  const maxFeeAccounts = options.limits?.prioritizationFeeAccounts ?? MAX_PRIORITIZATION_FEE_ACCOUNTS;
  const context = async () => ({ slot: Number(await chain.getSlot()), apiVersion: SOLANA_CORE_VERSION });
  const withContext = async (value: unknown) => ({ context: await context(), value });
  const decimalsCache = new Map<string, number>();
  // Mint decimals never change once a mint exists, so they are cached for jsonParsed encoding.
  const decimalsOf = (mint: Address): number | undefined => {
    const cached = decimalsCache.get(mint);
    if (cached !== undefined) return cached;
    const account = chain.peekAccount(mint);
    const decoded = account && decodeMint(mint, account.owner, account.data);
    if (!decoded) return undefined;
    decimalsCache.set(mint, decoded.decimals);
    return decoded.decimals;
  };
  const encode = (address: Address, config: Config, fallback: AccountEncoding) => {
    const encoding = encodingOf(config, fallback);
    const slice = dataSliceOf(config);
    return (account: ReturnType<SandboxChain["peekAccount"]>) =>
      account === null ? null : encodeAccount(address, account, encoding, decimalsOf, slice);
  };

  const methods: Record<string, RpcMethod> = {
    getHealth: async () => "ok",
    getVersion: async () => ({ "solana-core": SOLANA_CORE_VERSION, "feature-set": FEATURE_SET }),
    getGenesisHash: async () => chain.genesisHash,
    getSlot: async () => Number(await chain.getSlot()),
    getBlockHeight: async () => Number(await chain.getBlockHeight()),
    getTransactionCount: async () => chain.transactionCount(),
    getFirstAvailableBlock: async () => 0,
    minimumLedgerSlot: async () => 0,
    getRecentPrioritizationFees: async (params) => {
      const accounts = params[0] ?? [];
      if (!Array.isArray(accounts)) throw invalid("Invalid params: expected an array of account addresses");
      if (accounts.length > maxFeeAccounts) throw invalid(`Too many inputs provided; max ${maxFeeAccounts}`);
      const checked = accounts.map((_, i) => addressParam(accounts, i, "account"));
      return chain.prioritizationFeesFor(checked).map((fee) => ({
        slot: Number(fee.slot),
        prioritizationFee: Number(fee.prioritizationFee),
      }));
    },
    getEpochInfo: () => epochInfoOf(chain),
    getEpochSchedule: async () => ({
      firstNormalEpoch: 0,
      firstNormalSlot: 0,
      leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
      slotsPerEpoch: SLOTS_PER_EPOCH,
      warmup: false,
    }),
    getLatestBlockhash: async () => {
      const latest = await chain.getLatestBlockhash();
      return withContext({
        blockhash: latest.blockhash,
        lastValidBlockHeight: Number(latest.lastValidBlockHeight),
      });
    },
    isBlockhashValid: async (params) => withContext(await chain.isBlockhashValid(blockhashParam(params, 0))),
    getBalance: async (params) => withContext(Number(await chain.getBalance(addressParam(params, 0)))),
    getMinimumBalanceForRentExemption: async (params) =>
      Number(await chain.getMinimumBalanceForRentExemption(Number(u64Param(params, 0, "data length")))),
    getAccountInfo: async (params) => {
      const address = addressParam(params, 0);
      return withContext(encode(address, configParam(params, 1), "base58")(chain.peekAccount(address)));
    },
    getMultipleAccounts: async (params) => {
      const addresses = params[0];
      if (!Array.isArray(addresses)) throw invalid("Invalid params: expected an array of pubkeys");
      if (addresses.length > maxAccounts) throw invalid(`Too many inputs provided; max ${maxAccounts}`);
      const config = configParam(params, 1);
      const value = addresses.map((_, i) => {
        const address = addressParam(addresses, i);
        return encode(address, config, "base64")(chain.peekAccount(address));
      });
      return withContext(value);
    },
    getTokenAccountBalance: async (params) => {
      const address = addressParam(params, 0);
      const account = chain.peekAccount(address);
      const token = account && decodeTokenAccount(address, account.owner, account.data);
      const decimals = token ? decimalsOf(token.mint) : undefined;
      if (!token || decimals === undefined) throw invalid("Invalid param: not a Token account");
      return withContext(tokenAmount(token.amount, decimals));
    },
    getTokenSupply: async (params) => {
      const mint = await chain.getMint(addressParam(params, 0));
      if (!mint) throw invalid("Invalid param: not a Token mint");
      return withContext(tokenAmount(mint.supply, mint.decimals));
    },
    getTokenAccountsByOwner: async (params) => {
      const owner = addressParam(params, 0);
      const accounts = await chain.getTokenAccountsByOwner(owner, tokenAccountFilterParam(chain, params, 1));
      const config = configParam(params, 2);
      const value = accounts.map((token) => ({
        pubkey: token.address,
        account: encode(token.address, config, "base64")(chain.peekAccount(token.address)),
      }));
      return withContext(value);
    },
    getSignatureStatuses: async (params) => {
      const signatures = params[0];
      if (!Array.isArray(signatures)) throw invalid("Invalid params: expected an array of signatures");
      if (signatures.length > maxSignatures) throw invalid(`Too many inputs provided; max ${maxSignatures}`);
      const checked = signatures.map((_, i) => signatureParam(signatures, i));
      const statuses = await chain.getSignatureStatuses(checked);
      return withContext(
        statuses.map((status) =>
          status === null
            ? null
            : {
                slot: Number(status.slot),
                confirmations: null,
                err: status.err,
                status: statusJson(status.err),
                confirmationStatus: status.confirmationStatus,
              },
        ),
      );
    },
    getTransaction: async (params) => {
      const signature = signatureParam(params, 0);
      const config = typeof params[1] === "string" ? { encoding: params[1] } : configParam(params, 1);
      const encoding = transactionEncodingOf(config.encoding);
      const maxVersion = maxSupportedVersionOf(config);
      const record = await chain.getTransaction(signature);
      if (!record) return null;
      const encoded = encodeTransactionWithMeta(record, encoding, maxVersion);
      return { slot: Number(record.slot), blockTime: record.blockTime, ...encoded };
    },
    sendTransaction: async (params) => {
      const config = configParam(params, 1);
      const wire = decodeWireTransaction(stringParam(params, 0, "transaction"), wireEncodingOf(config));
      return chain.sendTransaction(wire, { skipPreflight: config.skipPreflight === true });
    },
    simulateTransaction: async (params) => {
      const config = configParam(params, 1);
      const wire = decodeWireTransaction(stringParam(params, 0, "transaction"), wireEncodingOf(config));
      const replace = config.replaceRecentBlockhash === true;
      if (replace && config.sigVerify === true) {
        throw invalid("sigVerify may not be used with replaceRecentBlockhash");
      }
      const accounts = simulationAccountsOf(config, parseWireTransaction(wire));
      const result = await chain.simulateTransaction(
        wire,
        { sigVerify: config.sigVerify === true, replaceRecentBlockhash: replace },
        accounts?.addresses,
      );
      const latest = replace ? await chain.getLatestBlockhash() : null;
      return withContext({
        err: result.err,
        logs: result.logs,
        accounts: accounts
          ? result.accounts.map((account, i) =>
              account === null
                ? null
                : encodeAccount(accounts.addresses[i] as Address, account, accounts.encoding, decimalsOf),
            )
          : null,
        unitsConsumed: Number(result.unitsConsumed),
        returnData: result.returnData && returnDataJson(result.returnData),
        innerInstructions:
          config.innerInstructions === true
            ? parsedInnerInstructions(result.innerInstructions, result.accountKeys)
            : null,
        replacementBlockhash: latest
          ? { blockhash: latest.blockhash, lastValidBlockHeight: Number(latest.lastValidBlockHeight) }
          : null,
      });
    },
    requestAirdrop: async (params) => {
      if (options.mode === "production") {
        // Every airdrop is paid from the venue's treasury: in production it would hand out its SOL.
        throw new ChainError(RPC_ERROR.methodNotFound, "requestAirdrop is not available in production mode");
      }
      return chain.requestAirdrop(addressParam(params, 0), u64Param(params, 1, "lamports"));
    },
    getFeeForMessage: async (params) => {
      const message = decodeWireTransaction(stringParam(params, 0, "message"), "base64");
      const tx = parseMessage(message);
      const valid = await chain.isBlockhashValid(encodeBlockhash(tx.recentBlockhash));
      return withContext(valid ? Number(transactionFee(tx)) : null);
    },
    ...createHistoryMethods(chain, {
      getTransaction: (params) => (methods.getTransaction as RpcMethod)(params),
      withContext,
    }),
    ...createProgramAccountMethods(chain, { encode, withContext }),
    ...createClusterMethods(chain, { withContext, rpcAddress: options.rpcAddress }),
    ...(options.mode === "production" ? {} : createCheatcodeMethods(chain)),
  };
  return new Map(
    Object.entries(methods).map(([name, unchecked]): [string, RpcMethod] => {
      const method = checkingCommitment(name, unchecked, chain);
      return [
        name,
        ANSWERED_WHEN_UNHEALTHY.has(name)
          ? method
          : (params) => {
              const unhealthy = chain.unhealthy();
              return unhealthy ? Promise.reject(unhealthy) : method(params);
            },
      ];
    }),
  );
}

// The client's maxSupportedTransactionVersion: absent, or a small non-negative integer.
function maxSupportedVersionOf(config: Config): number | undefined {
  const value = config.maxSupportedTransactionVersion;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 255) {
    throw invalid("Invalid params: maxSupportedTransactionVersion must be a non-negative integer");
  }
  return value;
}

/**
 * simulateTransaction's `accounts` config: its encoding (base58 refused, as Agave) and addresses, no
 * more of them than the transaction has keys.
 */
function simulationAccountsOf(
  config: Config,
  tx: WireTransaction,
): { encoding: AccountEncoding; addresses: Address[] } | null {
  const accounts = config.accounts;
  if (accounts === undefined || accounts === null) return null;
  if (typeof accounts !== "object" || Array.isArray(accounts))
    throw invalid("Invalid params: accounts must be an object");
  const { addresses, encoding } = accounts as Record<string, unknown>;
  const chosen = encodingOf({ encoding }, "base64");
  if (chosen === "base58") throw invalid("base58 encoding not supported");
  if (!Array.isArray(addresses)) throw invalid("Invalid params: accounts.addresses must be an array");
  const max =
    tx.accountKeys.length +
    tx.lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  if (addresses.length > max) throw invalid(`Too many accounts provided; max ${max}`);
  return { encoding: chosen, addresses: addresses.map((_, i) => addressParam(addresses, i, "address")) };
}

// A blockhash is 32 bytes of base58, like an address.
function blockhashParam(params: Params, index: number): Blockhash {
  const value = stringParam(params, index, "blockhash");
  assertBlockhashParam(value);
  return value;
}

// A bare message (as getFeeForMessage takes it) read through the transaction parser with empty signatures.
function parseMessage(message: Uint8Array): WireTransaction {
  const first = message[0] ?? 0;
  const required = first & 0x80 ? (message[1] ?? 0) : first;
  if (required > 127) throw invalid("Invalid params: invalid message");
  const wire = new Uint8Array(1 + required * 64 + message.length);
  wire[0] = required;
  wire.set(message, 1 + required * 64);
  return parseWireTransaction(wire);
}

/** JSON-RPC error body for a thrown value; unexpected errors become -32603 without internals. */
export function rpcErrorOf(error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof ChainError) {
    if (error.code === RPC_ERROR.sendTransactionPreflightFailure) {
      return { code: error.code, message: error.message, data: preflightErrorData(error) };
    }
    // Agave's NodeUnhealthy carries how far behind the node is; unknown here.
    if (error.code === RPC_ERROR.nodeUnhealthy) {
      return { code: error.code, message: error.message, data: { numSlotsBehind: null } };
    }
    if (error instanceof ChainErrorWithData)
      return { code: error.code, message: error.message, data: error.data };
    return { code: error.code, message: error.message };
  }
  return { code: RPC_ERROR.internalError, message: "Internal error" };
}
