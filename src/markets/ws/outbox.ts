import type { WebSocket } from "ws";
import type { MarketStreamOptions } from "./options.js";

export type OutboxLimits = Required<
  Pick<MarketStreamOptions, "maxBufferedBytes" | "maxPendingMessages" | "maxPeriodsBehind">
>;

/**
 * What one connection is sent, with backpressure: while its socket is behind, messages are held back
 * (the latest per key), sent once it catches up, and the connection is closed if it stays behind.
 */
export class Outbox {
  private readonly pending = new Map<string, string>();
  private periodsBehind = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly limits: OutboxLimits,
    /** Closes the connection of a consumer too slow to keep. */
    private readonly tooSlow: () => void,
  ) {}

  /** Sends a message now, or holds it back (replacing an older one of the same key) while the socket is behind. */
  deliver(key: string, message: string): void {
    const { socket } = this;
    if (socket.readyState !== socket.OPEN) return;
    if (this.pending.size === 0 && socket.bufferedAmount <= this.limits.maxBufferedBytes) {
      socket.send(message);
      return;
    }
    this.pending.delete(key);
    this.pending.set(key, message);
    if (this.pending.size > this.limits.maxPendingMessages) this.closeSlow();
  }

  /** Once a period: sends what was held back if the socket caught up; closes it if behind too long. */
  flush(): void {
    if (this.pending.size === 0) {
      this.periodsBehind = 0;
      return;
    }
    if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) {
      this.periodsBehind += 1;
      if (this.periodsBehind > this.limits.maxPeriodsBehind) this.closeSlow();
      return;
    }
    this.periodsBehind = 0;
    for (const message of this.pending.values()) this.socket.send(message);
    this.pending.clear();
  }

  /** Drops the held-back messages whose key `keep` refuses. */
  retain(keep: (key: string) => boolean): void {
    for (const key of this.pending.keys()) if (!keep(key)) this.pending.delete(key);
  }

  private closeSlow(): void {
    this.pending.clear();
    this.tooSlow();
  }
}
