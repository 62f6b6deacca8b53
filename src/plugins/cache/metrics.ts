// cache's metric families under CoreDNS's names and labels ({server, type, zones, view}; `zones`
// is the cache's zones joined by ","). Per-query counters are batched cells, so a hit costs a
// few nanoseconds of counting; the entries gauge is read from the live stores at scrape time.
import { Gauge, type Registry } from '../../server/promclient.js';
import { batchedCounter, type CounterCell } from '../pkg/series.js';
import type { EntryKind } from './entry.js';

/** What the entries gauge reads at scrape time. */
export interface EntriesSource {
  readonly labels: { server: string; zones: string };
  size(kind: EntryKind): number;
}

const VIEW = '';
const ENTRIES = 'coredns_cache_entries';
const sources = new WeakMap<Registry, Set<EntriesSource>>();

function entriesGauge(registry: Registry): Set<EntriesSource> {
  let live = sources.get(registry);
  if (live) return live;
  const set = new Set<EntriesSource>();
  live = set;
  sources.set(registry, set);
  if (!registry.getSingleMetric(ENTRIES)) {
    new Gauge({
      name: ENTRIES,
      help: 'Entries in the cache, by type (success, denial).',
      labelNames: ['server', 'type', 'zones', 'view'],
      registers: [registry],
      collect(this: Gauge<string>) {
        this.reset();
        for (const s of set) {
          for (const type of ['success', 'denial'] as const) this.set({ ...s.labels, type, view: VIEW }, s.size(type));
        }
      },
    });
  }
  return set;
}

export interface CacheCells {
  labels: { server: string; zones: string };
  hits: Record<EntryKind, CounterCell>;
  evictions: Record<EntryKind, CounterCell>;
  misses: CounterCell;
  requests: CounterCell;
  prefetch: CounterCell;
  servedStale: CounterCell;
  drops: CounterCell;
  /** Adds the store to the entries gauge; call the returned function when the cache stops. */
  track(source: EntriesSource): () => void;
}

export function cacheCells(registry: Registry, server: string, zones: string): CacheCells {
  const byType = (name: string, help: string): Record<EntryKind, CounterCell> => {
    const family = batchedCounter(registry, name, help, ['server', 'type', 'zones', 'view']);
    return { success: family.cell([server, 'success', zones, VIEW]), denial: family.cell([server, 'denial', zones, VIEW]) };
  };
  const plain = (name: string, help: string): CounterCell => batchedCounter(registry, name, help, ['server', 'zones', 'view']).cell([server, zones, VIEW]);
  const live = entriesGauge(registry);
  return {
    labels: { server, zones },
    hits: byType('coredns_cache_hits_total', 'Queries answered from the cache, by entry type.'),
    evictions: byType('coredns_cache_evictions_total', 'Entries pushed out to make room for new ones, by type.'),
    misses: plain('coredns_cache_misses_total', 'Queries the cache had no usable entry for.'),
    requests: plain('coredns_cache_requests_total', 'Queries that reached the cache.'),
    prefetch: plain('coredns_cache_prefetch_total', 'Popular entries fetched again before they expired.'),
    servedStale: plain('coredns_cache_served_stale_total', 'Queries answered with an expired entry (serve_stale).'),
    drops: plain('coredns_cache_drops_total', 'Replies not cached because they did not parse or did not match their query.'),
    track(source) {
      live.add(source);
      return () => live.delete(source);
    },
  };
}
