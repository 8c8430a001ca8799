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
import { type WebSocket, WebSocketServer } from "ws";
import { hashSecret } from "../../api-keys/store.js";
import { StreamCredentials } from "../../http/stream-peers.js";
import { PUBSUB_LIMITS } from "../../limits.js";
import { ChainError, RPC_ERROR } from "../errors.js";
import { fanOutChainEvents } from "./pubsub-fan-out.js";
import { PubSubMethods } from "./pubsub-methods.js";
import { type Subscriber, SubscriptionRegistry } from "./pubsub-registry.js";
import {
  type AccessGate,
  createBoundedHttpServer,
  type HttpListenerLimits,
  httpLimitsWith,
  type ListenerLogger,
} from "./rpc-server.js";
import type { SandboxChain } from "./sandbox-chain.js";

/** Bounds of the PubSub (PUBSUB_LIMITS by default). */
export interface PubSubLimits {
  frameBytes: number;
  subscriptionsPerSocket: number;
  outboundBufferBytes: number;
  pingMs: number;
  socketsPerAddress: number;
}

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
  const { logger } = options;
  const warn = (object: object, message: string) =>
    (logger?.warn ?? logger?.info)?.call(logger, object, message);
  const registry = new SubscriptionRegistry();
  const stopFanOut = await fanOutChainEvents(chain, registry, warn);
  const methods = new PubSubMethods(chain, registry, limits.subscriptionsPerSocket);
  const transport = new PubSubTransport(registry, methods, limits, options, warn);
  await transport.listen(options.port, options.host);
  return {
    port: transport.port,
    stats: () => ({ sockets: transport.sockets, subscriptions: registry.size }),
    async close() {
      stopFanOut();
      await transport.close();
    },
  };
}

/** One open socket, as the registry sees it. */
class Peer implements Subscriber {
  /** Whether it answered the last ping (or sent anything) since. */
  alive = true;

  constructor(
    readonly socket: WebSocket,
    private readonly outboundBufferBytes: number,
    private readonly onSlowReader: (peer: Peer) => void,
  ) {}

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  send(message: unknown): void {
    if (!this.open) return;
    this.socket.send(JSON.stringify(message));
    // A client that does not read would otherwise make the server hold every notification for it.
    if (this.socket.bufferedAmount > this.outboundBufferBytes) this.onSlowReader(this);
  }
}

/** The WebSocket side: admits upgrades within bounds, frames JSON-RPC, and keeps sockets alive. */
class PubSubTransport {
  private readonly server: http.Server;
  private readonly wss: WebSocketServer;
  private readonly peers = new Set<Peer>();
  private readonly openByAddress = new Map<string, number>();
  // An upgrade is checked once: without this a socket would outlive the key that opened it.
  private readonly credentials = new StreamCredentials();
  private readonly pinger: NodeJS.Timeout;
  private readonly stopHearingKeys?: () => void;

  constructor(
    private readonly registry: SubscriptionRegistry,
    private readonly methods: PubSubMethods,
    private readonly limits: PubSubLimits,
    private readonly options: PubSubOptions,
    private readonly warn: (object: object, message: string) => void,
  ) {
    this.server = createBoundedHttpServer(httpLimitsWith(options.limits?.http), (_request, response) => {
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
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: limits.frameBytes,
      allowSynchronousEvents: false,
    });
    this.stopHearingKeys = options.onInvalidated?.((secretHashes) => {
      const closed = this.credentials.closeInvalidated(secretHashes);
      if (closed > 0)
        options.logger?.info({ sockets: closed }, "pubsub sockets of an invalidated API key closed (1008)");
    });
    this.pinger = setInterval(() => this.pingAll(), limits.pingMs);
    this.pinger.unref();
    this.server.on("upgrade", (request: http.IncomingMessage, socket: Socket, head: Buffer) =>
      this.admit(request, socket, head),
    );
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get sockets(): number {
    return this.peers.size;
  }

  async listen(port: number, host: string): Promise<void> {
    const { server } = this;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    clearInterval(this.pinger);
    this.stopHearingKeys?.();
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Upgrades a request within the per-address bound and past `access`, or refuses it. */
  private admit(request: http.IncomingMessage, socket: Socket, head: Buffer): void {
    const { limits, openByAddress } = this;
    const { access } = this.options;
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
      this.wss.handleUpgrade(request, socket, head, (ws) => this.connect(ws, secretHash));
    };
    if (!access) {
      upgrade();
      return;
    }
    access(request).then(
      (refusal) => (refusal === null ? upgrade() : refuseUpgrade(socket, 401, "unauthorized", refusal)),
      () => refuseUpgrade(socket, 401, "unauthorized", "the API key could not be checked"),
    );
  }

  private connect(socket: WebSocket, secretHash: string | undefined): void {
    const peer = new Peer(socket, this.limits.outboundBufferBytes, () => {
      this.warn(
        { bufferedBytes: socket.bufferedAmount },
        "pubsub client does not read; socket closed (1008)",
      );
      this.drop(peer, 1008, "client too slow: outbound buffer limit exceeded");
    });
    this.peers.add(peer);
    if (secretHash !== undefined) {
      this.credentials.track(socket, secretHash, (code, reason) => this.drop(peer, code, reason));
    }
    socket.on("message", (raw) => this.onMessage(peer, raw));
    socket.on("pong", () => {
      peer.alive = true;
    });
    socket.on("close", () => {
      this.peers.delete(peer);
      this.registry.removeAll(peer);
    });
    // ws has already answered a protocol error (1009 for a frame over maxPayload) with a close frame.
    socket.on("error", (error: Error & { code?: string }) => {
      this.warn({ code: error.code, reason: error.message }, "pubsub socket error; socket closed");
      this.registry.removeAll(peer);
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    });
  }

  private onMessage(peer: Peer, raw: Buffer | ArrayBuffer | Buffer[]): void {
    peer.alive = true;
    const request = parseRequest(raw.toString());
    if (request.kind === "notification") return;
    if (request.kind === "invalid") {
      peer.send({ jsonrpc: "2.0", error: request.error, id: request.id });
      return;
    }
    const { id } = request;
    this.methods.call(peer, request.method, request.params).then(
      (result) => peer.send({ jsonrpc: "2.0", result, id }),
      (error: unknown) => {
        const body =
          error instanceof ChainError
            ? { code: error.code, message: error.message }
            : { code: RPC_ERROR.internalError, message: "Internal error" };
        peer.send({ jsonrpc: "2.0", error: body, id });
      },
    );
  }

  /** Closes a socket now: its subscriptions end at once, and it is cut if it does not close soon. */
  private drop(peer: Peer, code: number, reason: string): void {
    this.registry.removeAll(peer);
    peer.socket.close(code, reason);
    setTimeout(() => peer.socket.terminate(), CLOSE_GRACE_MS).unref();
  }

  // A socket that did not answer the previous ping (nor sent anything since) is gone.
  private pingAll(): void {
    for (const peer of this.peers) {
      if (!peer.alive) {
        this.registry.removeAll(peer);
        peer.socket.terminate();
        continue;
      }
      peer.alive = false;
      if (peer.open) peer.socket.ping();
    }
  }
}

type ParsedFrame =
  | { kind: "request"; id: number | string; method: string; params: unknown[] }
  | { kind: "notification" }
  | { kind: "invalid"; id: number | string | null; error: { code: number; message: string } };

/** Reads one text frame as a JSON-RPC request. */
function parseRequest(text: string): ParsedFrame {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: "invalid", id: null, error: { code: RPC_ERROR.parseError, message: "Parse error" } };
  }
  // As Agave and our JSON-RPC over HTTP: what is not a request object (null, a number, a string, an
  // array: PubSub takes no batches) is an invalid request, and so is an id that is not a string or number.
  const request: { id?: unknown; method?: unknown; params?: unknown } | undefined =
    typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : undefined;
  const { id: rawId, method } = request ?? {};
  // Notifications (a method and no id), such as web3.js's keep-alive pings, get no answer.
  if (request && (rawId === undefined || rawId === null) && typeof method === "string") {
    return { kind: "notification" };
  }
  const id = typeof rawId === "number" || typeof rawId === "string" ? rawId : null;
  if (!request || id === null || typeof method !== "string") {
    return { kind: "invalid", id, error: { code: RPC_ERROR.invalidRequest, message: "Invalid request" } };
  }
  return { kind: "request", id, method, params: Array.isArray(request.params) ? request.params : [] };
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
