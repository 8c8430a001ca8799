/**
 * The PubSub's JSON-RPC methods: `signatureSubscribe`, `accountSubscribe`, `slotSubscribe` and their
 * unsubscribes, with their params checked and the per-socket subscription limit applied.
 */
import { ChainError, RPC_ERROR } from "../errors.js";
import type { Subscriber, SubscriptionRegistry } from "./pubsub-registry.js";
import { type AccountEncoding, assertAddressParam, assertSignatureParam } from "./rpc-encoding.js";
import type { SandboxChain } from "./sandbox-chain.js";

const UNSUBSCRIBE = {
  signatureUnsubscribe: "signature",
  accountUnsubscribe: "account",
  slotUnsubscribe: "slot",
} as const;
const ACCOUNT_ENCODINGS = new Set<unknown>(["base64", "base58", "jsonParsed", "base64+zstd"]);

export class PubSubMethods {
  constructor(
    private readonly chain: SandboxChain,
    private readonly registry: SubscriptionRegistry,
    private readonly subscriptionsPerSocket: number,
  ) {}

  /** Answers one request: a subscription id, or whether an unsubscribe ended one; throws ChainError. */
  async call(subscriber: Subscriber, method: string, params: unknown[]): Promise<number | boolean> {
    // Only PubSub's own methods: `__proto__` or `constructor` is no unsubscribe method but not found.
    const unsubscribeKind = Object.hasOwn(UNSUBSCRIBE, method)
      ? UNSUBSCRIBE[method as keyof typeof UNSUBSCRIBE]
      : undefined;
    if (unsubscribeKind) return this.unsubscribe(subscriber, unsubscribeKind, params[0]);
    if (method !== "slotSubscribe" && method !== "accountSubscribe" && method !== "signatureSubscribe") {
      throw new ChainError(RPC_ERROR.methodNotFound, "Method not found");
    }
    if (this.registry.countOf(subscriber) >= this.subscriptionsPerSocket) {
      // Solana's own words and code for its node-wide subscription limit.
      throw new ChainError(
        RPC_ERROR.internalError,
        `Internal Error: Subscription refused. This socket holds ${this.subscriptionsPerSocket} subscriptions, the limit; unsubscribe first`,
      );
    }
    const id = this.registry.nextId();
    if (method === "slotSubscribe") this.registry.add(id, { kind: "slot", subscriber });
    else if (method === "accountSubscribe") this.subscribeAccount(subscriber, id, params);
    else await this.subscribeSignature(subscriber, id, params[0]);
    return id;
  }

  private unsubscribe(subscriber: Subscriber, kind: string, id: unknown): boolean {
    if (typeof id !== "number") throw ChainError.invalidParams("Invalid params: expected a subscription id");
    const subscription = this.registry.get(id);
    if (!subscription || subscription.kind !== kind || subscription.subscriber !== subscriber) {
      throw ChainError.invalidParams("Invalid subscription id.");
    }
    return this.registry.remove(id);
  }

  private subscribeAccount(subscriber: Subscriber, id: number, params: unknown[]): void {
    const address = params[0];
    if (typeof address !== "string") throw ChainError.invalidParams("Invalid params: expected a pubkey");
    assertAddressParam(address);
    const config = params[1] ?? {};
    if (typeof config !== "object" || Array.isArray(config)) {
      throw ChainError.invalidParams("Invalid params: config must be an object");
    }
    const encoding = "encoding" in config ? config.encoding : "base64";
    if (!isAccountEncoding(encoding)) throw ChainError.invalidParams("Invalid params: unknown encoding");
    this.registry.add(id, { kind: "account", subscriber, address, encoding });
  }

  private async subscribeSignature(subscriber: Subscriber, id: number, signature: unknown): Promise<void> {
    if (typeof signature !== "string") throw ChainError.invalidParams("Invalid params: expected a signature");
    assertSignatureParam(signature);
    const [status] = await this.chain.getSignatureStatuses([signature]);
    if (status) {
      // Already committed: a validator notifies at once (after the subscription id) and ends it.
      const result = { context: { slot: Number(status.slot) }, value: { err: status.err } };
      setImmediate(() => this.registry.notify(id, { kind: "signature", subscriber, signature }, result));
      return;
    }
    // The socket may have closed, or filled up, while the status was read.
    if (!subscriber.open || this.registry.countOf(subscriber) >= this.subscriptionsPerSocket) {
      throw new ChainError(RPC_ERROR.internalError, "Internal Error: Subscription refused.");
    }
    this.registry.add(id, { kind: "signature", subscriber, signature });
  }
}

function isAccountEncoding(value: unknown): value is AccountEncoding {
  return ACCOUNT_ENCODINGS.has(value);
}
