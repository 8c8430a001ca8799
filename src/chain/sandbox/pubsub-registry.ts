/**
 * The PubSub's live subscriptions: their ids, who holds each, and the indexes by signature, account,
 * program, log mention and slot that a chain event is matched against. Knows nothing of sockets: a
 * subscriber is anything that can be sent a message.
 */
import type { Address } from "@solana/kit";
import type { AccountEncoding, DataSlice } from "./rpc-encoding.js";

/** Who holds subscriptions: one open socket. */
export interface Subscriber {
  readonly open: boolean;
  send(message: unknown): void;
}

/** One of `programSubscribe`'s filters, its bytes decoded: every filter must match an account. */
export type ProgramFilter = { dataSize: number } | { memcmp: { offset: number; bytes: Uint8Array } };

export type Subscription =
  | { kind: "signature"; subscriber: Subscriber; signature: string; notifyReceived: boolean }
  | { kind: "account"; subscriber: Subscriber; address: Address; encoding: AccountEncoding }
  | { kind: "slot"; subscriber: Subscriber }
  | { kind: "root"; subscriber: Subscriber }
  /** `mentions` null: every transaction (`all`, `allWithVotes`: the sandbox has no votes). */
  | { kind: "logs"; subscriber: Subscriber; mentions: Address | null }
  | {
      kind: "program";
      subscriber: Subscriber;
      program: Address;
      encoding: AccountEncoding;
      filters: ProgramFilter[];
      slice: DataSlice | undefined;
    };

export type SubscriptionKind = Subscription["kind"];

const NOTIFICATION_METHOD: Record<SubscriptionKind, string> = {
  signature: "signatureNotification",
  account: "accountNotification",
  slot: "slotNotification",
  root: "rootNotification",
  logs: "logsNotification",
  program: "programNotification",
};

// The key a logs subscription without mentions is indexed under (no address is empty).
const ALL_LOGS = "";

/** The key each subscription is indexed under, within its kind's index. */
function indexKeyOf(subscription: Subscription): string {
  switch (subscription.kind) {
    case "signature":
      return subscription.signature;
    case "account":
      return subscription.address;
    case "program":
      return subscription.program;
    case "logs":
      return subscription.mentions ?? ALL_LOGS;
    default:
      return "";
  }
}

export class SubscriptionRegistry {
  private readonly byId = new Map<number, Subscription>();
  private readonly bySubscriber = new Map<Subscriber, Set<number>>();
  private readonly byKind: Record<SubscriptionKind, Map<string, Set<number>>> = {
    signature: new Map(),
    account: new Map(),
    slot: new Map(),
    root: new Map(),
    logs: new Map(),
    program: new Map(),
  };
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
    indexAdd(this.byKind[subscription.kind], indexKeyOf(subscription), id);
  }

  remove(id: number): boolean {
    const subscription = this.byId.get(id);
    if (!subscription) return false;
    this.byId.delete(id);
    indexDelete(this.bySubscriber, subscription.subscriber, id);
    indexDelete(this.byKind[subscription.kind], indexKeyOf(subscription), id);
    return true;
  }

  removeAll(subscriber: Subscriber): void {
    for (const id of this.bySubscriber.get(subscriber) ?? []) this.remove(id);
  }

  // The id lists below are copies: notifying may end subscriptions (or drop a slow subscriber).
  signatureIds(signature: string): number[] {
    return this.ids("signature", signature);
  }

  accountIds(address: string): number[] {
    return this.ids("account", address);
  }

  slotSubscriptionIds(): number[] {
    return this.ids("slot", "");
  }

  rootSubscriptionIds(): number[] {
    return this.ids("root", "");
  }

  /** Logs subscriptions of every transaction. */
  allLogsIds(): number[] {
    return this.ids("logs", ALL_LOGS);
  }

  /** Logs subscriptions of the transactions that mention `address`. */
  mentionIds(address: string): number[] {
    return address === ALL_LOGS ? [] : this.ids("logs", address);
  }

  /** Whether any logs subscription names an address (a transaction's keys are then read). */
  get hasMentions(): boolean {
    const logs = this.byKind.logs;
    return logs.size > (logs.has(ALL_LOGS) ? 1 : 0);
  }

  programIds(program: string): number[] {
    return this.ids("program", program);
  }

  get hasProgramSubscriptions(): boolean {
    return this.byKind.program.size > 0;
  }

  followedAccounts(): string[] {
    return [...this.byKind.account.keys()];
  }

  get followedAccountCount(): number {
    return this.byKind.account.size;
  }

  notify(id: number, subscription: Subscription, result: unknown): void {
    subscription.subscriber.send({
      jsonrpc: "2.0",
      method: NOTIFICATION_METHOD[subscription.kind],
      params: { result, subscription: id },
    });
  }

  private ids(kind: SubscriptionKind, key: string): number[] {
    return [...(this.byKind[kind].get(key) ?? [])];
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
