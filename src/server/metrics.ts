// Get-or-create for prom-client metrics: setup runs again on every reload, and a metric may be
// registered only once per registry, so every plugin asks through these.
import { Counter, Gauge, Histogram, type Registry } from './promclient.js';

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return existing<Counter<L>>(registry, name) ?? new Counter<L>({ name, help, labelNames, registers: [registry] });
}

export function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
  return existing<Gauge<L>>(registry, name) ?? new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets?: number[],
): Histogram<L> {
  const found: unknown = registry.getSingleMetric(name);
  if (found === undefined) return new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
  // The DNS server's own histograms (src/plugins/pkg/series.ts) are not prom-client's.
  if (!(found instanceof Histogram)) throw new Error(`metric ${name} is registered, but not as a prom-client Histogram`);
  return found as Histogram<L>;
}
