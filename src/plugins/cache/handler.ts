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
import { answerFrom, answersQuestion, FLAG_AA_BYTE2, makeEntry, remainingTtl, writeTtls, type CacheEntry, type EntryKind } from './entry.js';
import type { CacheCells } from './metrics.js';
import type { CacheOptions } from './options.js';
import { coarseNow } from './clock.js';
import { BoundedStore } from './store.js';
import { Arena } from '../../server/arena.js';
import { cacheKeyName, cacheTag } from './key.js';
import { isTruncated, readU16, scanMessage } from '../../lib/dns/wire.js';

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
    const e = this.choose(tag, key, now);
    if (e !== undefined) {
      this.cells.requests.inc();
      if (now < e.expiresAt) {
        e.used = true;
        this.cells.hits[e.kind].inc();
        if (this.options.prefetch !== undefined) this.considerPrefetch(e, req, next, now);
        return finished(req, answerFrom(e, req, now, this.options.keepTtl), e.rcode);
      }
      return this.serveStale(e, req, next, now);
    }
    return this.fetch(tag, req, next);
  }

  /**
   * The entry to answer `tag`/`key` with, fresh or within serve_stale's window; entries past
   * both are dropped. Both types may hold the key only when a SERVFAIL or (prefer_positive) a
   * denial was stored over a positive answer: a SERVFAIL says nothing about the name, so the
   * positive answer wins over it (CoreDNS #7956); prefer_positive lets it win over any denial.
   */
  private choose(tag: number, key: string, now: number): CacheEntry | undefined {
    const success = this.stores.success.get(tag, key);
    const denial = this.stores.denial.get(tag, key);
    if (denial === undefined) return this.servable(success, now);
    if (this.options.serveStale?.preferPositive && success?.answers && this.servable(success, now)) return success;
    const d = this.servable(denial, now);
    if (d === undefined) return this.servable(success, now);
    return d.rcode === RCode.SERVFAIL ? (this.servable(success, now) ?? d) : d;
  }

  /**
   * `e` while it is fresh, or expired within serve_stale's window; otherwise it is dropped. A
   * stored SERVFAIL is never served stale: an old failure is no answer (RFC 8767 §4 serves
   * stale *data*), and the client is better off asking again.
   */
  private servable(e: CacheEntry | undefined, now: number): CacheEntry | undefined {
    if (e === undefined || now < e.expiresAt) return e;
    const stale = this.options.serveStale;
    if (stale !== undefined && e.rcode !== RCode.SERVFAIL && now < e.expiresAt + stale.durationMs) return e;
    this.stores[e.kind].delete(e.tag, e.name);
    return undefined;
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
    const stale = this.options.serveStale;
    if (e.kind === 'success') {
      // prefer_positive: a reply that answers nothing (a referral) does not replace a usable answer.
      const kept = stale?.preferPositive ? this.stores.success.get(tag, e.name) : undefined;
      if (kept?.answers && !e.answers && this.servable(kept, now)) {
        this.arena.drop(e.wire);
        return reply;
      }
      this.stores.denial.delete(tag, e.name);
    } else if (e.rcode !== RCode.SERVFAIL && !stale?.preferPositive) {
      // A denial replaces the positive answer; a SERVFAIL (and, with prefer_positive, any
      // denial) is kept beside it, and choose() decides which one answers.
      this.stores.success.delete(tag, e.name);
    }
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

  /** Whether a refresh may start for `e`: none in flight, and no failure recheck pending. */
  private beginRefresh(e: CacheEntry, now: number): boolean {
    if (e.refreshing || now < e.retryAfter) return false;
    e.refreshing = true;
    return true;
  }

  /** A refresh of `e` ended; after a failure, serve_stale's recheck holds the next one back. */
  private endRefresh(e: CacheEntry, refreshed: boolean): void {
    e.refreshing = false;
    const recheckMs = this.options.serveStale?.recheckMs ?? 0;
    e.retryAfter = !refreshed && recheckMs > 0 ? this.clock() + recheckMs : 0;
  }

  /**
   * Whether `reply` refreshes an expired entry (RFC 8767 §4): an answer that is NOERROR or
   * NXDOMAIN, not kdns's own failure; with prefer_positive, only a NOERROR that answers the
   * question. Anything else leaves the expired entry to be served.
   */
  private refreshes(req: DnsRequest, reply: Reply | undefined): boolean {
    if (reply === undefined || reply.error) return false;
    if (this.options.serveStale?.preferPositive !== true) return reply.rcode === RCode.NOERROR || reply.rcode === RCode.NXDOMAIN;
    if (reply.rcode !== RCode.NOERROR) return false;
    const bytes = reply.wire ?? encodeMessage(reply.view());
    const scan = scanMessage(bytes);
    return scan !== undefined && !isTruncated(bytes) && answersQuestion(bytes, scan, req.query.qtype, req.query.qclass);
  }

  /**
   * Asks the chain again for an expired entry, in the background: at most one at a time per
   * entry, none during a failure recheck. What refreshes it is stored; with prefer_positive a
   * denial is stored too (beside the positive answer, which goes on being served). Counted as a
   * prefetch, as CoreDNS counts it.
   */
  private refreshStale(e: CacheEntry, req: DnsRequest, next: Next, now: number): void {
    if (!this.beginRefresh(e, now)) return;
    this.cells.prefetch.inc();
    req.own(); // the refresh outlives this answer
    void Promise.resolve()
      .then(() => next(req))
      .then((reply) => {
        const refreshed = this.refreshes(req, reply);
        if (refreshed || (this.options.serveStale?.preferPositive && reply && !reply.error)) this.remember(e.tag, req, reply);
        this.endRefresh(e, refreshed);
      })
      .catch(() => this.endRefresh(e, false));
  }

  /**
   * An expired entry within serve_stale's window. `immediate` answers from it at once (with
   * the stale TTL) and refreshes behind; `verify` asks first and answers from it only if that
   * fails, or once the verify timeout has passed (the question goes on in the background and
   * refreshes the entry when it is answered). With a failure recheck, a refresh in flight or
   * failed within the recheck is not repeated: the expired entry is answered at once.
   */
  private serveStale(e: CacheEntry, req: DnsRequest, next: Next, now: number): MaybePromise<Reply | undefined> {
    const stale = this.options.serveStale as NonNullable<CacheOptions['serveStale']>;
    const fromStale = (): Reply => {
      this.cells.servedStale.inc();
      this.cells.hits[e.kind].inc();
      e.used = true;
      return Reply.fromWire(answerFrom(e, req, this.clock(), false, stale.responseTtl), e.rcode);
    };
    if (!stale.verify) {
      this.refreshStale(e, req, next, now);
      return fromStale();
    }
    const tracked = stale.recheckMs > 0;
    if (tracked && !this.beginRefresh(e, now)) return fromStale();
    if (stale.verifyTimeoutMs > 0) req.own(); // the question may outlive the answer
    const verified: Promise<Reply | undefined> = Promise.resolve()
      .then(() => next(req))
      .then(
        (reply) => {
          const refreshed = this.refreshes(req, reply);
          if (tracked) this.endRefresh(e, refreshed);
          if (refreshed) {
            this.cells.misses.inc();
            return this.remember(e.tag, req, reply);
          }
          if (stale.preferPositive && reply && !reply.error) this.remember(e.tag, req, reply);
          return undefined;
        },
        () => {
          if (tracked) this.endRefresh(e, false);
          return undefined;
        },
      );
    if (stale.verifyTimeoutMs <= 0) return verified.then((r) => r ?? fromStale());
    return new Promise((resolve) => {
      let settled = false;
      const settle = (r: Reply | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r ?? fromStale());
      };
      const timer = setTimeout(() => settle(undefined), stale.verifyTimeoutMs);
      void verified.then(settle);
    });
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
