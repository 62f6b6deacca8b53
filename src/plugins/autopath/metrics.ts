// autopath's metrics: CoreDNS's success counter under its name and label, and kdns's count of
// candidates asked per expanded query (the server-side cost of saving the client its queries).
import type { Registry } from 'prom-client';
import { batchedCounter, batchedHistogram, type CounterCell, type HistogramCell } from '../pkg/series.js';

/** One bucket per candidate up to a full ClusterFirst list with a few host paths, then coarse. */
export const CANDIDATE_BUCKETS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 16, 33];

export interface AutopathMetrics {
  /** A query answered from a search-path candidate (coredns_autopath_success_total). */
  success: CounterCell;
  /** Candidates asked for one query; `_sum` counts every candidate, `_count` every expanded query. */
  candidates: HistogramCell;
}

export function autopathMetrics(registry: Registry, server: string): AutopathMetrics {
  const success = batchedCounter(registry, 'coredns_autopath_success_total', 'Counter of requests that did autopath.', ['server']);
  const candidates = batchedHistogram(
    registry,
    'kdns_autopath_candidates_tried',
    'Search-path candidates autopath asked the rest of the chain for, per expanded query.',
    ['server'],
    CANDIDATE_BUCKETS,
  );
  return { success: success.cell([server]), candidates: candidates.cell([server]) };
}
