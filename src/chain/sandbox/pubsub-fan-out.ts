/**
 * Turns the chain's events into PubSub notifications: each commit notifies the signatures it settles,
 * the logs of its transactions, and the accounts (and programs' accounts) it touches; each send taken
 * notifies the signature subscriptions that asked for `receivedSignature`; each new slot notifies the
 * slot and root subscriptions (every slot is rooted at once here: commits are final).
 */
import type { Address } from "@solana/kit";
import { every } from "../../every.js";
import { addressOf } from "../base58.js";
import type { AccountInfo } from "../chain.js";
import { ChainError } from "../errors.js";
import { SYSTEM_PROGRAM } from "../programs.js";
import { decodeMint } from "../token-layout.js";
import { parseWireTransaction } from "../wire.js";
import type { StoredAccount } from "./commit-batch.js";
import type { CommitEvent } from "./commit-pipeline.js";
import { matchesFilters } from "./pubsub-params.js";
import type { Subscription, SubscriptionRegistry } from "./pubsub-registry.js";
import { type AccountEncoding, type DataSlice, encodeAccount } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOT_MS } from "./slot-clock.js";

type CommittedTransaction = CommitEvent["transactions"][number];

/** Notifies `registry`'s subscriptions of `chain`'s commits and slots until the returned stop is called. */
export async function fanOutChainEvents(
  chain: SandboxChain,
  registry: SubscriptionRegistry,
  warn: (object: object, message: string) => void,
): Promise<() => void> {
  const stopListening = chain.onCommit((event) => notifyCommit(chain, registry, event));
  const stopReceiving = chain.onReceived((signature) => notifyReceived(chain, registry, signature));
  let lastSlot = await chain.getSlot();
  const ticker = every(
    SLOT_MS / 4,
    async () => {
      const slot = await chain.getSlot();
      if (slot === lastSlot) return;
      lastSlot = slot;
      notifySlot(registry, Number(slot));
    },
    { onError: (error) => warn({ err: error }, "pubsub slot notifications failed") },
  );
  return () => {
    ticker.stop();
    stopListening();
    stopReceiving();
  };
}

function notifyCommit(chain: SandboxChain, registry: SubscriptionRegistry, event: CommitEvent): void {
  const context = { slot: Number(event.slot) };
  for (const tx of event.transactions) {
    notifySignature(registry, tx, context);
    notifyLogs(registry, tx, context);
  }
  notifyAccounts(chain, registry, event, context);
  if (registry.hasProgramSubscriptions) notifyPrograms(chain, registry, event, context);
}

// A signature notifies once: its subscription ends with it.
function notifySignature(registry: SubscriptionRegistry, tx: CommittedTransaction, context: object): void {
  for (const id of registry.signatureIds(tx.signature)) {
    const subscription = registry.get(id);
    registry.remove(id);
    if (subscription) registry.notify(id, subscription, { context, value: { err: tx.err } });
  }
}

// Agave's received notification: the subscription stays for the signature's final one.
function notifyReceived(chain: SandboxChain, registry: SubscriptionRegistry, signature: string): void {
  const context = { slot: Number(chain.slots.slot()) };
  for (const id of registry.signatureIds(signature)) {
    const subscription = registry.get(id);
    if (subscription?.kind === "signature" && subscription.notifyReceived) {
      registry.notify(id, subscription, { context, value: "receivedSignature" });
    }
  }
}

function notifyLogs(registry: SubscriptionRegistry, tx: CommittedTransaction, context: object): void {
  const ids = new Set(registry.allLogsIds());
  // The transaction's keys are read only when someone follows an address's mentions.
  if (registry.hasMentions) {
    for (const key of parseWireTransaction(tx.wire).accountKeys) {
      for (const id of registry.mentionIds(addressOf(key))) ids.add(id);
    }
  }
  if (ids.size === 0) return;
  const value = { signature: tx.signature, err: tx.err, logs: tx.logs };
  for (const id of ids) {
    const subscription = registry.get(id);
    if (subscription) registry.notify(id, subscription, { context, value });
  }
}

function notifyAccounts(
  chain: SandboxChain,
  registry: SubscriptionRegistry,
  event: CommitEvent,
  context: object,
): void {
  // The smaller side is walked: a commit's accounts, or the accounts anyone follows.
  const walkCommit = event.accounts.size <= registry.followedAccountCount;
  for (const address of walkCommit ? event.accounts.keys() : registry.followedAccounts()) {
    if (!walkCommit && !event.accounts.has(address)) continue;
    for (const id of registry.accountIds(address)) {
      const subscription = registry.get(id);
      if (subscription?.kind !== "account") continue;
      notifyEncoded(registry, id, subscription, context, () => {
        const account = chain.peekAccount(subscription.address) ?? closedAccount();
        return encoded(chain, subscription.address, account, subscription.encoding);
      });
    }
  }
}

// An account owned by a program notifies that program's subscriptions whose filters it passes; a
// closed account belongs to no program any more, as on a validator.
function notifyPrograms(
  chain: SandboxChain,
  registry: SubscriptionRegistry,
  event: CommitEvent,
  context: object,
): void {
  for (const [address, stored] of event.accounts) {
    if (!stored) continue;
    for (const id of registry.programIds(stored.owner)) {
      const subscription = registry.get(id);
      if (subscription?.kind !== "program" || !matchesFilters(stored.data, subscription.filters)) continue;
      const pubkey = address as Address;
      notifyEncoded(registry, id, subscription, context, () => ({
        pubkey,
        account: encoded(chain, pubkey, infoOf(stored), subscription.encoding, subscription.slice),
      }));
    }
  }
}

// Sends `value()`; an encoding the account cannot take (base58 of a large account) ends the subscription.
function notifyEncoded(
  registry: SubscriptionRegistry,
  id: number,
  subscription: Subscription,
  context: object,
  value: () => unknown,
): void {
  let result: unknown;
  try {
    result = { context, value: value() };
  } catch (error) {
    registry.remove(id);
    if (!(error instanceof ChainError)) throw error;
    return;
  }
  registry.notify(id, subscription, result);
}

function notifySlot(registry: SubscriptionRegistry, slot: number): void {
  for (const id of registry.slotSubscriptionIds()) {
    const subscription = registry.get(id);
    if (subscription) registry.notify(id, subscription, { parent: Math.max(0, slot - 1), root: slot, slot });
  }
  for (const id of registry.rootSubscriptionIds()) {
    const subscription = registry.get(id);
    if (subscription) registry.notify(id, subscription, slot);
  }
}

function closedAccount(): AccountInfo {
  return { lamports: 0n, owner: SYSTEM_PROGRAM, data: new Uint8Array(0), executable: false };
}

function infoOf(stored: StoredAccount): AccountInfo {
  return {
    lamports: stored.lamports,
    owner: stored.owner as Address,
    data: stored.data,
    executable: stored.executable,
  };
}

function encoded(
  chain: SandboxChain,
  address: Address,
  account: AccountInfo,
  encoding: AccountEncoding,
  slice?: DataSlice,
) {
  const decimalsOf = (mint: Address) => {
    const mintAccount = chain.peekAccount(mint);
    return mintAccount ? decodeMint(mint, mintAccount.owner, mintAccount.data)?.decimals : undefined;
  };
  return encodeAccount(address, account, encoding, decimalsOf, slice);
}
