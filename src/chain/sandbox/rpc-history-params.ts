/**
 * Params of the history methods (rpc-history.ts, rpc-schedule.ts), checked as Agave checks them:
 * slots and limits are u64s, configs objects, and commitments below `confirmed` refused where Agave
 * refuses them. Every value is checked before use; strings are checked for length first
 * (rpc-encoding.ts).
 */
import type { Address, Signature } from "@solana/kit";
import { ChainError, RPC_ERROR } from "../errors.js";
import { assertAddressParam, assertSignatureParam } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";

export type HistoryConfig = Record<string, unknown>;

const COMMITMENTS = new Set(["processed", "confirmed", "finalized"]);

/** The u64 at `params[index]`, or `fallback` when it is absent (undefined or null). */
export function slotArg(params: unknown[], index: number, name: string, fallback?: bigint): bigint {
  const value = params[index];
  if ((value === undefined || value === null) && fallback !== undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw ChainError.invalidParams(`Invalid params: ${name} must be a non-negative integer`);
  }
  return BigInt(value);
}

/** `value` when it is a config object, {} when absent; -32602 otherwise. */
export function configArg(value: unknown): HistoryConfig {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw ChainError.invalidParams("Invalid params: config must be an object");
  }
  return value as HistoryConfig;
}

/** A config's `commitment`, refused below `confirmed` as Agave refuses it for history and blocks. */
export function assertConfirmedCommitment(config: HistoryConfig): void {
  const commitment = config.commitment;
  if (commitment === undefined || commitment === null) return;
  if (typeof commitment !== "string" || !COMMITMENTS.has(commitment)) {
    throw ChainError.invalidParams("Invalid params: unknown commitment");
  }
  if (commitment === "processed") {
    throw ChainError.invalidParams("Method does not support commitment below `confirmed`");
  }
}

/** The count at `value` (absent: `fallback`); each method bounds it with its own Agave words. */
export function countArg(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw ChainError.invalidParams(`Invalid params: ${name} must be a non-negative integer`);
  }
  return value;
}

/** A config's `minContextSlot`: -32016 while the chain has not reached it, as Agave answers. */
export async function assertMinContextSlot(chain: SandboxChain, config: HistoryConfig): Promise<void> {
  const min = config.minContextSlot;
  if (min === undefined || min === null) return;
  const wanted = slotArg([min], 0, "minContextSlot");
  if ((await chain.getSlot()) < wanted) {
    throw new ChainError(RPC_ERROR.minContextSlotNotReached, "Minimum context slot has not been reached");
  }
}

/** A base58 address at `value`; -32602 with Agave's words when it is not one. */
export function addressArg(value: unknown, name: string): Address {
  if (typeof value !== "string") throw ChainError.invalidParams(`Invalid params: ${name} must be a string`);
  assertAddressParam(value);
  return value;
}

/** A base58 signature at `value`; -32602 with Agave's words when it is not one. */
export function signatureArg(value: unknown, name: string): Signature {
  if (typeof value !== "string") throw ChainError.invalidParams(`Invalid params: ${name} must be a string`);
  assertSignatureParam(value);
  return value;
}
