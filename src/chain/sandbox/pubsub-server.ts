/**
 * The sandbox's Solana PubSub WebSocket (default :8900): `signatureSubscribe`, `accountSubscribe`,
 * `slotSubscribe` and their unsubscribes, with notifications shaped as a validator sends them.
 * Signatures notify once, on commit (or at once if already committed), then end their subscription.
 *
 * Every socket is bounded (PUBSUB_LIMITS): inbound frame size, live subscriptions, bytes queued for a
 * client that does not read, liveness (pings), and open sockets per client address. A socket opened
 * with an API key (production) is closed with 1008 once that key stops being valid.
 */
import type http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Address } from "@solana/kit";
import { type WebSocket, WebSocketServer } from "ws";
import { hashSecret } from "../../api-keys/store.js";
import { every } from "../../every.js";
import { StreamCredentials } from "../../http/stream-peers.js";
import { PUBSUB_LIMITS } from "../../limits.js";
import { ChainError, RPC_ERROR } from "../errors.js";
import { SYSTEM_PROGRAM } from "../programs.js";
import { decodeMint } from "../token-layout.js";
import type { CommitEvent } from "./commit-pipeline.js";
import {
  type AccountEncoding,
  assertAddressParam,
  assertSignatureParam,
  encodeAccount,
} from "./rpc-encoding.js";
import {
  type AccessGate,
  createBoundedHttpServer,
  type HttpListenerLimits,
  httpLimitsWith,
  type ListenerLogger,
} from "./rpc-server.js";
import type { SandboxChain } from "./sandbox-chain.js";
import { SLOT_MS } from "./slot-clock.js";

/** Bounds of the PubSub (PUBSUB_LIMITS by default). */
export interface PubSubLimits {
  frameBytes: number;
  subscriptionsPerSocket: number;
  outboundBufferBytes: number;
  pingMs: number;
  socketsPerAddress: number;
}

/** One open socket and what it holds. */
interface Peer {
  socket: WebSocket;
  ids: Set<number>;
  /** Whether it answered the last ping (or sent anything) since. */
  alive: boolean;
}

type Subscription =
  | { kind: "signature"; peer: Peer; signature: string }
  | { kind: "account"; peer: Peer; address: Address; encoding: AccountEncoding }
  | { kind: "slot"; peer: Peer };

const NOTIFICATION_METHOD = {
  signature: "signatureNotification",
  account: "accountNotification",
  slot: "slotNotification",
};
const UNSUBSCRIBE = {
  signatureUnsubscribe: "signature",
  accountUnsubscribe: "account",
  slotUnsubscribe: "slot",
} as const;
const ACCOUNT_ENCODINGS = new Set<unknown>(["base64", "base58", "jsonParsed", "base64+zstd"]);

// A socket closed by the server gets this long to take its close frame before it is cut.
const CLOSE_GRACE_MS = 1_000;

export interface PubSubServer {
  port: number;
  /** Open sockets and live subscriptions, for tests and metrics. */
  stats(): { sockets: number; subscriptions: number };
  close(): Promise<void>;
}

export interface PubSubOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Overrides of PUBSUB_LIMITS and HTTP_LIMITS (tests shorten them). */
  limits?: { pubsub?: Partial<PubSubLimits>; http?: Partial<HttpListenerLimits> };
  /** Checks every upgrade (production with API keys). */
  access?: AccessGate;
  /**
   * Hears the hashes of API key secrets that stopped being valid, so that the sockets `access` let in
   * with them are closed; returns a function that stops listening.
   */
  onInvalidated?: (listener: (secretHashes: ReadonlySet<string>) => void) => () => void;
  logger?: ListenerLogger;
}

/** Starts the PubSub WebSocket server for `chain` on `options.host:options.port`. */
export async function startPubSubServer(chain: SandboxChain, options: PubSubOptions): Promise<PubSubServer> {
  const limits: PubSubLimits = { ...PUBSUB_LIMITS, ...options.limits?.pubsub };
  const { access, logger } = options;
  const warn = (object: object, message: string) =>
    (logger?.warn ?? logger?.info)?.call(logger, object, message);
  const server = createBoundedHttpServer(httpLimitsWith(options.limits?.http), (_request, response) => {
    const body = JSON.stringify({
      code: "upgrade_required",
      msg: "this is the chain's PubSub WebSocket: connect with a WebSocket upgrade",
    });
    response
      .writeHead(426, { "content-type": "application/json; charset=utf-8", upgrade: "websocket" })
      .end(body);
  });
  // No per-message compression (the default): a small compressed frame could inflate past maxPayload.
  // One message per event-loop turn: a socket sending a thousand subscribes in one packet must not
  // hold the process for all of them at once (a signature's status may need a storage read).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.frameBytes,
    allowSynchronousEvents: false,
  });
  const peers = new Set<Peer>();
  const openByAddress = new Map<string, number>();
  const subscriptions = new Map<number, Subscription>();
  const bySignature = new Map<string, Set<number>>();
  const byAccount = new Map<string, Set<number>>();
  const slotIds = new Set<number>();
  // An upgrade is checked once: without this a socket would outlive the key that opened it.
  const credentials = new StreamCredentials();
  let nextId = 0;

  const indexAdd = (index: Map<string, Set<number>>, key: string, id: number) => {
    let ids = index.get(key);
    if (!ids) {
      ids = new Set();
      index.set(key, ids);
    }
    ids.add(id);
  };
  const indexDelete = (index: Map<string, Set<number>>, key: string, id: number) => {
    const ids = index.get(key);
    if (!ids) return;
    ids.delete(id);
    if (ids.size === 0) index.delete(key);
  };
  const add = (id: number, subscription: Subscription) => {
    subscriptions.set(id, subscription);
    subscription.peer.ids.add(id);
    if (subscription.kind === "signature") indexAdd(bySignature, subscription.signature, id);
    else if (subscription.kind === "account") indexAdd(byAccount, subscription.address, id);
    else slotIds.add(id);
  };
  const remove = (id: number) => {
    const subscription = subscriptions.get(id);
    if (!subscription) return false;
    subscriptions.delete(id);
    subscription.peer.ids.delete(id);
    if (subscription.kind === "signature") indexDelete(bySignature, subscription.signature, id);
    else if (subscription.kind === "account") indexDelete(byAccount, subscription.address, id);
    else slotIds.delete(id);
    return true;
  };
  const removeAll = (peer: Peer) => {
    for (const id of peer.ids) remove(id);
  };
  /** Closes a socket now: its subscriptions end at once, and it is cut if it does not close soon. */
  const drop = (peer: Peer, code: number, reason: string) => {
    removeAll(peer);
    peer.socket.close(code, reason);
    setTimeout(() => peer.socket.terminate(), CLOSE_GRACE_MS).unref();
  };

  const send = (peer: Peer, message: unknown) => {
    const { socket } = peer;
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(message));
    // A client that does not read would otherwise make the server hold every notification for it.
    if (socket.bufferedAmount > limits.outboundBufferBytes) {
      warn({ bufferedBytes: socket.bufferedAmount }, "pubsub client does not read; socket closed (1008)");
      drop(peer, 1008, "client too slow: outbound buffer limit exceeded");
    }
  };
  const notify = (id: number, subscription: Subscription, result: unknown) =>
    send(subscription.peer, {
      jsonrpc: "2.0",
      method: NOTIFICATION_METHOD[subscription.kind],
      params: { result, subscription: id },
    });
  const decimalsOf = (mint: Address) => {
    const account = chain.peekAccount(mint);
    return account ? decodeMint(mint, account.owner, account.data)?.decimals : undefined;
  };
  const accountValue = (address: Address, encoding: AccountEncoding) => {
    const account = chain.peekAccount(address) ?? {
      lamports: 0n,
      owner: SYSTEM_PROGRAM,
      data: new Uint8Array(0),
      executable: false,
    };
    return encodeAccount(address, account, encoding, decimalsOf);
  };

  const onCommit = (event: CommitEvent) => {
    const context = { slot: Number(event.slot) };
    for (const tx of event.transactions) {
      const ids = bySignature.get(tx.signature);
      if (!ids) continue;
      for (const id of [...ids]) {
        const subscription = subscriptions.get(id);
        remove(id);
        if (subscription) notify(id, subscription, { context, value: { err: tx.err } });
      }
    }
    // The smaller side is walked: a commit's accounts, or the accounts anyone follows.
    const walkCommit = event.accounts.size <= byAccount.size;
    for (const address of walkCommit ? event.accounts.keys() : [...byAccount.keys()]) {
      if (!walkCommit && !event.accounts.has(address)) continue;
      const ids = byAccount.get(address);
      if (!ids) continue;
      for (const id of [...ids]) {
        const subscription = subscriptions.get(id);
        if (subscription?.kind !== "account") continue;
        let value: unknown;
        try {
          value = accountValue(subscription.address, subscription.encoding);
        } catch (error) {
          // An encoding the account cannot take (base58 of a large account): the subscription ends.
          remove(id);
          if (!(error instanceof ChainError)) throw error;
          continue;
        }
        notify(id, subscription, { context, value });
      }
    }
  };
  const stopListening = chain.onCommit(onCommit);
  const stopHearingKeys = options.onInvalidated?.((secretHashes) => {
    const closed = credentials.closeInvalidated(secretHashes);
    if (closed > 0)
      logger?.info({ sockets: closed }, "pubsub sockets of an invalidated API key closed (1008)");
  });

  let lastSlot = await chain.getSlot();
  const ticker = every(
    SLOT_MS / 4,
    async () => {
      const slot = await chain.getSlot();
      if (slot === lastSlot) return;
      lastSlot = slot;
      const current = Number(slot);
      for (const id of [...slotIds]) {
        const subscription = subscriptions.get(id);
        if (subscription) {
          notify(id, subscription, { parent: Math.max(0, current - 1), root: current, slot: current });
        }
      }
    },
    { onError: (error) => warn({ err: error }, "pubsub slot notifications failed") },
  );

  // A socket that did not answer the previous ping (nor sent anything since) is gone.
  const pinger = setInterval(() => {
    for (const peer of peers) {
      if (!peer.alive) {
        removeAll(peer);
        peer.socket.terminate();
        continue;
      }
      peer.alive = false;
      if (peer.socket.readyState === peer.socket.OPEN) peer.socket.ping();
    }
  }, limits.pingMs);
  pinger.unref();

  const subscribe = async (peer: Peer, method: string, params: unknown[]): Promise<number | boolean> => {
    // Only PubSub's own methods: `__proto__` or `constructor` is no unsubscribe method but not found.
    const unsubscribeKind = Object.hasOwn(UNSUBSCRIBE, method)
      ? UNSUBSCRIBE[method as keyof typeof UNSUBSCRIBE]
      : undefined;
    if (unsubscribeKind) {
      const id = params[0];
      if (typeof id !== "number")
        throw ChainError.invalidParams("Invalid params: expected a subscription id");
      const subscription = subscriptions.get(id);
      if (!subscription || subscription.kind !== unsubscribeKind || subscription.peer !== peer) {
        throw ChainError.invalidParams("Invalid subscription id.");
      }
      return remove(id);
    }
    if (method !== "slotSubscribe" && method !== "accountSubscribe" && method !== "signatureSubscribe") {
      throw new ChainError(RPC_ERROR.methodNotFound, "Method not found");
    }
    if (peer.ids.size >= limits.subscriptionsPerSocket) {
      // Solana's own words and code for its node-wide subscription limit.
      throw new ChainError(
        RPC_ERROR.internalError,
        `Internal Error: Subscription refused. This socket holds ${limits.subscriptionsPerSocket} subscriptions, the limit; unsubscribe first`,
      );
    }
    const id = nextId++;
    if (method === "slotSubscribe") {
      add(id, { kind: "slot", peer });
    } else if (method === "accountSubscribe") {
      const address = params[0];
      if (typeof address !== "string") throw ChainError.invalidParams("Invalid params: expected a pubkey");
      assertAddressParam(address);
      const config = params[1] ?? {};
      if (typeof config !== "object" || Array.isArray(config)) {
        throw ChainError.invalidParams("Invalid params: config must be an object");
      }
      const encoding = "encoding" in config ? config.encoding : "base64";
      if (!isAccountEncoding(encoding)) throw ChainError.invalidParams("Invalid params: unknown encoding");
      add(id, { kind: "account", peer, address, encoding });
    } else {
      const signature = params[0];
      if (typeof signature !== "string")
        throw ChainError.invalidParams("Invalid params: expected a signature");
      assertSignatureParam(signature);
      const [status] = await chain.getSignatureStatuses([signature]);
      if (status) {
        // Already committed: a validator notifies at once (after the subscription id) and ends it.
        setImmediate(() =>
          send(peer, {
            jsonrpc: "2.0",
            method: "signatureNotification",
            params: {
              result: { context: { slot: Number(status.slot) }, value: { err: status.err } },
              subscription: id,
            },
          }),
        );
        return id;
      }
      // The socket may have closed, or filled up, while the status was read.
      if (peer.socket.readyState !== peer.socket.OPEN || peer.ids.size >= limits.subscriptionsPerSocket) {
        throw new ChainError(RPC_ERROR.internalError, "Internal Error: Subscription refused.");
      }
      add(id, { kind: "signature", peer, signature });
    }
    return id;
  };

  const onMessage = (peer: Peer, raw: Buffer | ArrayBuffer | Buffer[]) => {
    peer.alive = true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString());
    } catch {
      send(peer, {
        jsonrpc: "2.0",
        error: { code: RPC_ERROR.parseError, message: "Parse error" },
        id: null,
      });
      return;
    }
    // As Agave and our JSON-RPC over HTTP: what is not a request object (null, a number, a string, an
    // array: PubSub takes no batches) is an invalid request, and so is an id that is not a string or number.
    const request: { id?: unknown; method?: unknown; params?: unknown } | undefined =
      typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : undefined;
    const { id: rawId, method } = request ?? {};
    // Notifications (a method and no id), such as web3.js's keep-alive pings, get no answer.
    if (request && (rawId === undefined || rawId === null) && typeof method === "string") return;
    const id = typeof rawId === "number" || typeof rawId === "string" ? rawId : null;
    if (!request || id === null || typeof method !== "string") {
      send(peer, {
        jsonrpc: "2.0",
        error: { code: RPC_ERROR.invalidRequest, message: "Invalid request" },
        id,
      });
      return;
    }
    const params = Array.isArray(request.params) ? request.params : [];
    subscribe(peer, method, params).then(
      (result) => send(peer, { jsonrpc: "2.0", result, id }),
      (error: unknown) => {
        const body =
          error instanceof ChainError
            ? { code: error.code, message: error.message }
            : { code: RPC_ERROR.internalError, message: "Internal error" };
        send(peer, { jsonrpc: "2.0", error: body, id });
      },
    );
  };

  const connect = (socket: WebSocket, secretHash: string | undefined) => {
    const peer: Peer = { socket, ids: new Set(), alive: true };
    peers.add(peer);
    if (secretHash !== undefined) {
      credentials.track(socket, secretHash, (code, reason) => drop(peer, code, reason));
    }
    socket.on("message", (raw) => onMessage(peer, raw));
    socket.on("pong", () => {
      peer.alive = true;
    });
    socket.on("close", () => {
      peers.delete(peer);
      removeAll(peer);
    });
    // ws has already answered a protocol error (1009 for a frame over maxPayload) with a close frame.
    socket.on("error", (error: Error & { code?: string }) => {
      warn({ code: error.code, reason: error.message }, "pubsub socket error; socket closed");
      removeAll(peer);
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    });
  };

  server.on("upgrade", (request: http.IncomingMessage, socket: Socket, head: Buffer) => {
    // Node removes its own handlers from an upgraded socket: a reset during the checks must not throw.
    socket.on("error", () => socket.destroy());
    const address = socket.remoteAddress ?? "unknown";
    const open = openByAddress.get(address) ?? 0;
    if (open >= limits.socketsPerAddress) {
      refuseUpgrade(
        socket,
        429,
        "rate_limit_exceeded",
        `at most ${limits.socketsPerAddress} open sockets per client address`,
      );
      return;
    }
    // The socket counts from now (its checks included) until it closes, however it ends.
    openByAddress.set(address, open + 1);
    socket.once("close", () => {
      const left = (openByAddress.get(address) ?? 1) - 1;
      if (left > 0) openByAddress.set(address, left);
      else openByAddress.delete(address);
    });
    const upgrade = () => {
      const offered = request.headers["x-api-key"];
      // Only a key `access` accepted is tracked: development's sockets need no key and keep none.
      const secretHash = access && typeof offered === "string" ? hashSecret(offered) : undefined;
      // ws completes the upgrade and calls back synchronously: the socket is tracked in the turn its
      // check ends, before a later key refresh can report that key.
      wss.handleUpgrade(request, socket, head, (ws) => connect(ws, secretHash));
    };
    if (!access) return upgrade();
    access(request).then(
      (refusal) => (refusal === null ? upgrade() : refuseUpgrade(socket, 401, "unauthorized", refusal)),
      () => refuseUpgrade(socket, 401, "unauthorized", "the API key could not be checked"),
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    stats: () => ({ sockets: peers.size, subscriptions: subscriptions.size }),
    async close() {
      ticker.stop();
      clearInterval(pinger);
      stopListening();
      stopHearingKeys?.();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function isAccountEncoding(value: unknown): value is AccountEncoding {
  return ACCOUNT_ENCODINGS.has(value);
}

/** Answers an upgrade with an HTTP error and a `{code, msg}` JSON body, as the venue's API does. */
function refuseUpgrade(socket: Socket, status: number, code: string, msg: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ code, msg });
  const reason = status === 429 ? "Too Many Requests" : "Unauthorized";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  // A client that never closes its side is not waited for.
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
