/**
 * The PubSub's JSON-RPC methods: `signatureSubscribe`, `accountSubscribe`, `slotSubscribe`,
 * `rootSubscribe`, `logsSubscribe`, `programSubscribe` and their unsubscribes, with their params
 * checked (pubsub-params.ts) and the per-socket subscription limit applied.
 */
import { ChainError, RPC_ERROR } from "../errors.js";
import {
  configOf,
  isAccountEncoding,
  logsFilterOf,
  notifyReceivedOf,
  programParamsOf,
} from "./pubsub-params.js";
import type { Subscriber, Subscription, SubscriptionKind, SubscriptionRegistry } from "./pubsub-registry.js";
import { assertAddressParam, assertSignatureParam } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";

const UNSUBSCRIBE: Record<string, SubscriptionKind> = {
  signatureUnsubscribe: "signature",
  accountUnsubscribe: "account",
  slotUnsubscribe: "slot",
  rootUnsubscribe: "root",
  logsUnsubscribe: "logs",
  programUnsubscribe: "program",
};

/** Reads a subscribe method's params into the subscription it asks for (signatures apart). */
type SubscriptionReader = (subscriber: Subscriber, params: unknown[]) => Subscription;

const SUBSCRIBE: Record<string, SubscriptionReader> = {
  slotSubscribe: (subscriber, params) => {
    noParams(params);
    return { kind: "slot", subscriber };
  },
  rootSubscribe: (subscriber, params) => {
    noParams(params);
    return { kind: "root", subscriber };
  },
  accountSubscribe: (subscriber, params) => {
    const address = params[0];
    if (typeof address !== "string") throw ChainError.invalidParams("Invalid params: expected a pubkey");
    assertAddressParam(address);
    const config = configOf(params[1]);
    const encoding = config.encoding ?? "base64";
    if (!isAccountEncoding(encoding)) throw ChainError.invalidParams("Invalid params: unknown encoding");
    return { kind: "account", subscriber, address, encoding };
  },
  logsSubscribe: (subscriber, params) => {
    const mentions = logsFilterOf(params[0]);
    configOf(params[1]);
    return { kind: "logs", subscriber, mentions };
  },
  programSubscribe: (subscriber, params) => ({ kind: "program", subscriber, ...programParamsOf(params) }),
};

// Solana's slot and root subscriptions take no params (Agave: "No parameters were expected").
function noParams(params: unknown[]): void {
  if (params.length > 0) throw ChainError.invalidParams("Invalid parameters: No parameters were expected");
}

export class PubSubMethods {
  constructor(
    private readonly chain: SandboxChain,
    private readonly registry: SubscriptionRegistry,
    private readonly subscriptionsPerSocket: number,
  ) {}

  /** Answers one request: a subscription id, or whether an unsubscribe ended one; throws ChainError. */
  async call(subscriber: Subscriber, method: string, params: unknown[]): Promise<number | boolean> {
    // Only PubSub's own methods: `__proto__` or `constructor` is no method but not found.
    const unsubscribeKind = Object.hasOwn(UNSUBSCRIBE, method) ? UNSUBSCRIBE[method] : undefined;
    if (unsubscribeKind) return this.unsubscribe(subscriber, unsubscribeKind, params[0]);
    const read = Object.hasOwn(SUBSCRIBE, method) ? SUBSCRIBE[method] : undefined;
    if (!read && method !== "signatureSubscribe") {
      throw new ChainError(RPC_ERROR.methodNotFound, "Method not found");
    }
    this.assertRoom(subscriber);
    // Params are checked before an id is taken: a refused subscription uses none.
    if (read) {
      const subscription = read(subscriber, params);
      const id = this.registry.nextId();
      this.registry.add(id, subscription);
      return id;
    }
    return this.subscribeSignature(subscriber, params);
  }

  private assertRoom(subscriber: Subscriber): void {
    if (this.registry.countOf(subscriber) >= this.subscriptionsPerSocket) {
      // Solana's own words and code for its node-wide subscription limit.
      throw new ChainError(
        RPC_ERROR.internalError,
        `Internal Error: Subscription refused. This socket holds ${this.subscriptionsPerSocket} subscriptions, the limit; unsubscribe first`,
      );
    }
  }

  private unsubscribe(subscriber: Subscriber, kind: SubscriptionKind, id: unknown): boolean {
    if (typeof id !== "number") throw ChainError.invalidParams("Invalid params: expected a subscription id");
    const subscription = this.registry.get(id);
    if (!subscription || subscription.kind !== kind || subscription.subscriber !== subscriber) {
      throw ChainError.invalidParams("Invalid subscription id.");
    }
    return this.registry.remove(id);
  }

  private async subscribeSignature(subscriber: Subscriber, params: unknown[]): Promise<number> {
    const signature = params[0];
    if (typeof signature !== "string") throw ChainError.invalidParams("Invalid params: expected a signature");
    assertSignatureParam(signature);
    const notifyReceived = notifyReceivedOf(configOf(params[1]));
    const id = this.registry.nextId();
    const subscription: Subscription = { kind: "signature", subscriber, signature, notifyReceived };
    const [status] = await this.chain.getSignatureStatuses([signature]);
    if (status) {
      // Already committed: a validator notifies at once (after the subscription id) and ends it.
      const result = { context: { slot: Number(status.slot) }, value: { err: status.err } };
      setImmediate(() => this.registry.notify(id, subscription, result));
      return id;
    }
    // The socket may have closed, or filled up, while the status was read.
    if (!subscriber.open || this.registry.countOf(subscriber) >= this.subscriptionsPerSocket) {
      throw new ChainError(RPC_ERROR.internalError, "Internal Error: Subscription refused.");
    }
    this.registry.add(id, subscription);
    return id;
  }
}
