// The process metrics (process_*, nodejs_*) that Node.js Prometheus clients export, under the
// names, help texts and labels prom-client's collectDefaultMetrics gives them, so dashboards made
// for Node.js services read kdns. kdns registers them itself rather than through
// collectDefaultMetrics because that also times every garbage collection
// (nodejs_gc_duration_seconds) with a performance observer that builds objects for each one, a
// hundred a second under load; half of them outlived the next collection and were half of what
// the server promoted to its old generation (3 MiB of RSS after the auth bench). GC pauses
// still show in nodejs_eventloop_lag_seconds; `prometheus { runtime_metrics }` adds the GC
// timing for those who want it (collectGcMetrics).
//
// Values are read when Prometheus scrapes: each group's first gauge has a `collect` that sets
// the whole group.

import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, type Registry } from '../../server/promclient.js';

/** When the process started, in whole seconds since the epoch. */
const START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

/** How finely the event loop's delay is sampled, in ms (prom-client's default). */
const EVENT_LOOP_RESOLUTION_MS = 10;

/** Registers every process metric in `registry`. Once per registry. */
export function collectProcessMetrics(registry: Registry): void {
  startTime(registry);
  memory(registry);
  fileDescriptors(registry);
  eventLoop(registry);
  activeResources(registry);
  activeHandlesAndRequests(registry);
  heap(registry);
  heapSpaces(registry);
  version(registry);
  cpu(registry);
}

function plainGauge(registry: Registry, name: string, help: string, collect?: () => void): Gauge {
  return new Gauge({ name, help, registers: [registry], ...(collect ? { collect } : {}) });
}

function startTime(registry: Registry): void {
  const g: Gauge = plainGauge(registry, 'process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => g.set(START_SECONDS));
}

/** kB figures of /proc/self/status, by field name. */
export function statusKilobytes(status: string, fields: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of status.split('\n')) {
    const colon = line.indexOf(':');
    const field = line.slice(0, colon);
    if (colon < 0 || !fields.includes(field)) continue;
    const kb = Number.parseInt(line.slice(colon + 1).trim(), 10);
    if (Number.isFinite(kb)) out.set(field, kb);
  }
  return out;
}

function memory(registry: Registry): void {
  const rss: Gauge = plainGauge(registry, 'process_resident_memory_bytes', 'Resident memory size in bytes.', () => {
    let status: string;
    try {
      // A read of procfs never blocks: the kernel writes the figures as it is read.
      status = readFileSync('/proc/self/status', 'utf8');
    } catch {
      rss.set(process.memoryUsage.rss());
      return;
    }
    const kb = statusKilobytes(status, ['VmRSS', 'VmSize', 'VmData']);
    const set = (g: Gauge, field: string): void => {
      const v = kb.get(field);
      if (v !== undefined) g.set(v * 1024);
    };
    set(rss, 'VmRSS');
    set(virtual, 'VmSize');
    set(data, 'VmData');
  });
  const virtual = plainGauge(registry, 'process_virtual_memory_bytes', 'Virtual memory size in bytes.');
  const data = plainGauge(registry, 'process_heap_bytes', 'Process heap size in bytes.');
}

/** The soft limit on open files from /proc/self/limits, or undefined without procfs. */
export function maxOpenFiles(limits: string): number | undefined {
  const line = limits.split('\n').find((l) => l.startsWith('Max open files'));
  // Columns are separated by runs of spaces: name, soft limit, hard limit, units.
  const soft = line?.split(/ {2,}/)[1];
  return soft === undefined ? undefined : Number(soft);
}

function fileDescriptors(registry: Registry): void {
  if (process.platform !== 'linux') return;
  const open: Gauge = plainGauge(registry, 'process_open_fds', 'Number of open file descriptors.', () => {
    try {
      // The listing itself holds one descriptor, closed again by now: not counted.
      open.set(readdirSync('/proc/self/fd').length - 1);
    } catch {
      // Without procfs the gauge keeps its last value.
    }
  });
  let max: number | undefined;
  try {
    max = maxOpenFiles(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return;
  }
  if (max === undefined) return;
  const limit = max;
  const g: Gauge = plainGauge(registry, 'process_max_fds', 'Maximum number of open file descriptors.', () => g.set(limit));
}

function eventLoop(registry: Registry): void {
  const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  delay.enable();
  const lag: Gauge = plainGauge(registry, 'nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', () => {
    // How long a callback queued now waits for its turn (set after this scrape: the next one shows it).
    const queued = process.hrtime.bigint();
    setImmediate(() => lag.set(Number(process.hrtime.bigint() - queued) / 1e9));
    min.set(delay.min / 1e9);
    max.set(delay.max / 1e9);
    mean.set(delay.mean / 1e9);
    stddev.set(delay.stddev / 1e9);
    p50.set(delay.percentile(50) / 1e9);
    p90.set(delay.percentile(90) / 1e9);
    p99.set(delay.percentile(99) / 1e9);
    delay.reset();
  });
  const min = plainGauge(registry, 'nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.');
  const max = plainGauge(registry, 'nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.');
  const mean = plainGauge(registry, 'nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.');
  const stddev = plainGauge(registry, 'nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.');
  const p50 = plainGauge(registry, 'nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.');
  const p90 = plainGauge(registry, 'nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.');
  const p99 = plainGauge(registry, 'nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.');
}

/** How many of each name `names` holds, in the order names first appear. */
export function countByName(names: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}

/** Replaces every series of `gauge` by one per type: types that went away disappear. */
function setByType(gauge: Gauge<'type'>, counts: Map<string, number>): void {
  gauge.reset();
  for (const [type, n] of counts) gauge.set({ type }, n);
}

/** A pair: per type and in all. */
function typedPair(registry: Registry, name: string, help: string, totalHelp: string, list: () => readonly string[]): void {
  const byType: Gauge<'type'> = new Gauge({
    name,
    help,
    labelNames: ['type'],
    registers: [registry],
    collect: () => setByType(byType, countByName(list())),
  });
  const total: Gauge = plainGauge(registry, `${name}_total`, totalHelp, () => total.set(list().length));
}

function activeResources(registry: Registry): void {
  typedPair(
    registry,
    'nodejs_active_resources',
    'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    'Total number of active resources.',
    () => process.getActiveResourcesInfo(),
  );
}

/**
 * Handles and requests by JavaScript class (Socket, Server, FSReqCallback…). Node.js lists them
 * only through process._getActiveHandles and _getActiveRequests, deprecated in its documentation
 * in favour of getActiveResourcesInfo (above) but still there in Node.js 26. Where a release
 * drops them these four families go missing, and the exposition test says so.
 */
interface ActiveLists {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

function classNames(list: readonly unknown[]): string[] {
  const names: string[] = [];
  for (const item of list) {
    const ctor = (item as { constructor?: { name?: unknown } } | null)?.constructor;
    if (typeof ctor?.name === 'string') names.push(ctor.name);
  }
  return names;
}

function activeHandlesAndRequests(registry: Registry): void {
  const p = process as unknown as ActiveLists;
  const handles = p._getActiveHandles;
  const requests = p._getActiveRequests;
  if (typeof handles === 'function') {
    typedPair(
      registry,
      'nodejs_active_handles',
      'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
      'Total number of active handles.',
      () => classNames(handles.call(process)),
    );
  }
  if (typeof requests === 'function') {
    typedPair(
      registry,
      'nodejs_active_requests',
      'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
      'Total number of active requests.',
      () => classNames(requests.call(process)),
    );
  }
}

function heap(registry: Registry): void {
  const total: Gauge = plainGauge(registry, 'nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => {
    const m = process.memoryUsage();
    total.set(m.heapTotal);
    used.set(m.heapUsed);
    external.set(m.external);
  });
  const used = plainGauge(registry, 'nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.');
  const external = plainGauge(registry, 'nodejs_external_memory_bytes', 'Node.js external memory size in bytes.');
}

/** V8's space name without its `_space` suffix (`old_space` → `old`). */
export function spaceLabel(spaceName: string): string {
  const end = spaceName.indexOf('_space');
  return end < 0 ? spaceName : spaceName.slice(0, end);
}

function heapSpaces(registry: Registry): void {
  const gauge = (what: string, collect?: () => void): Gauge<'space'> =>
    new Gauge({
      name: `nodejs_heap_space_size_${what}_bytes`,
      help: `Process heap space size ${what} from Node.js in bytes.`,
      labelNames: ['space'],
      registers: [registry],
      ...(collect ? { collect } : {}),
    });
  const total = gauge('total', () => {
    for (const s of getHeapSpaceStatistics()) {
      const space = spaceLabel(s.space_name);
      total.set({ space }, s.space_size);
      used.set({ space }, s.space_used_size);
      available.set({ space }, s.space_available_size);
    }
  });
  const used = gauge('used');
  const available = gauge('available');
}

function version(registry: Registry): void {
  const [major, minor, patch] = process.version.slice(1).split('.');
  const labels = { version: process.version, major: major ?? '', minor: minor ?? '', patch: patch ?? '' };
  // Set on every scrape so that a registry reset does not lose it.
  const info: Gauge<'version' | 'major' | 'minor' | 'patch'> = new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'],
    registers: [registry],
    collect: () => info.set(labels, 1),
  });
}

/** CPU seconds since the start, user and system; one collect sets all three. */
function cpu(registry: Registry): void {
  let last = process.cpuUsage();
  const user: Counter = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers: [registry],
    collect: () => {
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

/** prom-client's names for the kinds of collection V8 reports (perf_hooks' NODE_PERFORMANCE_GC_*). */
const GC_KINDS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** The `kind` label of a collection, from the kind number V8 gives it. */
export function gcKindLabel(kind: number | undefined): string {
  return (kind !== undefined ? GC_KINDS.get(kind) : undefined) ?? 'unknown';
}

/**
 * `prometheus { runtime_metrics }`: times every garbage collection into nodejs_gc_duration_seconds
 * (prom-client's name, help, label and buckets). Left out by default for the memory it costs (see
 * the top of this file); asked for, it tells how much of the time the process spends collecting.
 * The observer lives as long as the process, as CoreDNS's runtime_metrics stays on until restart.
 */
export function collectGcMetrics(registry: Registry): void {
  const histogram = new Histogram({
    name: 'nodejs_gc_duration_seconds',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
    registers: [registry],
  });
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // `detail` carries the kind since Node.js 16; older type definitions do not declare it.
      const detail = (entry as { detail?: { kind?: number } }).detail;
      histogram.observe({ kind: gcKindLabel(detail?.kind) }, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
