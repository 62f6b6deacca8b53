// A bounded map of cache entries, looked up by (tag, name) where the tag packs type, class and
// flags into one number. Two levels rather than one string key: a hit then hashes only the name
// string parseQuery already made, instead of building and hashing a concatenation per query.
//
// Eviction is "second chance" over insertion order: the oldest entry goes unless it was used
// since the hand last passed it, in which case it moves to the back and is spared once. That
// keeps popular names in a cache flooded with one-off names, costs a hit nothing but setting a
// flag, and keeps every insert O(1) amortised (a spared entry loses its flag, so the hand cannot
// circle forever).

/** What the store needs from an entry: where it is filed, the hand's mark, and its neighbours. */
export interface Evictable {
  tag: number;
  name: string;
  used: boolean;
  /** The next older and next newer entry: the store's order, kept in the entries themselves. */
  older: Evictable | undefined;
  newer: Evictable | undefined;
}

/** Most entries the hand spares per insert before it evicts regardless. */
const MAX_SPARED_PER_INSERT = 8;

export class BoundedStore<V extends Evictable> {
  private readonly index = new Map<number, Map<string, V>>();
  /**
   * Every entry, oldest first, as a list linked through the entries. (A Set in insertion order
   * did the same, but at capacity every insert deleted its first element, and a Set walks past
   * all the deleted slots at its front to find the next one: 12% of the server's time under
   * the auth workload.)
   */
  private oldest: V | undefined;
  private newest: V | undefined;
  private count = 0;
  /** Entries pushed out to make room, since the store was made. */
  evictions = 0;

  constructor(
    readonly capacity: number,
    private readonly onEvict: () => void = () => undefined,
    /** Called for every entry that leaves: replaced, deleted, evicted or cleared. */
    private readonly onRemove: (v: V) => void = () => undefined,
  ) {}

  get size(): number {
    return this.count;
  }

  get(tag: number, name: string): V | undefined {
    return this.index.get(tag)?.get(name);
  }

  /** Adds or replaces; the new entry is the newest. */
  set(value: V): void {
    let byName = this.index.get(value.tag);
    if (!byName) {
      byName = new Map();
      this.index.set(value.tag, byName);
    }
    const old = byName.get(value.name);
    if (old) {
      this.unlink(old);
      this.onRemove(old);
    } else if (this.count >= this.capacity) this.evictOne();
    byName.set(value.name, value);
    this.append(value);
  }

  delete(tag: number, name: string): boolean {
    const byName = this.index.get(tag);
    const old = byName?.get(name);
    if (!byName || !old) return false;
    byName.delete(name);
    this.unlink(old);
    this.onRemove(old);
    return true;
  }

  clear(): void {
    for (const v of this.values()) this.onRemove(v);
    this.index.clear();
    for (let v = this.oldest; v !== undefined; ) {
      const next = v.newer as V | undefined;
      v.older = v.newer = undefined;
      v = next;
    }
    this.oldest = this.newest = undefined;
    this.count = 0;
  }

  /** Entries, oldest first. */
  *values(): IterableIterator<V> {
    for (let v = this.oldest; v !== undefined; v = v.newer as V | undefined) yield v;
  }

  private append(v: V): void {
    v.older = this.newest;
    v.newer = undefined;
    if (this.newest) this.newest.newer = v;
    else this.oldest = v;
    this.newest = v;
    this.count++;
  }

  private unlink(v: V): void {
    if (v.older) v.older.newer = v.newer;
    else this.oldest = v.newer as V | undefined;
    if (v.newer) v.newer.older = v.older;
    else this.newest = v.older as V | undefined;
    v.older = v.newer = undefined;
    this.count--;
  }

  private evictOne(): void {
    for (let spared = 0; ; spared++) {
      const v = this.oldest;
      if (v === undefined) return;
      this.unlink(v);
      if (v.used && spared < MAX_SPARED_PER_INSERT) {
        v.used = false;
        this.append(v);
        continue;
      }
      this.index.get(v.tag)?.delete(v.name);
      this.evictions++;
      this.onEvict();
      this.onRemove(v);
      return;
    }
  }
}
