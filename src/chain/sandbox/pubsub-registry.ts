/**
 * The PubSub's live subscriptions: their ids, who holds each, and the indexes by signature, account
 * and slot that a chain event is matched against. Knows nothing of sockets: a subscriber is anything
 * that can be sent a message.
 */
import type { Address } from "@solana/kit";
import type { AccountEncoding } from "./rpc-encoding.js";

/** Who holds subscriptions: one open socket. */
export interface Subscriber {
  readonly open: boolean;
  send(message: unknown): void;
}

export type Subscription =
  | { kind: "signature"; subscriber: Subscriber; signature: string }
  | { kind: "account"; subscriber: Subscriber; address: Address; encoding: AccountEncoding }
  | { kind: "slot"; subscriber: Subscriber };

const NOTIFICATION_METHOD = {
  signature: "signatureNotification",
  account: "accountNotification",
  slot: "slotNotification",
};

export class SubscriptionRegistry {
  private readonly byId = new Map<number, Subscription>();
  private readonly bySubscriber = new Map<Subscriber, Set<number>>();
  private readonly bySignature = new Map<string, Set<number>>();
  private readonly byAccount = new Map<string, Set<number>>();
  private readonly slotIds = new Set<number>();
  private lastId = -1;

  get size(): number {
    return this.byId.size;
  }

  /** Ids are never reused, not even those of subscriptions that were refused. */
  nextId(): number {
    return ++this.lastId;
  }

  get(id: number): Subscription | undefined {
    return this.byId.get(id);
  }

  countOf(subscriber: Subscriber): number {
    return this.bySubscriber.get(subscriber)?.size ?? 0;
  }

  add(id: number, subscription: Subscription): void {
    this.byId.set(id, subscription);
    indexAdd(this.bySubscriber, subscription.subscriber, id);
    if (subscription.kind === "signature") indexAdd(this.bySignature, subscription.signature, id);
    else if (subscription.kind === "account") indexAdd(this.byAccount, subscription.address, id);
    else this.slotIds.add(id);
  }

  remove(id: number): boolean {
    const subscription = this.byId.get(id);
    if (!subscription) return false;
    this.byId.delete(id);
    indexDelete(this.bySubscriber, subscription.subscriber, id);
    if (subscription.kind === "signature") indexDelete(this.bySignature, subscription.signature, id);
    else if (subscription.kind === "account") indexDelete(this.byAccount, subscription.address, id);
    else this.slotIds.delete(id);
    return true;
  }

  removeAll(subscriber: Subscriber): void {
    for (const id of this.bySubscriber.get(subscriber) ?? []) this.remove(id);
  }

  // The id lists below are copies: notifying may end subscriptions (or drop a slow subscriber).
  signatureIds(signature: string): number[] {
    return [...(this.bySignature.get(signature) ?? [])];
  }

  accountIds(address: string): number[] {
    return [...(this.byAccount.get(address) ?? [])];
  }

  slotSubscriptionIds(): number[] {
    return [...this.slotIds];
  }

  followedAccounts(): string[] {
    return [...this.byAccount.keys()];
  }

  get followedAccountCount(): number {
    return this.byAccount.size;
  }

  notify(id: number, subscription: Subscription, result: unknown): void {
    subscription.subscriber.send({
      jsonrpc: "2.0",
      method: NOTIFICATION_METHOD[subscription.kind],
      params: { result, subscription: id },
    });
  }
}

function indexAdd<K>(index: Map<K, Set<number>>, key: K, id: number): void {
  let ids = index.get(key);
  if (!ids) {
    ids = new Set();
    index.set(key, ids);
  }
  ids.add(id);
}

function indexDelete<K>(index: Map<K, Set<number>>, key: K, id: number): void {
  const ids = index.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(key);
}
