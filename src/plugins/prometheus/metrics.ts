// The metric families of the DNS server, under CoreDNS's names and labels so that existing
// dashboards and alerts keep working. Every setup gets or creates them by name in the shared
// registry: counts survive reloads.

import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import { gauge } from '../../server/metrics.js';
import { DURATION_BUCKETS } from '../pkg/metrics.js';
import { batchedCounter, batchedHistogram, type CounterFamily, type HistogramFamily } from '../pkg/series.js';

/** CoreDNS's size buckets: around the 512-byte classic UDP limit, then powers of two up to 64 KB. */
export const SIZE_BUCKETS: readonly number[] = [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3];

export interface DnsMetrics {
  requests: CounterFamily;
  doRequests: CounterFamily;
  duration: HistogramFamily;
  requestSize: HistogramFamily;
  responseSize: HistogramFamily;
  responses: CounterFamily;
}

// Label orders; cells are addressed by values in these orders.
export const REQUEST_LABELS = ['server', 'zone', 'view', 'proto', 'family', 'type'] as const;
export const DO_LABELS = ['server', 'view', 'zone'] as const;
export const DURATION_LABELS = ['server', 'zone', 'view', 'type'] as const;
export const SIZE_LABELS = ['server', 'zone', 'view', 'proto'] as const;
export const RESPONSE_LABELS = ['server', 'zone', 'view', 'rcode', 'plugin'] as const;

export function dnsMetrics(registry: Registry): DnsMetrics {
  return {
    requests: batchedCounter(registry, 'coredns_dns_requests_total', 'DNS requests received, by server block, zone, transport, address family and query type.', REQUEST_LABELS),
    doRequests: batchedCounter(registry, 'coredns_dns_do_requests_total', 'DNS requests that had the DNSSEC OK bit set.', DO_LABELS),
    duration: batchedHistogram(
      registry,
      'coredns_dns_request_duration_seconds',
      'Seconds from receiving a request to having its response ready.',
      DURATION_LABELS,
      DURATION_BUCKETS,
    ),
    requestSize: batchedHistogram(registry, 'coredns_dns_request_size_bytes', 'Size of DNS requests in bytes, as received (before any plugin rewrote them).', SIZE_LABELS, SIZE_BUCKETS),
    responseSize: batchedHistogram(registry, 'coredns_dns_response_size_bytes', 'Size of DNS responses in bytes, as sent to the client.', SIZE_LABELS, SIZE_BUCKETS),
    responses: batchedCounter(registry, 'coredns_dns_responses_total', 'DNS responses sent, by response code and by the plugin that answered.', RESPONSE_LABELS),
  };
}

const require = createRequire(import.meta.url);

/** kdns's version from package.json (three levels up from src/ or dist/plugins/prometheus/). */
export function kdnsVersion(): string {
  try {
    return (require('../../../package.json') as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** coredns_build_info: always 1; the labels say what is running (kdns's version, Node's in place of Go's). */
export function setBuildInfo(registry: Registry): void {
  const info = gauge(registry, 'coredns_build_info', 'Always 1; the labels name the running kdns version and the Node.js version (in place of Go\'s).', [
    'version',
    'revision',
    'goversion',
  ]);
  info.set({ version: kdnsVersion(), revision: '', goversion: process.version }, 1);
}
