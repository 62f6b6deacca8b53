// forward's metric families under CoreDNS's names: the coredns_proxy_* families of CoreDNS
// >= 1.11 (proxy_name="forward") and the coredns_forward_* ones that older dashboards and
// alerts still read, both kept up to date. Per-query series are batched cells (see
// ../pkg/series.ts): a labelled prom-client inc costs more than the rest of a cache miss.
import type { Registry } from 'prom-client';
import { rcodeName } from '../../lib/dns/rr.js';
import { DURATION_BUCKETS } from '../pkg/metrics.js';
import { batchedCounter, batchedHistogram, type CounterCell, type CounterFamily, type HistogramCell, type HistogramFamily } from '../pkg/series.js';

export interface ForwardMetrics {
  requests: CounterFamily;
  responses: CounterFamily;
  duration: HistogramFamily;
  proxyDuration: HistogramFamily;
  healthcheckFailures: CounterFamily;
  proxyHealthcheckFailures: CounterFamily;
  /** The name before CoreDNS 1.7, still in older dashboards and alerts. */
  healthcheckFailuresLegacy: CounterFamily;
  healthcheckBroken: CounterCell;
  maxConcurrentRejects: CounterCell;
  connCacheHits: CounterFamily;
  connCacheMisses: CounterFamily;
  forwardConnCacheHits: CounterFamily;
  forwardConnCacheMisses: CounterFamily;
  /** kdns's own: UDP queries sent again because their reply was late (CoreDNS does not resend). */
  retransmits: CounterFamily;
}

/** The `proxy_name` label of every coredns_proxy_* series forward exports. */
export const PROXY_NAME = 'forward';

export function forwardMetrics(registry: Registry): ForwardMetrics {
  return {
    requests: batchedCounter(registry, 'coredns_forward_requests_total', 'Queries sent to each upstream.', ['to']),
    responses: batchedCounter(registry, 'coredns_forward_responses_total', 'Responses received from each upstream, by RCODE.', ['to', 'rcode']),
    duration: batchedHistogram(registry, 'coredns_forward_request_duration_seconds', 'Seconds from sending a query to an upstream to its reply, by RCODE.', ['to', 'rcode'], DURATION_BUCKETS),
    proxyDuration: batchedHistogram(registry, 'coredns_proxy_request_duration_seconds', 'Seconds from sending a query to an upstream to its reply, by RCODE.', ['proxy_name', 'to', 'rcode'], DURATION_BUCKETS),
    proxyHealthcheckFailures: batchedCounter(registry, 'coredns_proxy_healthcheck_failures_total', 'Health checks of an upstream that got no reply.', ['proxy_name', 'to']),
    healthcheckFailures: batchedCounter(registry, 'coredns_forward_healthcheck_failures_total', 'Health checks of an upstream that got no reply.', ['to']),
    healthcheckFailuresLegacy: batchedCounter(registry, 'coredns_forward_healthcheck_failure_count_total', 'Health checks of an upstream that got no reply (older name of coredns_forward_healthcheck_failures_total).', ['to']),
    healthcheckBroken: batchedCounter(registry, 'coredns_forward_healthcheck_broken_total', 'Times every upstream was down, so one was picked at random.', []).cell([]),
    maxConcurrentRejects: batchedCounter(registry, 'coredns_forward_max_concurrent_rejects_total', 'Queries refused because max_concurrent queries were in flight.', []).cell([]),
    connCacheHits: batchedCounter(registry, 'coredns_proxy_conn_cache_hits_total', 'Upstream exchanges that reused an open socket or connection.', ['proxy_name', 'to', 'proto']),
    connCacheMisses: batchedCounter(registry, 'coredns_proxy_conn_cache_misses_total', 'Upstream exchanges that had to open a socket or connection.', ['proxy_name', 'to', 'proto']),
    forwardConnCacheHits: batchedCounter(registry, 'coredns_forward_conn_cache_hits_total', 'Upstream exchanges that reused an open socket or connection (older name of coredns_proxy_conn_cache_hits_total).', ['to', 'proto']),
    forwardConnCacheMisses: batchedCounter(registry, 'coredns_forward_conn_cache_misses_total', 'Upstream exchanges that had to open a socket or connection (older name of coredns_proxy_conn_cache_misses_total).', ['to', 'proto']),
    retransmits: batchedCounter(registry, 'kdns_forward_retransmits_total', 'UDP queries sent to an upstream again because its reply was late (every copy counted).', ['to']),
  };
}

/** The rcode label as CoreDNS writes it: the mnemonic, or the bare number when there is none. */
export function rcodeLabel(code: number): string {
  const name = rcodeName(code);
  return name.startsWith('RCODE') ? String(code) : name;
}

/** One count, kept under both names (each name is its own cell). */
export class CounterPair {
  constructor(
    private readonly a: CounterCell,
    private readonly b: CounterCell,
  ) {}

  inc(): void {
    this.a.inc();
    this.b.inc();
  }
}

/** One duration, observed under both names. */
export class HistogramPair {
  constructor(
    private readonly a: HistogramCell,
    private readonly b: HistogramCell,
  ) {}

  observe(seconds: number): void {
    this.a.observe(seconds);
    this.b.observe(seconds);
  }
}

/** The cells of one upstream, made once at setup so a query only bumps numbers. */
export class UpstreamCells {
  readonly requests: CounterCell;
  /** coredns_forward_healthcheck_failures_total, its pre-1.7 name and coredns_proxy_healthcheck_failures_total. */
  readonly healthcheckFailures: CounterPair;
  readonly healthcheckFailuresLegacy: CounterCell;
  readonly retransmits: CounterCell;
  private readonly responses = new Map<number, CounterCell>();
  private readonly durations = new Map<number, HistogramPair>();

  constructor(
    private readonly metrics: ForwardMetrics,
    private readonly to: string,
  ) {
    this.requests = metrics.requests.cell([to]);
    this.healthcheckFailures = new CounterPair(metrics.healthcheckFailures.cell([to]), metrics.proxyHealthcheckFailures.cell([PROXY_NAME, to]));
    this.healthcheckFailuresLegacy = metrics.healthcheckFailuresLegacy.cell([to]);
    this.retransmits = metrics.retransmits.cell([to]);
  }

  /** Where an exchange that got `rcode` records its duration (coredns_forward_ and coredns_proxy_request_duration_seconds). */
  duration(rcode: number): HistogramPair {
    let d = this.durations.get(rcode);
    if (!d) {
      const label = rcodeLabel(rcode);
      d = new HistogramPair(this.metrics.duration.cell([this.to, label]), this.metrics.proxyDuration.cell([PROXY_NAME, this.to, label]));
      this.durations.set(rcode, d);
    }
    return d;
  }

  response(rcode: number): CounterCell {
    let c = this.responses.get(rcode);
    if (!c) {
      c = this.metrics.responses.cell([this.to, rcodeLabel(rcode)]);
      this.responses.set(rcode, c);
    }
    return c;
  }

  connCounters(proto: string): { hit: CounterPair; miss: CounterPair } {
    const m = this.metrics;
    return {
      hit: new CounterPair(m.connCacheHits.cell([PROXY_NAME, this.to, proto]), m.forwardConnCacheHits.cell([this.to, proto])),
      miss: new CounterPair(m.connCacheMisses.cell([PROXY_NAME, this.to, proto]), m.forwardConnCacheMisses.cell([this.to, proto])),
    };
  }
}
