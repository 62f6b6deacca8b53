// A bounded map of cache entries. Eviction is "second chance" over insertion order: the oldest
// entry goes unless it was used since the hand last passed it, in which case it is moved to the
// back and spared once. That keeps popular names in a cache flooded with one-off names, costs a
// hit nothing but setting a flag, and every insert O(1) amortised (each spared entry loses its
// flag, so the hand cannot circle forever).

/** What the store needs from an entry. */
export interface Evictable {
  used: boolean;
}

/** Most entries the hand looks at per insert before it evicts regardless. */
const MAX_SPARED_PER_INSERT = 8;

export class BoundedStore<V extends Evictable> {
  private readonly map = new Map<string, V>();
  /** Entries pushed out to make room, since the store was made. */
  evictions = 0;

  constructor(
    readonly capacity: number,
    private readonly onEvict: () => void = () => undefined,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  /** Adds or replaces; a replaced entry moves to the back (it is new). */
  set(key: string, value: V): void {
    if (this.map.delete(key)) {
      this.map.set(key, value);
      return;
    }
    if (this.map.size >= this.capacity) this.evictOne();
    this.map.set(key, value);
  }

  delete(key: string): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  private evictOne(): void {
    for (let spared = 0; ; spared++) {
      const first = this.map.entries().next();
      if (first.done) return;
      const [key, value] = first.value;
      this.map.delete(key);
      if (value.used && spared < MAX_SPARED_PER_INSERT) {
        value.used = false;
        this.map.set(key, value);
        continue;
      }
      this.evictions++;
      this.onEvict();
      return;
    }
  }
}
