// Where plugins keep bytes that live long: the kubernetes plugin's pre-encoded answers, the
// cache's stored replies.
//
// A small Buffer (Buffer.allocUnsafe, encodeMessage's result) is a slice of Node's 8 KB pool,
// which every per-query reply is also cut from. Keeping one 100-byte answer keeps its whole pool
// alive, and under load the rest of that pool is replies long gone: after 10 s of dnsperf over
// the 10,000-Service fixture (25,000 names), a heap snapshot showed ~2,700 pools of 8 KB held by
// kept answers. Copied into chunks that hold nothing else, the answers take their own size
// (scripts/bench-memory.sh, kubernetes without cache: 101 → 88 MB RSS after the load).

/** Big enough that a chunk holds hundreds of answers; small enough that a tiny cluster pays little. */
export const CHUNK_SIZE = 64 * 1024;

/** Locations are chunk index × this + offset. */
const LOCATION_SPAN = 65536;

export class Arena {
  private chunk: Buffer | undefined;
  /** Every chunk since the last reset, for put()'s locations. */
  private chunks: Buffer[] = [];
  private used = 0;
  /** Bytes in all chunks handed out (live and dropped). */
  private held = 0;
  /** Bytes of kept slices that the owner still uses (kept minus dropped). */
  private live = 0;

  /** A copy of `bytes` in the arena. Messages larger than a chunk get a chunk of their own. */
  keep(bytes: Uint8Array): Buffer {
    const n = bytes.length;
    const at = this.reserve(n);
    const out = (this.chunk as Buffer).subarray(at, at + n);
    out.set(bytes);
    return out;
  }

  /**
   * A copy of `bytes` in the arena, as a location (see chunkAt, offsetAt) instead of a Buffer:
   * for owners of many small copies, a number per copy instead of a ~100-byte Buffer object.
   * `tail`, when given, is copied right after `bytes`, as one copy (no joined buffer first).
   */
  put(bytes: Uint8Array, tail?: Uint8Array): number {
    const at = this.reserve(bytes.length + (tail?.length ?? 0));
    const chunk = this.chunk as Buffer;
    chunk.set(bytes, at);
    if (tail) chunk.set(tail, at + bytes.length);
    // A chunk is 64 KiB, or one message alone at offset 0: the offset always fits 16 bits.
    return (this.chunks.length - 1) * LOCATION_SPAN + at;
  }

  /** The chunk a location from put() is in. */
  chunkAt(location: number): Buffer {
    return this.chunks[Math.floor(location / LOCATION_SPAN)] as Buffer;
  }

  /** Where in its chunk a location from put() starts. */
  offsetAt(location: number): number {
    return location % LOCATION_SPAN;
  }

  /** Room for `n` bytes in the current chunk (a new one if needed); returns where it starts. */
  private reserve(n: number): number {
    if (this.chunk === undefined || this.used + n > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_SIZE, n));
      this.chunks.push(this.chunk);
      this.used = 0;
      this.held += this.chunk.length;
    }
    const at = this.used;
    this.used += n;
    this.live += n;
    return at;
  }

  /** Tells the arena a kept slice is no longer used (its bytes stay until the next compaction). */
  drop(bytes: Uint8Array): void {
    this.live -= bytes.length;
  }

  /** Tells the arena `length` bytes put() at some location are no longer used. */
  release(length: number): void {
    this.live -= length;
  }

  /** Whether more than half of what the arena holds is dropped bytes (and that is worth a copy). */
  wasteful(): boolean {
    return this.held > 2 * CHUNK_SIZE && this.live * 2 < this.held;
  }

  /**
   * When more than half is dropped bytes: starts over and lets the owner copy each slice it
   * still uses back in (`relocate` calls `keep` for each and stores what it returns), so the
   * old chunks go once nothing refers to them. Returns whether it compacted.
   */
  compactIfWasteful(relocate: (keep: (bytes: Uint8Array) => Buffer) => void): boolean {
    if (!this.wasteful()) return false;
    this.reset();
    relocate((bytes) => this.keep(bytes));
    return true;
  }

  /**
   * compactIfWasteful for owners of locations: `move` is called with a function that copies the
   * `length` bytes at an old location into the fresh arena and returns the new location.
   */
  compactLocationsIfWasteful(move: (relocate: (location: number, length: number) => number) => void): boolean {
    if (!this.wasteful()) return false;
    const old = this.chunks;
    this.reset();
    move((location, length) => {
      const chunk = old[Math.floor(location / LOCATION_SPAN)] as Buffer;
      const at = location % LOCATION_SPAN;
      return this.put(chunk.subarray(at, at + length));
    });
    return true;
  }

  /** Forgets every chunk; the slices already handed out stay valid as long as someone holds them. */
  reset(): void {
    this.chunk = undefined;
    this.chunks = [];
    this.used = 0;
    this.held = 0;
    this.live = 0;
  }

  /** Whether put() can still return a location below 2^32 (65,536 chunks: 4 GiB of copies). */
  get roomForLocations(): boolean {
    return this.chunks.length < LOCATION_SPAN;
  }

  /** Bytes in chunks (for tests and the debug log). */
  get heldBytes(): number {
    return this.held;
  }

  get liveBytes(): number {
    return this.live;
  }
}
