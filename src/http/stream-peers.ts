/**
 * The connection rules every WebSocket stream shares (contract §6 and the streams issue): the server
 * pings every `pingMs` and ends a peer silent for `silenceMs`; a peer may send at most
 * `maxMessagesPerSecond` messages; a message that is not JSON or breaks the rate gets a
 * `{"type":"bad_request","message"}` frame and the socket stays open. A connection opened with a key
 * is closed (1008) once that key stops being valid (`StreamCredentials`).
 */
import type { WebSocket } from "ws";

export interface PeerRules {
  pingMs: number;
  silenceMs: number;
  maxMessagesPerSecond: number;
}

interface Liveness {
  lastHeard: number;
  windowStart: number;
  windowCount: number;
}

/** The open connections of one stream, each with the state its stream keeps (`P`). */
export class StreamPeers<P extends { readonly socket: WebSocket }> implements Iterable<P> {
  private readonly peers = new Map<P, Liveness>();
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly rules: PeerRules,
    /** Hears every admitted message, parsed from JSON. */
    private readonly onMessage: (peer: P, message: unknown) => void,
  ) {}

  start(): void {
    this.pingTimer = setInterval(() => this.ping(), this.rules.pingMs).unref();
  }

  /** Stops pinging and closes every connection. */
  stop(): void {
    clearInterval(this.pingTimer);
    for (const peer of this.peers.keys()) peer.socket.close(1001, "server shutting down");
    this.peers.clear();
  }

  /** Takes a new connection: its messages, its liveness, its end. */
  add(peer: P): void {
    const now = Date.now();
    const liveness: Liveness = { lastHeard: now, windowStart: now, windowCount: 0 };
    this.peers.set(peer, liveness);
    const { socket } = peer;
    socket.on("pong", () => {
      liveness.lastHeard = Date.now();
    });
    socket.on("message", (data, isBinary) => {
      const at = Date.now();
      liveness.lastHeard = at;
      if (at - liveness.windowStart >= 1_000) {
        liveness.windowStart = at;
        liveness.windowCount = 0;
      }
      liveness.windowCount += 1;
      if (liveness.windowCount > this.rules.maxMessagesPerSecond) {
        badRequest(socket, `more than ${this.rules.maxMessagesPerSecond} messages per second`);
        return;
      }
      let message: unknown;
      try {
        if (isBinary) throw new Error("binary");
        message = JSON.parse(data.toString());
      } catch {
        badRequest(socket, "messages must be JSON text");
        return;
      }
      this.onMessage(peer, message);
    });
    socket.on("close", () => this.peers.delete(peer));
    socket.on("error", () => this.peers.delete(peer));
  }

  /** Ends a connection now (e.g. a consumer too far behind). */
  drop(peer: P, code: number, reason: string): void {
    this.peers.delete(peer);
    peer.socket.close(code, reason);
  }

  get size(): number {
    return this.peers.size;
  }

  /**
   * The open connections, live: one that ends before the iteration reaches it is skipped, one that
   * opens meanwhile is visited (a quote-stream frame pass iterates over several event-loop turns).
   */
  [Symbol.iterator](): Iterator<P> {
    return this.peers.keys();
  }

  private ping(): void {
    const now = Date.now();
    for (const [peer, liveness] of this.peers) {
      if (now - liveness.lastHeard > this.rules.silenceMs) {
        this.peers.delete(peer);
        peer.socket.terminate();
      } else {
        peer.socket.ping();
      }
    }
  }
}

/** What every stream hub shares: its connections under the rules, and how they come and speak. */
export abstract class StreamHub<P extends { readonly socket: WebSocket }> {
  protected readonly subscribers: StreamPeers<P>;

  constructor(rules: PeerRules) {
    this.subscribers = new StreamPeers(rules, (peer, message) => this.handle(peer, message));
  }

  /** Takes a new connection. */
  accept(socket: WebSocket): void {
    this.subscribers.add(this.peerFor(socket));
  }

  /** Connections open now. */
  get size(): number {
    return this.subscribers.size;
  }

  /** The state this stream keeps for a new connection. */
  protected abstract peerFor(socket: WebSocket): P;

  /** Answers one admitted message of a connection, parsed from JSON. */
  protected abstract handle(peer: P, message: unknown): void;
}

/** Tells a peer its message was refused; the connection stays open. */
export function badRequest(socket: WebSocket, message: string): void {
  socket.send(JSON.stringify({ type: "bad_request", message }));
}

/** The close code of a stream whose key stopped being valid (policy violation). */
export const KEY_INVALIDATED_CLOSE = 1008;

/** How a tracked connection is ended when its key stops being valid. */
export type EndConnection = (code: number, reason: string) => void;

/**
 * The open stream connections by the secret that opened them (its hash), for every stream of one app:
 * when the key ring reports secrets that stopped being valid (a revocation, a rotation, the end of a
 * grace period), their connections are closed within that refresh, whichever stream they belong to.
 */
export class StreamCredentials {
  private readonly bySecret = new Map<string, Map<WebSocket, EndConnection>>();

  /**
   * Remembers that `socket` was opened with the secret hashed to `secretHash`, until it closes; `end`
   * closes it (by default a close frame), for a server that has more to let go of than the socket.
   */
  track(
    socket: WebSocket,
    secretHash: string,
    end: EndConnection = (code, reason) => socket.close(code, reason),
  ): void {
    let sockets = this.bySecret.get(secretHash);
    if (!sockets) {
      sockets = new Map();
      this.bySecret.set(secretHash, sockets);
    }
    sockets.set(socket, end);
    socket.once("close", () => {
      sockets.delete(socket);
      if (sockets.size === 0 && this.bySecret.get(secretHash) === sockets) this.bySecret.delete(secretHash);
    });
  }

  /** Closes (1008) every connection opened with one of these secrets; returns how many. */
  closeInvalidated(secretHashes: Iterable<string>): number {
    let closed = 0;
    for (const hash of secretHashes) {
      const sockets = this.bySecret.get(hash);
      if (!sockets) continue;
      this.bySecret.delete(hash);
      for (const end of sockets.values()) {
        end(KEY_INVALIDATED_CLOSE, "API key revoked or expired");
        closed += 1;
      }
    }
    return closed;
  }

  /** Connections opened with a key, open now. */
  get size(): number {
    let size = 0;
    for (const sockets of this.bySecret.values()) size += sockets.size;
    return size;
  }
}
