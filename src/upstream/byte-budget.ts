/**
 * A budget of bytes shared by concurrent work: what the upstream client holds of the bodies it is
 * reading at once. Each request takes bytes as they arrive and gives them all back when it is done
 * with them; a request whose next bytes do not fit fails at once (waiting could deadlock: every
 * reader would hold part of the budget while waiting for more). N concurrent oversized answers so
 * hold at most `capacity` bytes between them, not N times the per-body limit.
 */
export class ByteBudget {
  private heldBytes = 0;
  private peakBytes = 0;

  constructor(readonly capacity: number) {}

  /** Bytes taken and not yet given back. */
  get held(): number {
    return this.heldBytes;
  }

  /** The most bytes ever held at once. */
  get peak(): number {
    return this.peakBytes;
  }

  /** Takes `bytes` if they fit within the capacity beside what is held; says whether they did. */
  take(bytes: number): boolean {
    if (this.heldBytes + bytes > this.capacity) return false;
    this.heldBytes += bytes;
    if (this.heldBytes > this.peakBytes) this.peakBytes = this.heldBytes;
    return true;
  }

  /** Gives back `bytes` taken before. */
  release(bytes: number): void {
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
  }
}
