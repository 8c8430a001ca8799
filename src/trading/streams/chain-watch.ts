/**
 * Whether the chain's slot moves, for the pair streams (`/quote-stream`, `/book-stream`): when it has
 * stood still for `staleMs`, their connections hear `{"type":"stale","age_ms","ts"}` (again every
 * `staleMs` while that lasts), then `{"type":"recovered","silent_ms","ts"}` once it moves: a silent
 * chain is not a quiet market.
 */

/** Watches a slot source and says when it stands still and when it moves again. */
export class ChainWatch {
  /** The last slot seen and when it was first seen; while stale, since when and when it was last said. */
  private chain: { slot: bigint | undefined; at: number; staleFrom: number | undefined; told: number } = {
    slot: undefined,
    at: Date.now(),
    staleFrom: undefined,
    told: 0,
  };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** The chain's slot now (undefined while unknown). */
    private readonly readSlot: () => bigint | undefined,
    private readonly staleMs: number,
    /** Sends a serialized frame to every connection. */
    private readonly tell: (frame: string) => void,
  ) {}

  start(): void {
    this.chain = { slot: undefined, at: Date.now(), staleFrom: undefined, told: 0 };
    this.timer = setInterval(() => this.check(), Math.min(250, this.staleMs)).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Says when the slot has stood still for `staleMs` (with its age, repeated), and when it moves again. */
  private check(): void {
    const now = Date.now();
    const slot = this.readSlot();
    const chain = this.chain;
    if (slot !== undefined && slot !== chain.slot) {
      const silentMs = chain.staleFrom === undefined ? 0 : now - chain.staleFrom;
      chain.slot = slot;
      chain.at = now;
      if (chain.staleFrom === undefined) return;
      chain.staleFrom = undefined;
      this.tell(JSON.stringify({ type: "recovered", silent_ms: silentMs, ts: now }));
      return;
    }
    const age = now - chain.at;
    if (age < this.staleMs) return;
    if (chain.staleFrom !== undefined && now - chain.told < this.staleMs) return;
    chain.staleFrom ??= chain.at;
    chain.told = now;
    this.tell(JSON.stringify({ type: "stale", age_ms: age, ts: now }));
  }
}
