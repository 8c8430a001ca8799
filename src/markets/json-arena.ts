/**
 * A catalogue's serialized JSON, packed into a few large buffers instead of one small Buffer each.
 * Small Buffers come from Node's 8 KiB pool slabs, allocated by malloc: a 50,000-market catalogue is
 * ~15,000 slabs, and each reload frees the old ones into the allocator's heap, where they stay
 * resident and fragmented (~115 MB measured after one reload). Chunks above glibc's largest mmap
 * threshold (32 MiB on 64-bit) are always mapped on their own, so a replaced catalogue's chunks go
 * back to the system when collected; pages never written (the tail of the last chunk) are never
 * resident. Every entry is a view into its chunk: the chunk lives while any view of it does.
 */

/** Just over glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MiB), so the allocator always maps a chunk. */
const CHUNK_BYTES = 32 * 1024 * 1024 + 64 * 1024;

/** Packs JSON texts into shared chunks (see the module comment). */
export class JsonArena {
  private chunk: Buffer | undefined;
  private used = 0;

  /** `text` as UTF-8, in a view of the current chunk. */
  add(text: string): Buffer {
    const length = Buffer.byteLength(text);
    const chunk = this.chunkWithRoom(length);
    const start = this.used;
    chunk.write(text, start, length, "utf8");
    this.used += length;
    return chunk.subarray(start, this.used);
  }

  /** A copy of `bytes` in a view of the current chunk. */
  addBytes(bytes: Uint8Array): Buffer {
    const chunk = this.chunkWithRoom(bytes.length);
    const start = this.used;
    chunk.set(bytes, start);
    this.used += bytes.length;
    return chunk.subarray(start, this.used);
  }

  /** The current chunk, or a new one when `length` more bytes do not fit in it. */
  private chunkWithRoom(length: number): Buffer {
    if (!this.chunk || this.used + length > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, length));
      this.used = 0;
    }
    return this.chunk;
  }
}
