/**
 * The JSON-RPC methods about the cluster rather than an account: who the node is (`getIdentity`,
 * `getClusterNodes`), its supply (`getSupply`, `getLargestAccounts`), staking and inflation
 * (`getVoteAccounts`, `getStakeMinimumDelegation`, `getInflation*`), answered as Agave answers them
 * on a one-node cluster: this node, no stake, no vote account, no inflation (nothing is minted per
 * epoch), every lamport circulating.
 */
import { createHash, createPrivateKey, createPublicKey } from "node:crypto";
import type { Address } from "@solana/kit";
import { addressOf, decodeAddressBytes } from "../base58.js";
import { ChainError, RPC_ERROR } from "../errors.js";
import { LAMPORTS_PER_SOL } from "../programs.js";
import {
  addressParam,
  configParam,
  flagOf,
  invalid,
  isCount,
  type Params,
  type RpcMethod,
  type WithContext,
} from "./rpc-params.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOTS_PER_EPOCH } from "./slot-clock.js";
import { FeatureSet } from "./svm.js";

/** What `getVersion` reports: the validator line whose RPC this mirrors. */
export const SOLANA_CORE_VERSION = "2.2.20";
/** The feature-set id `getVersion` and `getClusterNodes` report with it. */
export const FEATURE_SET = 3_294_202_862;
/** Accounts getLargestAccounts answers with: Agave's NUM_LARGEST_ACCOUNTS. */
export const LARGEST_ACCOUNTS = 20;
/** Addresses one getInflationReward may name: Agave bounds it as getMultipleAccounts. */
export const MAX_INFLATION_REWARD_ADDRESSES = 100;

// The feature that raises the stake program's minimum delegation from 1 lamport to 1 SOL.
const RAISE_MINIMUM_DELEGATION_TO_1_SOL = "9onWzzvCzNC2jfhxxeqRgs5q7nFAAKpCUvkj6T6GJK9i";
// PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows.
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

interface Shared {
  withContext: WithContext;
  /** The RPC's own `host:port` once it listens (getClusterNodes' `rpc`), else null. */
  rpcAddress?: () => string | null;
}

/** The cluster methods over `chain`, for `createRpcMethods`. */
export function createClusterMethods(chain: SandboxChain, shared: Shared): Record<string, RpcMethod> {
  const identity = nodeIdentity(chain.genesisHash);
  return {
    getIdentity: async () => ({ identity }),
    getClusterNodes: async () => [
      {
        pubkey: identity,
        // The sandbox takes transactions only over this RPC: it has no gossip, TPU, TVU or repair.
        gossip: null,
        tvu: null,
        tpu: null,
        tpuQuic: null,
        tpuForwards: null,
        tpuForwardsQuic: null,
        tpuVote: null,
        serveRepair: null,
        rpc: shared.rpcAddress?.() ?? null,
        pubsub: null,
        version: SOLANA_CORE_VERSION,
        featureSet: FEATURE_SET,
        shredVersion: shredVersionOf(chain.genesisHash),
        clientId: null,
      },
    ],
    // Agave lists the vote accounts staked in the current epoch; nothing is staked on this chain.
    getVoteAccounts: async (params) => {
      const config = configParam(params, 0);
      if (config.votePubkey !== undefined) addressParam([config.votePubkey], 0, "votePubkey");
      return { current: [], delinquent: [] };
    },
    getSupply: async (params) => {
      const config = configParam(params, 0);
      flagOf(config, "excludeNonCirculatingAccountsList");
      const total = totalLamports(chain);
      // Agave's non-circulating accounts are mainnet's own list (and stake they lock): none here.
      return shared.withContext({ total, circulating: total, nonCirculating: 0, nonCirculatingAccounts: [] });
    },
    getLargestAccounts: async (params) => {
      const filter = configParam(params, 0).filter;
      if (filter !== undefined && filter !== "circulating" && filter !== "nonCirculating") {
        throw invalid("Invalid params: filter must be circulating or nonCirculating");
      }
      // Every account circulates (see getSupply), so nonCirculating lists none.
      return shared.withContext(filter === "nonCirculating" ? [] : largestAccounts(chain, LARGEST_ACCOUNTS));
    },
    getStakeMinimumDelegation: async (params) => {
      configParam(params, 0);
      return shared.withContext(stakeMinimumDelegation());
    },
    // Nothing is minted per epoch: Agave's `Inflation::new_disabled()`.
    getInflationGovernor: async (params) => {
      configParam(params, 0);
      return { initial: 0, terminal: 0, taper: 0, foundation: 0, foundationTerm: 0 };
    },
    getInflationRate: async () => ({
      total: 0,
      validator: 0,
      foundation: 0,
      epoch: Math.floor(Number(await chain.getSlot()) / SLOTS_PER_EPOCH),
    }),
    getInflationReward: (params) => inflationRewards(chain, params),
    // Alpenglow is not active on this chain: Agave answers null without its genesis certificate.
    getAgGenesisCert: async () => null,
  };
}

/**
 * The node's identity: an Ed25519 public key derived from the genesis hash, so every instance on one
 * database, and every restart, is the same node (the sandbox holds no validator keypair of its own).
 */
export function nodeIdentity(genesisHash: string): Address {
  const seed = createHash("sha256").update(`oddsgate/node-identity\0${genesisHash}`).digest();
  const key = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(key).export({ format: "der", type: "spki" });
  return addressOf(new Uint8Array(spki.subarray(spki.length - 32)));
}

/** Agave's `compute_shred_version` of a genesis hash with no hard forks: XOR of its byte pairs, plus 1. */
export function shredVersionOf(genesisHash: string): number {
  const bytes = decodeAddressBytes(genesisHash);
  let high = 0;
  let low = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    high ^= bytes[i] ?? 0;
    low ^= bytes[i + 1] ?? 0;
  }
  return Math.min(((high << 8) | low) + 1, 0xffff);
}

// What the stake program enforces, decided as Agave's RPC decides it: by the chain's feature set
// (LiteSVM runs with every feature enabled).
function stakeMinimumDelegation(): number {
  const raised = FeatureSet.allEnabled().isActive(decodeAddressBytes(RAISE_MINIMUM_DELEGATION_TO_1_SOL));
  return raised ? Number(LAMPORTS_PER_SOL) : 1;
}

// Every lamport the chain holds, in accounts stored or deferred.
function totalLamports(chain: SandboxChain): number {
  let total = 0n;
  for (const { lamports } of chain.everyAccountBalance()) total += lamports;
  return Number(total);
}

// The `count` accounts holding the most lamports, most first.
function largestAccounts(chain: SandboxChain, count: number) {
  const largest: { address: Address; lamports: bigint }[] = [];
  for (const { address, lamports } of chain.everyAccountBalance()) {
    if (largest.length === count && lamports <= (largest[count - 1]?.lamports ?? 0n)) continue;
    largest.push({ address, lamports });
    largest.sort((a, b) => (a.lamports === b.lamports ? 0 : a.lamports > b.lamports ? -1 : 1));
    if (largest.length > count) largest.pop();
  }
  return largest.map(({ address, lamports }) => ({ address, lamports: Number(lamports) }));
}

// Agave reads an epoch's rewards from the first block of the next epoch: -32004 until that block
// exists, then one entry per address, null with no reward (none is ever paid here).
async function inflationRewards(chain: SandboxChain, params: Params) {
  const addresses = params[0];
  if (!Array.isArray(addresses)) throw invalid("Invalid params: expected an array of addresses");
  if (addresses.length > MAX_INFLATION_REWARD_ADDRESSES) {
    throw invalid(`Too many inputs provided; max ${MAX_INFLATION_REWARD_ADDRESSES}`);
  }
  for (let i = 0; i < addresses.length; i++) addressParam(addresses, i, "address");
  const config = configParam(params, 1);
  const currentEpoch = Math.floor(Number(await chain.getSlot()) / SLOTS_PER_EPOCH);
  if (config.epoch !== undefined && !isCount(config.epoch)) {
    throw invalid("Invalid params: epoch must be a non-negative integer");
  }
  const epoch = config.epoch ?? Math.max(currentEpoch - 1, 0);
  const rewardSlot = (epoch + 1) * SLOTS_PER_EPOCH;
  if (rewardSlot > Number(await chain.getSlot())) {
    throw new ChainError(RPC_ERROR.blockNotAvailable, `Block not available for slot ${rewardSlot}`);
  }
  return addresses.map(() => null);
}
