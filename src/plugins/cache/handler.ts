// cache: answers repeated questions from stored reply bytes. Hits are the fastest path in kdns
// (see entry.ts); misses go down the chain and their replies are stored by type (success,
// denial) in bounded stores. Popular entries are fetched again before they expire (prefetch),
// and expired ones may still be served while the upstream is unreachable (serve_stale).
import { encodeMessage } from '../../lib/dns/codec.js';
import { isSubdomain } from '../../lib/dns/name.js';
import type { ParsedQuery } from '../../lib/dns/types.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { responseLimit } from '../../server/finalize.js';
import { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { isPromise } from '../../server/promise.js';
import { answerFrom, FLAG_AA_BYTE2, makeEntry, remainingTtl, writeTtls, type CacheEntry, type EntryKind } from './entry.js';
import type { CacheCells } from './metrics.js';
import type { CacheOptions } from './options.js';
import { coarseNow } from './clock.js';
import { BoundedStore } from './store.js';
import { Arena } from '../../server/arena.js';
import { cacheKeyName, cacheTag } from './key.js';
import { readU16 } from '../../lib/dns/wire.js';

const ANCOUNT_OFFSET = 6;

/**
 * A hit's bytes are already what the server sends (ID, OPT and flags done by answerFrom), so
 * they are handed over as final unless the client's UDP limit means truncating: the server then
 * skips re-reading them. A plugin that edits the reply later drops this (Reply.edit).
 */
function finished(req: DnsRequest, bytes: Buffer, rcode: number): Reply {
  const reply = Reply.fromWire(bytes, rcode);
  if (bytes.length <= responseLimit(req)) reply.finalWire = bytes;
  return reply;
}

export class CachePlugin implements Plugin {
  readonly name = 'cache';
  private readonly stores: Record<EntryKind, BoundedStore<CacheEntry>>;
  /**
   * The stored replies' bytes. Cut from Node's shared Buffer pool, each ~100-byte entry would
   * keep a whole 8 KB pool of long-gone replies alive: after 10 s of load over the 10,000-Service
   * fixture, ~5,850 such pools (47 MB).
   */
  private readonly arena = new Arena();
  private readonly keep = (bytes: Uint8Array): Buffer => this.arena.keep(bytes);
  private readonly relocateEntries = (keep: (bytes: Uint8Array) => Buffer): void => {
    for (const store of [this.stores.success, this.stores.denial]) {
      for (const e of store.values()) e.wire = keep(e.wire);
    }
  };
  private readonly everyZone: boolean;
  private untrack?: () => void;

  constructor(
    readonly options: CacheOptions,
    private readonly cells: CacheCells,
    /** Milliseconds since the epoch; tests may move time. */
    private readonly clock: () => number = coarseNow,
  ) {
    this.stores = {
      success: new BoundedStore<CacheEntry>(options.success.capacity, () => cells.evictions.success.inc(), (e) => this.arena.drop(e.wire)),
      denial: new BoundedStore<CacheEntry>(options.denial.capacity, () => cells.evictions.denial.inc(), (e) => this.arena.drop(e.wire)),
    };
    this.everyZone = options.zones.includes('.');
  }

  size(kind: EntryKind): number {
    return this.stores[kind].size;
  }

  /** The stored entry for a query, fresh or not (tests and tools). */
  peek(q: ParsedQuery): CacheEntry | undefined {
    const tag = cacheTag(q);
    const key = cacheKeyName(q);
    return this.stores.success.get(tag, key) ?? this.stores.denial.get(tag, key);
  }

  private covers(name: string): boolean {
    return this.everyZone || this.options.zones.some((z) => isSubdomain(name, z));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const q = req.query;
    if (q.qdcount !== 1 || q.opcode !== 0 || q.qtype === RRType.AXFR || q.qtype === RRType.IXFR || !this.covers(q.name)) {
      return next(req);
    }
    const tag = cacheTag(q);
    const now = this.clock();
    const key = cacheKeyName(q);
    const e = this.stores.success.get(tag, key) ?? this.stores.denial.get(tag, key);
    if (e !== undefined) {
      if (now < e.expiresAt) {
        this.cells.requests.inc();
        e.used = true;
        this.cells.hits[e.kind].inc();
        if (this.options.prefetch !== undefined) this.considerPrefetch(e, req, next, now);
        return finished(req, answerFrom(e, req, now, this.options.keepTtl), e.rcode);
      }
      const stale = this.serveStale(e, req, next, now);
      if (stale !== undefined) {
        this.cells.requests.inc();
        return stale;
      }
    }
    return this.fetch(tag, req, next);
  }

  /** A miss: asks the rest of the chain, counts and stores the answer unless it passes through. */
  private fetch(tag: number, req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const r = next(req);
    if (isPromise(r)) return r.then((reply) => this.missed(tag, req, reply));
    return this.missed(tag, req, r);
  }

  private missed(tag: number, req: DnsRequest, reply: Reply | undefined): Reply | undefined {
    if (reply !== undefined && this.passesThrough(reply)) return reply;
    this.cells.requests.inc();
    this.cells.misses.inc();
    return this.remember(tag, req, reply);
  }

  /**
   * Whether an answer is one the plugin behind keeps itself (Reply.kept: kubernetes) and storing
   * it would change nothing a client sees: its TTLs are already within this cache's limits. Such
   * answers are neither stored nor counted — the plugin answers them as cheaply as a hit, drops
   * them the moment a Service changes (a copy here would be served stale for its TTL), and a
   * second copy of every cluster answer was a fifth of kdns's memory after a query load.
   */
  private passesThrough(reply: Reply): boolean {
    const kept = reply.kept;
    const wire = reply.wire;
    if (kept === undefined || wire === undefined) return false;
    const kind: EntryKind = reply.rcode === RCode.NOERROR && readU16(wire, ANCOUNT_OFFSET) > 0 ? 'success' : 'denial';
    const limits = this.options[kind];
    return kept.min >= limits.minTtl && kept.max <= limits.maxTtl;
  }

  /** Stores what the rest of the chain answered, when it may be cached; returns it unchanged. */
  private remember(tag: number, req: DnsRequest, reply: Reply | undefined, popularity?: number): Reply | undefined {
    // A reply carrying an error is kdns's own failure (no upstream reachable), not an answer.
    if (!reply || reply.error) return reply;
    const bytes = reply.wire ?? encodeMessage(reply.view());
    const now = this.clock();
    const made = makeEntry(bytes, req, tag, now, this.options, this.keep);
    if ('drop' in made) {
      this.cells.drops.inc();
      return reply;
    }
    if ('skip' in made) return reply;
    const e = made.entry;
    const disabledZones = this.options.disabled[e.kind];
    if (disabledZones.length > 0 && disabledZones.some((z) => isSubdomain(req.name, z))) {
      this.arena.drop(e.wire);
      return reply;
    }
    // The query that caused the store counts as the first sighting for prefetch.
    e.hits = popularity ?? 1;
    e.lastHit = now;
    const other: EntryKind = e.kind === 'success' ? 'denial' : 'success';
    this.stores[other].delete(tag, e.name);
    this.stores[e.kind].set(e);
    // Replaced and evicted entries' bytes go once they are half of what the arena holds.
    this.arena.compactIfWasteful(this.relocateEntries);
    // This client sees the TTL the cache will count down from (as CoreDNS: no jump from the
    // upstream's 86400 to the cap on the next query). Wire replies are patched in place at the
    // same offsets (the OPT the entry dropped comes after every record).
    if (reply.wire) {
      writeTtls(reply.wire, e.ttlOffsets, e.ttl);
      return reply;
    }
    // The client that caused the store gets the answer as the plugin behind made it, AA included.
    const out = answerFrom(e, req, now, true);
    if (!reply.view().aa) out[2] = (out[2] as number) & ~FLAG_AA_BYTE2;
    return Reply.fromWire(out, e.rcode);
  }

  /**
   * Popular means `amount` hits without a gap of `durationMs` between them; such an entry is
   * fetched again once its remaining TTL drops to `percentage` of its TTL (CoreDNS's rule).
   */
  private considerPrefetch(e: CacheEntry, req: DnsRequest, next: Next, now: number): void {
    const p = this.options.prefetch as NonNullable<CacheOptions['prefetch']>;
    if (now - e.lastHit >= p.durationMs) e.hits = 0;
    e.hits++;
    e.lastHit = now;
    if (e.refreshing || e.hits < p.amount) return;
    if (remainingTtl(e, now) > Math.ceil((p.percentage / 100) * e.ttl)) return;
    this.cells.prefetch.inc();
    this.refresh(e, req, next, e.hits);
  }

  /** Asks the rest of the chain again in the background and stores the answer. */
  private refresh(e: CacheEntry, req: DnsRequest, next: Next, popularity?: number): void {
    if (e.refreshing) return;
    e.refreshing = true;
    req.own(); // the refresh outlives this hit
    void Promise.resolve()
      .then(() => next(req))
      .then((reply) => {
        this.remember(e.tag, req, reply, popularity);
      })
      .catch(() => undefined)
      .finally(() => {
        e.refreshing = false;
      });
  }

  /**
   * An expired entry: gone unless serve_stale keeps it. `immediate` answers from it at once (TTL
   * 0) and refreshes behind; `verify` asks first and answers from it only if that fails.
   */
  private serveStale(e: CacheEntry, req: DnsRequest, next: Next, now: number): MaybePromise<Reply | undefined> | undefined {
    const stale = this.options.serveStale;
    if (!stale || now >= e.expiresAt + stale.durationMs) {
      this.stores[e.kind].delete(e.tag, e.name);
      return undefined;
    }
    const fromStale = (): Reply => {
      this.cells.servedStale.inc();
      this.cells.hits[e.kind].inc();
      e.used = true;
      return Reply.fromWire(answerFrom(e, req, this.clock(), false), e.rcode);
    };
    if (!stale.verify) {
      this.refresh(e, req, next);
      return fromStale();
    }
    const usable = (r: Reply | undefined): r is Reply => r !== undefined && !r.error && (r.rcode === RCode.NOERROR || r.rcode === RCode.NXDOMAIN);
    return Promise.resolve()
      .then(() => next(req))
      .then(
        (reply) => {
          if (!usable(reply)) return fromStale();
          this.cells.misses.inc();
          return this.remember(e.tag, req, reply);
        },
        () => fromStale(),
      );
  }

  start(): void {
    this.untrack = this.cells.track({
      labels: this.cells.labels,
      size: (kind) => this.size(kind),
    });
  }

  /** Bytes the arena holds and bytes of live entries in it (tests). */
  arenaBytes(): { held: number; live: number } {
    return { held: this.arena.heldBytes, live: this.arena.liveBytes };
  }

  stop(): void {
    this.untrack?.();
    this.stores.success.clear();
    this.stores.denial.clear();
  }
}
