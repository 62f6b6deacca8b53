// Timeouts of queries in flight, with one timer per socket instead of one per query. A Node
// timer is an object, a list insertion and a clearTimeout per exchange; at cache-miss rates
// that was a visible share of forwarding's CPU and garbage. Queries to one upstream mostly
// share a timeout, so their deadlines arrive in order: the queue is an array appended at the
// end, with one timer armed for its head. Answered queries are only marked (`done`) and
// skipped when the head reaches them. Times are performance.now() milliseconds: monotonic, so a
// change of the wall clock neither fires nor holds back a timeout.

export interface Deadline {
  /** The performance.now() time after which the query has timed out. */
  deadline: number;
  /** Settled (answered, failed or expired): the queue skips it. */
  done: boolean;
}

/** Compact the array once this many settled entries sit before the head. */
const COMPACT_AFTER = 1024;

export class DeadlineQueue<T extends Deadline> {
  private items: T[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    /** Called for each entry whose deadline passed while it was not done (it is marked done first). */
    private readonly onExpired: (item: T) => void,
  ) {}

  add(item: T): void {
    const items = this.items;
    const last = items.length > this.head ? (items[items.length - 1] as T) : undefined;
    if (last === undefined || last.deadline <= item.deadline) {
      items.push(item);
    } else {
      // A shorter timeout than the ones before it (a health check, a retry with little time
      // left): insert in order. Rare, so a linear walk from the end is fine.
      let i = items.length - 1;
      while (i > this.head && (items[i - 1] as T).deadline > item.deadline) i--;
      items.splice(i, 0, item);
    }
    if (item.deadline < this.armedFor) this.arm(item.deadline);
  }

  /**
   * Drops settled entries from the head, so answered queries are not kept alive until the next
   * deadline (replies mostly come back in the order the queries went out).
   */
  trim(): void {
    const items = this.items;
    while (this.head < items.length && (items[this.head] as T).done) this.head++;
    this.compact();
  }

  /** Forgets every entry and stops the timer. */
  clear(): void {
    this.items = [];
    this.head = 0;
    this.disarm();
  }

  private arm(at: number): void {
    this.disarm();
    this.armedFor = at;
    this.timer = setTimeout(this.fire, Math.max(0, at - performance.now()));
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    const items = this.items;
    while (this.head < items.length) {
      const item = items[this.head] as T;
      if (!item.done) {
        if (item.deadline > now) break;
        item.done = true;
        this.onExpired(item);
      }
      this.head++;
    }
    this.compact();
    if (this.head < this.items.length) this.arm((this.items[this.head] as T).deadline);
  };

  private compact(): void {
    const items = this.items;
    if (this.head === items.length) {
      if (this.head > 0) {
        items.length = 0;
        this.head = 0;
      }
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= items.length) {
      this.items = items.slice(this.head);
      this.head = 0;
    }
  }
}
