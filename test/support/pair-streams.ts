/**
 * Clients and stand-in sockets for the pair streams (`/quote-stream`, `/book-stream`): a real `ws`
 * client that keeps what it receives and waits for a message by event, and a server-side socket
 * double whose `bufferedAmount` a test sets.
 */
import { EventEmitter } from "node:events";
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import WebSocket from "ws";

/** What every stream message may carry: a frame's slot, or a bad_request's type and message. */
export interface StreamMessage {
  u?: number;
  type?: string;
  message?: string;
}

/** A connected client that records every message it receives, parsed. */
export interface RecordingClient<F> {
  socket: WebSocket;
  messages: F[];
  /** Removes and returns the first message matching `predicate` (and every one before it), waiting for it. */
  next(predicate: (message: F) => boolean, timeoutMs?: number): Promise<F>;
  send(message: unknown): void;
}

/** Opens a WebSocket to `url` and records what it receives. */
export async function connectStream<F>(
  url: string,
  options: WebSocket.ClientOptions = {},
): Promise<RecordingClient<F>> {
  const socket = new WebSocket(url, options);
  const messages: F[] = [];
  const arrived = new EventEmitter();
  socket.on("message", (data) => {
    messages.push(JSON.parse(data.toString()) as F);
    arrived.emit("message");
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const next = (predicate: (message: F) => boolean, timeoutMs = 5_000): Promise<F> =>
    new Promise((resolve, reject) => {
      const look = () => {
        const index = messages.findIndex(predicate);
        if (index < 0) return false;
        clearTimeout(timer);
        arrived.off("message", look);
        resolve(messages.splice(0, index + 1).pop() as F);
        return true;
      };
      const timer = setTimeout(() => {
        arrived.off("message", look);
        reject(new Error(`no such message; got ${JSON.stringify(messages).slice(0, 500)}`));
      }, timeoutMs);
      if (!look()) arrived.on("message", look);
    });
  return { socket, messages, next, send: (message) => socket.send(JSON.stringify(message)) };
}

/** Serves `accept` at `path` on a listener of its own (for a hub with test options); returns its ws URL. */
export async function serveStream(
  path: string,
  accept: (socket: WebSocket) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify();
  await app.register(websocket);
  app.get(path, { websocket: true }, (socket) => accept(socket));
  const url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}${path}`;
  return { url, close: () => app.close() };
}

/** A stand-in for a server-side socket: keeps the frames sent, reports the `bufferedAmount` a test sets. */
export class FakeSocket<F> extends EventEmitter {
  readonly frames: F[] = [];
  /** How often the hub looked at `bufferedAmount`: once per frame pass. */
  bufferedReads = 0;
  private buffered = 0;
  closedWith: number | undefined;

  constructor(private readonly onSend: (socket: FakeSocket<F>) => void = () => {}) {
    super();
  }

  get bufferedAmount(): number {
    this.bufferedReads += 1;
    return this.buffered;
  }

  set bufferedAmount(bytes: number) {
    this.buffered = bytes;
  }

  send(data: string, _options?: unknown, written?: () => void): void {
    this.frames.push(JSON.parse(data) as F);
    this.onSend(this);
    written?.();
  }

  close(code: number): void {
    this.closedWith ??= code;
    this.emit("close");
  }

  ping(): void {}
  terminate(): void {}

  /** A message from the client. */
  receive(message: unknown): void {
    this.emit("message", Buffer.from(JSON.stringify(message)), false);
  }

  /** This stand-in, typed as the socket a hub accepts. */
  get asSocket(): WebSocket {
    return this as unknown as WebSocket;
  }
}

/** Resolves once `condition` holds, checking it every 10 ms; rejects after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
