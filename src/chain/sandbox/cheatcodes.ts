/**
 * Surfpool's clock cheatcodes, for development only: `surfnet_timeTravel`, `surfnet_pauseClock` and
 * `surfnet_resumeClock` with the names, params and EpochInfo results of surfpool's
 * (txtx/surfpool, crates/core/src/rpc/surfnet_cheatcodes.rs), so test suites written against
 * surfpool move this chain's clock too; and `surfnet_getClock`, which surfpool lacks, answering the
 * Clock sysvar's fields. Time only moves forward: a target in the past is refused, with surfpool's
 * words. A production chain does not register them (rpc-methods.ts): they are unknown methods there.
 */
import { ChainError } from "../errors.js";
import { createAccountCheatcodeMethods } from "./account-cheatcodes.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { MAX_CHAIN_MS, SLOT_MS, SLOTS_PER_EPOCH } from "./slot-clock.js";

/** Where `surfnet_timeTravel` goes: exactly one of surfpool's TimeTravelConfig variants. */
export type TimeTravelTarget =
  | { absoluteSlot: number }
  | { absoluteTimestamp: number }
  | { absoluteEpoch: number };

/** One method's handler, as rpc-methods.ts registers it (not imported from there: that would be a cycle). */
type CheatcodeMethod = (params: unknown[]) => Promise<unknown>;

const TARGET_KINDS = ["absoluteSlot", "absoluteTimestamp", "absoluteEpoch"] as const;
type TargetKind = (typeof TARGET_KINDS)[number];

/** Solana's EpochInfo, as getEpochInfo and surfpool's clock cheatcodes answer it. */
export interface EpochInfo {
  absoluteSlot: number;
  blockHeight: number;
  epoch: number;
  slotIndex: number;
  slotsInEpoch: number;
  transactionCount: number;
}

/** The Clock sysvar's fields, named as its jsonParsed encoding names them. */
export interface ClockSysvar {
  slot: number;
  epochStartTimestamp: number;
  epoch: number;
  leaderScheduleEpoch: number;
  unixTimestamp: number;
}

/** The chain's EpochInfo now (the sandbox never skips a slot: block height is the slot). */
export async function epochInfoOf(chain: SandboxChain): Promise<EpochInfo> {
  const slot = Number(await chain.getSlot());
  return {
    absoluteSlot: slot,
    blockHeight: slot,
    epoch: Math.floor(slot / SLOTS_PER_EPOCH),
    slotIndex: slot % SLOTS_PER_EPOCH,
    slotsInEpoch: SLOTS_PER_EPOCH,
    transactionCount: chain.transactionCount(),
  };
}

/** The Clock sysvar as programs see it in the current slot. */
export function clockSysvarOf(chain: SandboxChain): ClockSysvar {
  const slot = chain.slots.slot();
  const epoch = slot / BigInt(SLOTS_PER_EPOCH);
  return {
    slot: Number(slot),
    epochStartTimestamp: chain.slots.blockTime(epoch * BigInt(SLOTS_PER_EPOCH)),
    epoch: Number(epoch),
    // Solana computes the leader schedule one epoch ahead.
    leaderScheduleEpoch: Number(epoch) + 1,
    unixTimestamp: chain.slots.blockTime(slot),
  };
}

function invalid(message: string): ChainError {
  return ChainError.invalidParams(`Invalid params: ${message}`);
}

/** Reads `params[0]` as a TimeTravelTarget: an object with exactly one known key, a u64 in range. */
export function timeTravelTargetOf(params: unknown[]): TimeTravelTarget {
  if (params.length !== 1) throw invalid("expected one time travel config");
  const config = params[0];
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw invalid("the time travel config must be an object");
  }
  const keys = Object.keys(config);
  const kind = keys[0] as TargetKind;
  if (keys.length !== 1 || !TARGET_KINDS.includes(kind)) {
    throw invalid(`the time travel config needs exactly one of ${TARGET_KINDS.join(", ")}`);
  }
  const value = (config as Record<string, unknown>)[kind];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${kind} must be a non-negative integer`);
  }
  return { [kind]: value } as TimeTravelTarget;
}

// Surfpool's refusal of a target in the past (its TimeTravelError), as invalid params.
function pastTarget(unit: "timestamp" | "slot" | "epoch", target: number, current: number): ChainError {
  return ChainError.invalidParams(`Cannot travel to past ${unit}: target=${target}, current=${current}`);
}

/** The chain instant (ms) `target` names; refuses one in the past or beyond MAX_CHAIN_MS. */
export function travelInstantOf(chain: SandboxChain, target: TimeTravelTarget): number {
  const clock = chain.slots;
  const currentSlot = Number(clock.slot());
  let instant: number;
  if ("absoluteTimestamp" in target) {
    const now = clock.now();
    if (target.absoluteTimestamp < now) throw pastTarget("timestamp", target.absoluteTimestamp, now);
    // The start of the first slot at or after it: a program's Clock then reads no earlier second.
    const slot = Math.max(0, Math.ceil((target.absoluteTimestamp - clock.genesisMs) / SLOT_MS));
    instant = clock.genesisMs + slot * SLOT_MS;
  } else if ("absoluteSlot" in target) {
    if (target.absoluteSlot < currentSlot) throw pastTarget("slot", target.absoluteSlot, currentSlot);
    instant = clock.genesisMs + target.absoluteSlot * SLOT_MS;
  } else {
    const currentEpoch = Math.floor(currentSlot / SLOTS_PER_EPOCH);
    if (target.absoluteEpoch < currentEpoch) throw pastTarget("epoch", target.absoluteEpoch, currentEpoch);
    instant = clock.genesisMs + target.absoluteEpoch * SLOTS_PER_EPOCH * SLOT_MS;
  }
  if (!(instant <= MAX_CHAIN_MS)) {
    throw invalid(`the target is past the latest chain time (${new Date(MAX_CHAIN_MS).toISOString()})`);
  }
  return instant;
}

function noParams(params: unknown[]): void {
  if (params.length > 0) throw invalid("this method takes no parameters");
}

/** The clock and account cheatcodes (account-cheatcodes.ts) over `chain`, by method name. */
export function createCheatcodeMethods(chain: SandboxChain): Record<string, CheatcodeMethod> {
  return {
    ...createAccountCheatcodeMethods(chain),
    surfnet_timeTravel: async (params) => {
      await chain.travelTo(travelInstantOf(chain, timeTravelTargetOf(params)));
      return epochInfoOf(chain);
    },
    surfnet_pauseClock: async (params) => {
      noParams(params);
      await chain.pauseClock();
      return epochInfoOf(chain);
    },
    surfnet_resumeClock: async (params) => {
      noParams(params);
      await chain.resumeClock();
      return epochInfoOf(chain);
    },
    surfnet_getClock: async (params) => {
      noParams(params);
      return clockSysvarOf(chain);
    },
  };
}
