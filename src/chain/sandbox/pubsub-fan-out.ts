/**
 * Turns the chain's events into PubSub notifications: each commit notifies the signatures it settles
 * and the accounts it touches, and each new slot notifies the slot subscriptions.
 */
import type { Address } from "@solana/kit";
import { every } from "../../every.js";
import { ChainError } from "../errors.js";
import { SYSTEM_PROGRAM } from "../programs.js";
import { decodeMint } from "../token-layout.js";
import type { CommitEvent } from "./commit-pipeline.js";
import type { SubscriptionRegistry } from "./pubsub-registry.js";
import { type AccountEncoding, encodeAccount } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOT_MS } from "./slot-clock.js";

/** Notifies `registry`'s subscriptions of `chain`'s commits and slots until the returned stop is called. */
export async function fanOutChainEvents(
  chain: SandboxChain,
  registry: SubscriptionRegistry,
  warn: (object: object, message: string) => void,
): Promise<() => void> {
  const stopListening = chain.onCommit((event) => notifyCommit(chain, registry, event));
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
  };
}

function notifyCommit(chain: SandboxChain, registry: SubscriptionRegistry, event: CommitEvent): void {
  const context = { slot: Number(event.slot) };
  for (const tx of event.transactions) {
    // A signature notifies once: its subscription ends with it.
    for (const id of registry.signatureIds(tx.signature)) {
      const subscription = registry.get(id);
      registry.remove(id);
      if (subscription) registry.notify(id, subscription, { context, value: { err: tx.err } });
    }
  }
  // The smaller side is walked: a commit's accounts, or the accounts anyone follows.
  const walkCommit = event.accounts.size <= registry.followedAccountCount;
  for (const address of walkCommit ? event.accounts.keys() : registry.followedAccounts()) {
    if (!walkCommit && !event.accounts.has(address)) continue;
    for (const id of registry.accountIds(address)) {
      const subscription = registry.get(id);
      if (subscription?.kind !== "account") continue;
      let value: unknown;
      try {
        value = accountValue(chain, subscription.address, subscription.encoding);
      } catch (error) {
        // An encoding the account cannot take (base58 of a large account): the subscription ends.
        registry.remove(id);
        if (!(error instanceof ChainError)) throw error;
        continue;
      }
      registry.notify(id, subscription, { context, value });
    }
  }
}

function notifySlot(registry: SubscriptionRegistry, slot: number): void {
  for (const id of registry.slotSubscriptionIds()) {
    const subscription = registry.get(id);
    if (subscription) registry.notify(id, subscription, { parent: Math.max(0, slot - 1), root: slot, slot });
  }
}

function accountValue(chain: SandboxChain, address: Address, encoding: AccountEncoding) {
  const account = chain.peekAccount(address) ?? {
    lamports: 0n,
    owner: SYSTEM_PROGRAM,
    data: new Uint8Array(0),
    executable: false,
  };
  const decimalsOf = (mint: Address) => {
    const mintAccount = chain.peekAccount(mint);
    return mintAccount ? decodeMint(mint, mintAccount.owner, mintAccount.data)?.decimals : undefined;
  };
  return encodeAccount(address, account, encoding, decimalsOf);
}
