/**
 * The sandbox node's schedule and production, as Agave's rpc.rs answers them for a cluster of one:
 * this node (its identity, as getIdentity names it) leads every slot of every epoch and produced
 * every block (the sandbox skips no slot, slot-clock.ts); it votes on nothing and holds no stake, so
 * no block has commitment to report. Performance samples are counted from the stored transactions
 * in 60 s windows (150 slots) aligned on genesis, as a node samples every 60 s.
 */
import { ChainError } from "../errors.js";
import { nodeIdentity } from "./rpc-cluster.js";
import { addressArg, assertConfirmedCommitment, configArg, countArg, slotArg } from "./rpc-history-params.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOT_MS, SLOTS_PER_EPOCH } from "./slot-clock.js";

type Method = (params: unknown[]) => Promise<unknown>;

/** Agave's MAX_GET_SLOT_LEADERS. */
export const MAX_SLOT_LEADERS = 5000;
/** Agave's PERFORMANCE_SAMPLES_LIMIT: the default and the most samples per call. */
export const MAX_PERFORMANCE_SAMPLES = 720;
const SAMPLE_PERIOD_SECS = 60;
const SAMPLE_SLOTS = (SAMPLE_PERIOD_SECS * 1000) / SLOT_MS;
const EPOCH_SLOTS = BigInt(SLOTS_PER_EPOCH);
/** Agave's NoSnapshot (-32008): this node takes no snapshots. */
const NO_SNAPSHOT = -32008;

/** The schedule, production and sample methods over `chain`. */
export function createScheduleMethods(
  chain: SandboxChain,
  withContext: (value: unknown) => Promise<unknown>,
): Record<string, Method> {
  const identity = nodeIdentity(chain.genesisHash);
  const currentSlot = () => chain.getSlot();
  return {
    getSlotLeader: async (params) => {
      configArg(params[0]);
      return identity;
    },
    getSlotLeaders: async (params) => {
      const start = slotArg(params, 0, "start slot");
      const limit = countArg(params[1], "limit", -1);
      if (limit < 0) throw ChainError.invalidParams("Invalid params: limit must be a non-negative integer");
      if (limit > MAX_SLOT_LEADERS) throw ChainError.invalidParams(`Invalid limit; max ${MAX_SLOT_LEADERS}`);
      if (limit > 0) assertScheduleKnown(start + BigInt(limit - 1), await currentSlot());
      return Array.from({ length: limit }, () => identity);
    },
    getLeaderSchedule: async (params) => {
      const { slot, config } = leaderScheduleArgs(params);
      const epoch = (slot ?? (await currentSlot())) / EPOCH_SLOTS;
      if (epoch > leaderScheduleEpoch(await currentSlot())) return null;
      const filter = config.identity === undefined ? identity : addressArg(config.identity, "identity");
      return filter === identity ? { [identity]: everySlotIndex() } : {};
    },
    getBlockProduction: async (params) => {
      const config = configArg(params[0]);
      assertKnownCommitment(config);
      const range = blockProductionRange(config, await currentSlot());
      const filter = config.identity === undefined ? identity : addressArg(config.identity, "identity");
      const slots = Number(range.lastSlot - range.firstSlot + 1n);
      return withContext({
        byIdentity: filter === identity ? { [identity]: [slots, slots] } : {},
        range: { firstSlot: Number(range.firstSlot), lastSlot: Number(range.lastSlot) },
      });
    },
    getBlockCommitment: async (params) => {
      slotArg(params, 0, "slot");
      // Agave reports commitment only for blocks not yet rooted; here every block is final at once.
      return { commitment: null, totalStake: 0 };
    },
    getHighestSnapshotSlot: async () => {
      throw new ChainError(NO_SNAPSHOT, "No snapshot");
    },
    getMaxRetransmitSlot: async () => Number(await currentSlot()),
    getMaxShredInsertSlot: async () => Number(await currentSlot()),
    getRecentPerformanceSamples: async (params) => {
      const limit = countArg(params[0], "limit", MAX_PERFORMANCE_SAMPLES);
      if (limit > MAX_PERFORMANCE_SAMPLES) {
        throw ChainError.invalidParams(`Invalid limit; max ${MAX_PERFORMANCE_SAMPLES}`);
      }
      return performanceSamples(chain, await currentSlot(), limit);
    },
  };
}

// The newest `limit` complete 60 s windows before `slot`, newest first, as Agave's samples.
async function performanceSamples(chain: SandboxChain, slot: bigint, limit: number) {
  const window = BigInt(SAMPLE_SLOTS);
  const complete = (slot + 1n) / window;
  const count = complete < BigInt(limit) ? complete : BigInt(limit);
  if (count === 0n) return [];
  const oldest = complete - count;
  const counts = await chain.history.countsPerWindow(oldest * window, SAMPLE_SLOTS);
  const samples: unknown[] = [];
  for (let k = complete - 1n; k >= oldest; k--) {
    const transactions = counts.get(k) ?? 0;
    samples.push({
      slot: Number((k + 1n) * window - 1n),
      numTransactions: transactions,
      numNonVoteTransactions: transactions,
      samplePeriodSecs: SAMPLE_PERIOD_SECS,
      numSlots: SAMPLE_SLOTS,
    });
  }
  return samples;
}

// A node knows the leader schedule up to the epoch after the current one (leaderScheduleSlotOffset).
function leaderScheduleEpoch(currentSlot: bigint): bigint {
  return currentSlot / EPOCH_SLOTS + 1n;
}

function assertScheduleKnown(lastSlot: bigint, currentSlot: bigint): void {
  const epoch = lastSlot / EPOCH_SLOTS;
  if (epoch > leaderScheduleEpoch(currentSlot)) {
    throw ChainError.invalidParams(`Invalid slot range: leader schedule for epoch ${epoch} is unavailable`);
  }
}

let slotIndexes: number[] | undefined;

// Every slot index of an epoch: this node leads them all (built once, the same for every epoch).
function everySlotIndex(): number[] {
  slotIndexes ??= Array.from({ length: SLOTS_PER_EPOCH }, (_, i) => i);
  return slotIndexes;
}

// getLeaderSchedule's params: [slot?] or [slot?, config] or [config], as Agave's wrapper reads them.
function leaderScheduleArgs(params: unknown[]) {
  if (typeof params[0] === "object" && params[0] !== null) {
    const config = configArg(params[0]);
    assertKnownCommitment(config);
    return { slot: undefined, config };
  }
  const slot = params[0] === undefined || params[0] === null ? undefined : slotArg(params, 0, "slot");
  const config = configArg(params[1]);
  assertKnownCommitment(config);
  return { slot, config };
}

// Commitment as the schedule methods take it: any level (a processed one too).
function assertKnownCommitment(config: Record<string, unknown>): void {
  if (config.commitment === "processed") return;
  assertConfirmedCommitment(config);
}

// getBlockProduction's range: the current epoch up to now by default, checked as Agave checks it.
function blockProductionRange(config: Record<string, unknown>, currentSlot: bigint) {
  const range = configArg(config.range);
  const firstSlot =
    range.firstSlot === undefined
      ? (currentSlot / EPOCH_SLOTS) * EPOCH_SLOTS
      : slotArg([range.firstSlot], 0, "firstSlot");
  const lastSlot = range.lastSlot === undefined ? currentSlot : slotArg([range.lastSlot], 0, "lastSlot");
  if (lastSlot < firstSlot) {
    throw ChainError.invalidParams(`lastSlot, ${lastSlot}, cannot be less than firstSlot, ${firstSlot}`);
  }
  if (lastSlot > currentSlot) {
    throw ChainError.invalidParams(`lastSlot, ${lastSlot}, is too large; max ${currentSlot}`);
  }
  return { firstSlot, lastSlot };
}
