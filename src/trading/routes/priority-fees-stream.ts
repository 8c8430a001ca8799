/**
 * WebSocket /priority-fees/stream — the priority fee levels (reference §8.2): the current ones as the
 * connection opens, then one frame whenever the estimator's per-slot refresh changes them. Every frame
 * is `{"mediumMicroLamports","highMicroLamports","veryHighMicroLamports"}`, as `GET /priority-fees`.
 * The stream takes no messages: any message gets a `bad_request` frame and the socket stays open.
 */
import type { WebSocket } from "ws";
import { badRequest, StreamHub } from "../../http/stream-peers.js";
import type { ZodApp } from "../../http/types.js";
import type { PriorityFeeEstimator, PriorityFeeLevels } from "../streams/priority-fees.js";

export interface PriorityFeeStreamOptions {
  /** How often the server pings (default 15 s). */
  pingMs?: number;
  /** Silence after which a peer is closed (default 30 s). */
  silenceMs?: number;
  maxMessagesPerSecond?: number;
  /** How often connections are checked for a backlog and sent levels they were held back from (default one slot). */
  checkMs?: number;
  /** Bytes queued on a socket beyond which it is behind: it gets no frame until it has read. */
  maxBufferedBytes?: number;
  /** Checks a connection may stay behind before it is closed (1013). */
  maxChecksBehind?: number;
}

const DEFAULTS: Required<PriorityFeeStreamOptions> = {
  pingMs: 15_000,
  silenceMs: 30_000,
  maxMessagesPerSecond: 50,
  checkMs: 400,
  // A frame is under 100 bytes: this is hundreds of frames a client has not read.
  maxBufferedBytes: 64 * 1024,
  maxChecksBehind: 25,
};

/** Frames are tiny and the same for everyone: never compressed. */
const FRAME_SEND_OPTIONS = { binary: false, compress: false } as const;

const NO_MESSAGES =
  "this stream takes no messages: it sends the priority fee levels on connect and whenever they change";

class FeeListener {
  /** The levels' version last sent here (0: none yet). */
  sentVersion = 0;
  checksBehind = 0;

  constructor(readonly socket: WebSocket) {}
}

/** The `/priority-fees/stream` connections and the frames they are sent. */
export class PriorityFeeStreamHub extends StreamHub<FeeListener> {
  private readonly options: Required<PriorityFeeStreamOptions>;
  /** Bumped whenever the levels change; 0 until the estimator has read the chain. */
  private version = 0;
  private frame = "";
  private stopListening: (() => void) | undefined;
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fees: PriorityFeeEstimator,
    options: PriorityFeeStreamOptions = {},
  ) {
    const rules = { ...DEFAULTS, ...options };
    super(rules);
    this.options = rules;
  }

  start(): void {
    if (this.stopListening) return;
    if (this.fees.ready) this.update(this.fees.levels());
    this.stopListening = this.fees.onChange((levels) => {
      this.update(levels);
      this.sendFrames(false);
    });
    this.checkTimer = setInterval(() => this.sendFrames(true), this.options.checkMs).unref();
    this.subscribers.start();
  }

  /** Stops listening to the estimator and closes every connection. */
  stop(): void {
    this.stopListening?.();
    this.stopListening = undefined;
    clearInterval(this.checkTimer);
    this.subscribers.stop();
  }

  /** A new connection gets the current levels at once (once they have been read). */
  protected peerFor(socket: WebSocket): FeeListener {
    const listener = new FeeListener(socket);
    if (this.version > 0) {
      listener.sentVersion = this.version;
      socket.send(this.frame, FRAME_SEND_OPTIONS);
    }
    return listener;
  }

  protected handle(listener: FeeListener, _message: unknown): void {
    // Answering a client that does not read would queue frames without bound.
    if (listener.socket.bufferedAmount <= this.options.maxBufferedBytes)
      badRequest(listener.socket, NO_MESSAGES);
  }

  private update(levels: PriorityFeeLevels): void {
    this.version += 1;
    this.frame = JSON.stringify({
      mediumMicroLamports: levels.mediumMicroLamports,
      highMicroLamports: levels.highMicroLamports,
      veryHighMicroLamports: levels.veryHighMicroLamports,
    });
  }

  /**
   * Sends the latest levels to every connection that has not had them and is not behind. A check
   * (`counting`) also counts how long each connection has been behind and closes one behind too long:
   * a client that stops reading holds at most `maxBufferedBytes`, never a growing queue.
   */
  private sendFrames(counting: boolean): void {
    const { maxBufferedBytes, maxChecksBehind } = this.options;
    for (const listener of this.subscribers) {
      if (listener.socket.bufferedAmount > maxBufferedBytes) {
        if (counting) listener.checksBehind += 1;
        if (listener.checksBehind > maxChecksBehind)
          this.subscribers.drop(listener, 1013, "consumer too slow");
        continue;
      }
      listener.checksBehind = 0;
      if (this.version === 0 || listener.sentVersion === this.version) continue;
      listener.sentVersion = this.version;
      listener.socket.send(this.frame, FRAME_SEND_OPTIONS);
    }
  }
}

/** Registers the `/priority-fees/stream` WebSocket; its hub lives as long as the app. */
export function priorityFeesStream(app: ZodApp, fees: PriorityFeeEstimator): void {
  const hub = new PriorityFeeStreamHub(fees);
  hub.start();
  app.addHook("onClose", async () => hub.stop());
  // The access control's upgrade check (key in a header, never the URL; the streams permission) runs first.
  app.get("/priority-fees/stream", { websocket: true, schema: { hide: true } }, (socket) =>
    hub.accept(socket),
  );
}
