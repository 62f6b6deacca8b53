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

export class Arena {
  private chunk: Buffer | undefined;
  private used = 0;
  /** Bytes in all chunks handed out (live and dropped). */
  private held = 0;
  /** Bytes of kept slices that the owner still uses (kept minus dropped). */
  private live = 0;

  /** A copy of `bytes` in the arena. Messages larger than a chunk get a chunk of their own. */
  keep(bytes: Uint8Array): Buffer {
    const n = bytes.length;
    if (this.chunk === undefined || this.used + n > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_SIZE, n));
      this.used = 0;
      this.held += this.chunk.length;
    }
    const out = this.chunk.subarray(this.used, this.used + n);
    out.set(bytes);
    this.used += n;
    this.live += n;
    return out;
  }

  /** Tells the arena a kept slice is no longer used (its bytes stay until the next compaction). */
  drop(bytes: Uint8Array): void {
    this.live -= bytes.length;
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

  /** Forgets every chunk; the slices already handed out stay valid as long as someone holds them. */
  reset(): void {
    this.chunk = undefined;
    this.used = 0;
    this.held = 0;
    this.live = 0;
  }

  /** Bytes in chunks (for tests and the debug log). */
  get heldBytes(): number {
    return this.held;
  }

  get liveBytes(): number {
    return this.live;
  }
}
