/**
 * A catalogue's serialized JSON, packed into a few large buffers instead of one small Buffer each.
 * Small Buffers come from Node's 8 KiB pool slabs, allocated by malloc: a 50,000-market catalogue is
 * ~15,000 slabs, and each reload frees the old ones into the allocator's heap, where they stay
 * resident and fragmented (~115 MB measured after one reload). Chunks above glibc's largest mmap
 * threshold (32 MiB on 64-bit) are always mapped on their own, so a chunk goes back to the system
 * when collected; pages never written (the tail of the last chunk) are never resident. Every entry is
 * a view into its chunk: the chunk lives while any view of it does, so a reload may keep an old
 * catalogue's views of unchanged texts (see `ChunkUse`) instead of copying them.
 */

/** Just over glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MiB), so the allocator always maps a chunk. */
const CHUNK_BYTES = 32 * 1024 * 1024 + 64 * 1024;

/** Bytes written into each chunk, whichever arena wrote them: what of the chunk can be resident. */
const writtenBytes = new WeakMap<ArrayBufferLike, number>();

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
    return this.written(chunk, start, length);
  }

  /** A copy of `bytes` in a view of the current chunk. */
  addBytes(bytes: Uint8Array): Buffer {
    const chunk = this.chunkWithRoom(bytes.length);
    const start = this.used;
    chunk.set(bytes, start);
    return this.written(chunk, start, bytes.length);
  }

  private written(chunk: Buffer, start: number, length: number): Buffer {
    this.used += length;
    writtenBytes.set(chunk.buffer, this.used);
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

/**
 * A chunk is kept for its live texts while they are at least this share of what was written into it;
 * below, they are copied out so that the chunk can go. Bounds what dead texts (replaced markets, the
 * old catalogue's events) hold resident to about as much again as the live ones.
 */
const KEEP_CHUNK_SHARE = 0.5;

/**
 * Which views of older chunks a new catalogue keeps, and how much of each chunk they still use: after
 * a reload has taken over the unchanged texts, `sparse` names the views to copy into the new arena.
 */
export class ChunkUse<T> {
  private readonly byChunk = new Map<ArrayBufferLike, { live: number; holders: T[] }>();

  /** Records that `holder` keeps `view`, a view into an arena's chunk. */
  keep(view: Buffer, holder: T): void {
    const use = this.byChunk.get(view.buffer);
    if (use) {
      use.live += view.length;
      use.holders.push(holder);
    } else this.byChunk.set(view.buffer, { live: view.length, holders: [holder] });
  }

  /** The holders of views into chunks whose live texts fell below KEEP_CHUNK_SHARE of what was written. */
  sparse(): T[] {
    const holders: T[] = [];
    for (const [chunk, use] of this.byChunk) {
      const written = writtenBytes.get(chunk) ?? chunk.byteLength;
      if (use.live < written * KEEP_CHUNK_SHARE) holders.push(...use.holders);
    }
    return holders;
  }
}
