/**
 * `commitment` and `minContextSlot`, checked for every method that takes them, where Agave reads them
 * (each method's config is at a known position). The sandbox finalizes a block as it commits it, so
 * `processed`, `confirmed` and `finalized` all read the same state; what is checked is that the
 * commitment is one of them, and that the node has reached `minContextSlot` (else Agave's -32016).
 */
import { ChainError, RPC_ERROR } from "../errors.js";
import { invalid, isCount, type Params, type RpcMethod } from "./rpc-params.js";
import type { SandboxChain } from "./sandbox-chain.js";

/** Where each method that takes a `commitment` or `minContextSlot` reads its config. */
const CONFIG_INDEX: Record<string, number> = {
  getSlot: 0,
  getBlockHeight: 0,
  getEpochInfo: 0,
  getLatestBlockhash: 0,
  getTransactionCount: 0,
  getSlotLeader: 0,
  getSupply: 0,
  getLargestAccounts: 0,
  getInflationGovernor: 0,
  getStakeMinimumDelegation: 0,
  getVoteAccounts: 0,
  getLeaderSchedule: 1,
  getAccountInfo: 1,
  getBalance: 1,
  getMultipleAccounts: 1,
  getProgramAccounts: 1,
  getInflationReward: 1,
  isBlockhashValid: 1,
  sendTransaction: 1,
  simulateTransaction: 1,
  getFeeForMessage: 1,
  getTokenAccountBalance: 1,
  getTokenSupply: 1,
  getTokenLargestAccounts: 1,
  getMinimumBalanceForRentExemption: 1,
  getSignaturesForAddress: 1,
  getTokenAccountsByOwner: 2,
  getTokenAccountsByDelegate: 2,
};

const COMMITMENTS = new Set(["processed", "confirmed", "finalized"]);

/** An error carrying JSON-RPC `data` (Agave's -32016 names the slot the node has reached). */
export class ChainErrorWithData extends ChainError {
  constructor(
    code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(code, message);
  }
}

/** `method` with its commitment and minContextSlot checked first (methods that take none as they are). */
export function checkingCommitment(name: string, method: RpcMethod, chain: SandboxChain): RpcMethod {
  const index = CONFIG_INDEX[name];
  if (index === undefined) return method;
  // Not an async function: every send passes here, and another promise layer per call is garbage.
  return (params: Params) => {
    const config = Array.isArray(params) ? params[index] : undefined;
    if (typeof config === "object" && config !== null && !Array.isArray(config)) {
      const { commitment, preflightCommitment, minContextSlot } = config as Record<string, unknown>;
      try {
        checkCommitment(commitment);
        checkCommitment(preflightCommitment);
      } catch (error) {
        return Promise.reject(error);
      }
      if (minContextSlot !== undefined) {
        return checkMinContextSlot(minContextSlot, chain).then(() => method(params));
      }
    }
    return method(params);
  };
}

function checkCommitment(commitment: unknown): void {
  if (commitment === undefined || (typeof commitment === "string" && COMMITMENTS.has(commitment))) return;
  throw invalid("Invalid params: commitment must be processed, confirmed or finalized");
}

async function checkMinContextSlot(minContextSlot: unknown, chain: SandboxChain): Promise<void> {
  if (!isCount(minContextSlot))
    throw invalid("Invalid params: minContextSlot must be a non-negative integer");
  const slot = Number(await chain.getSlot());
  if (minContextSlot > slot) {
    throw new ChainErrorWithData(
      RPC_ERROR.minContextSlotNotReached,
      "Minimum context slot has not been reached",
      {
        contextSlot: slot,
      },
    );
  }
}
