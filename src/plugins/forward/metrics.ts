// forward's metric families under CoreDNS's names. Per-query series are batched cells (see
// ../prometheus/series.ts): a labelled prom-client inc costs more than the rest of a cache miss.
import type { Registry } from 'prom-client';
import { RCode } from '../../dns/types.js';
import { DURATION_BUCKETS } from '../prometheus/metrics.js';
import { batchedCounter, batchedHistogram, type CounterCell, type CounterFamily, type HistogramCell, type HistogramFamily } from '../prometheus/series.js';

export interface ForwardMetrics {
  requests: CounterFamily;
  responses: CounterFamily;
  duration: HistogramFamily;
  healthcheckFailures: CounterFamily;
  /** The name before CoreDNS 1.7, still in older dashboards and alerts. */
  healthcheckFailuresLegacy: CounterFamily;
  healthcheckBroken: CounterCell;
  maxConcurrentRejects: CounterCell;
  connCacheHits: CounterFamily;
  connCacheMisses: CounterFamily;
}

export function forwardMetrics(registry: Registry): ForwardMetrics {
  return {
    requests: batchedCounter(registry, 'coredns_forward_requests_total', 'Queries sent to each upstream.', ['to']),
    responses: batchedCounter(registry, 'coredns_forward_responses_total', 'Responses received from each upstream, by RCODE.', ['to', 'rcode']),
    duration: batchedHistogram(registry, 'coredns_forward_request_duration_seconds', 'Seconds from sending a query to an upstream to its reply.', ['to'], DURATION_BUCKETS),
    healthcheckFailures: batchedCounter(registry, 'coredns_forward_healthcheck_failures_total', 'Health checks of an upstream that got no reply.', ['to']),
    healthcheckFailuresLegacy: batchedCounter(registry, 'coredns_forward_healthcheck_failure_count_total', 'Health checks of an upstream that got no reply (older name of coredns_forward_healthcheck_failures_total).', ['to']),
    healthcheckBroken: batchedCounter(registry, 'coredns_forward_healthcheck_broken_total', 'Times every upstream was down, so one was picked at random.', []).cell([]),
    maxConcurrentRejects: batchedCounter(registry, 'coredns_forward_max_concurrent_rejects_total', 'Queries refused because max_concurrent queries were in flight.', []).cell([]),
    connCacheHits: batchedCounter(registry, 'coredns_proxy_conn_cache_hits_total', 'Upstream exchanges that reused an open socket or connection.', ['proxy_name', 'to', 'proto']),
    connCacheMisses: batchedCounter(registry, 'coredns_proxy_conn_cache_misses_total', 'Upstream exchanges that had to open a socket or connection.', ['proxy_name', 'to', 'proto']),
  };
}

const RCODE_NAMES = new Map<number, string>(Object.entries(RCode).map(([k, v]) => [v, k]));

export function rcodeName(code: number): string {
  return RCODE_NAMES.get(code) ?? `RCODE${code}`;
}

/** The cells of one upstream, made once at setup so a query only bumps numbers. */
export class UpstreamCells {
  readonly requests: CounterCell;
  readonly duration: HistogramCell;
  readonly healthcheckFailures: CounterCell;
  readonly healthcheckFailuresLegacy: CounterCell;
  private readonly responses = new Map<number, CounterCell>();

  constructor(
    private readonly metrics: ForwardMetrics,
    private readonly to: string,
  ) {
    this.requests = metrics.requests.cell([to]);
    this.duration = metrics.duration.cell([to]);
    this.healthcheckFailures = metrics.healthcheckFailures.cell([to]);
    this.healthcheckFailuresLegacy = metrics.healthcheckFailuresLegacy.cell([to]);
  }

  response(rcode: number): CounterCell {
    let c = this.responses.get(rcode);
    if (!c) {
      c = this.metrics.responses.cell([this.to, rcodeName(rcode)]);
      this.responses.set(rcode, c);
    }
    return c;
  }

  connCounters(proto: string): { hit: CounterCell; miss: CounterCell } {
    return { hit: this.metrics.connCacheHits.cell(['forward', this.to, proto]), miss: this.metrics.connCacheMisses.cell(['forward', this.to, proto]) };
  }
}
