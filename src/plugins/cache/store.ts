// A bounded map of cache entries, looked up by (tag, name) where the tag packs type, class and
// flags into one number. Two levels rather than one string key: a hit then hashes only the name
// string parseQuery already made, instead of building and hashing a concatenation per query.
//
// Eviction is "second chance" over insertion order: the oldest entry goes unless it was used
// since the hand last passed it, in which case it moves to the back and is spared once. That
// keeps popular names in a cache flooded with one-off names, costs a hit nothing but setting a
// flag, and keeps every insert O(1) amortised (a spared entry loses its flag, so the hand cannot
// circle forever).

/** What the store needs from an entry: where it is filed, and the hand's mark. */
export interface Evictable {
  tag: number;
  name: string;
  used: boolean;
}

/** Most entries the hand spares per insert before it evicts regardless. */
const MAX_SPARED_PER_INSERT = 8;

export class BoundedStore<V extends Evictable> {
  private readonly index = new Map<number, Map<string, V>>();
  /** Every entry, oldest first (Sets keep insertion order). */
  private readonly order = new Set<V>();
  /** Entries pushed out to make room, since the store was made. */
  evictions = 0;

  constructor(
    readonly capacity: number,
    private readonly onEvict: () => void = () => undefined,
    /** Called for every entry that leaves: replaced, deleted, evicted or cleared. */
    private readonly onRemove: (v: V) => void = () => undefined,
  ) {}

  get size(): number {
    return this.order.size;
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
      this.order.delete(old);
      this.onRemove(old);
    } else if (this.order.size >= this.capacity) this.evictOne();
    byName.set(value.name, value);
    this.order.add(value);
  }

  delete(tag: number, name: string): boolean {
    const byName = this.index.get(tag);
    const old = byName?.get(name);
    if (!byName || !old) return false;
    byName.delete(name);
    this.order.delete(old);
    this.onRemove(old);
    return true;
  }

  clear(): void {
    for (const v of this.order) this.onRemove(v);
    this.index.clear();
    this.order.clear();
  }

  /** Entries, oldest first. */
  values(): IterableIterator<V> {
    return this.order.values();
  }

  private evictOne(): void {
    for (let spared = 0; ; spared++) {
      const first = this.order.values().next();
      if (first.done) return;
      const v = first.value;
      this.order.delete(v);
      if (v.used && spared < MAX_SPARED_PER_INSERT) {
        v.used = false;
        this.order.add(v);
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
