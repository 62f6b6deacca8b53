// prom-client's metric classes, loaded file by file. Its index also loads the push gateway
// (https, tls, zlib), cluster aggregation (cluster) and, through its process CPU metric,
// @opentelemetry/api, none of which kdns uses. On a bare node the index costs 51.5 MiB of RSS
// against 40.1 for these four files; in `kdns serve`, which loads http and crypto anyway, the
// saving is 1.4 MiB of heap and ~1.8 MiB of RSS. Types still come from the package.
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
export type Registry = Prom.Registry;
export const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
export type Counter<T extends string = string> = Prom.Counter<T>;
export const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;
export type Histogram<T extends string = string> = Prom.Histogram<T>;

/**
 * prom-client's default process metrics but its CPU one (see processCpuMetrics) and
 * nodejs_gc_duration_seconds. For that one Node 20 builds a performance entry, with a Map and
 * deprecated accessors, for every collection, young-generation ones included (a hundred a
 * second under load); handed over a turn later, half of them outlived the next collection:
 * they were half of all bytes promoted to the old generation under the auth bench, and 3 MiB
 * of RSS after it. (prom-client also observed only the first entry of each batch.) Pauses
 * still show in nodejs_eventloop_lag_seconds.
 */
const DEFAULT_METRIC_FILES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
] as const;

type DefaultMetric = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/**
 * What prom-client's collectDefaultMetrics registers (process_*, nodejs_*), with the same names
 * and help. The CPU counters are made here: prom-client's own file loads @opentelemetry/api for
 * exemplars, which kdns does not use.
 */
export function collectProcessMetrics(registry: Registry): void {
  for (const file of DEFAULT_METRIC_FILES) {
    (require(`prom-client/lib/metrics/${file}`) as DefaultMetric)(registry, { eventLoopMonitoringPrecision: 10 });
  }
  processCpuMetrics(registry);
}

function processCpuMetrics(registry: Registry): void {
  let last = process.cpuUsage();
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers: [registry],
    // One collect sets all three, as prom-client does.
    collect() {
      const now = process.cpuUsage();
      user.inc((now.user - last.user) / 1e6);
      system.inc((now.system - last.system) / 1e6);
      total.inc((now.user - last.user + now.system - last.system) / 1e6);
      last = now;
    },
  });
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers: [registry] });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers: [registry] });
}
