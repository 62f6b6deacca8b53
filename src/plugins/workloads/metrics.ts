// Prometheus families of the workloads plugin. Values are computed from the accounting at each
// scrape (nothing per query): one series per labelled workload, the rest summed as `_other`.

import type { Registry } from 'prom-client';
import { Counter, Gauge } from '../../server/promclient.js';
import { RCODE_LABELS, type Accounting } from './accounting.js';
import { amplification, windowOf } from './report.js';

const WORKLOAD_LABELS = ['namespace', 'workload', 'kind'] as const;

/** The accounting the registered families read; a reload points them at the same (process-wide) one. */
export function registerWorkloadMetrics(registry: Registry, acc: Accounting): void {
  if (registry.getSingleMetric('kdns_workload_queries_total')) return;
  new Counter({
    name: 'kdns_workload_queries_total',
    help: 'DNS queries by the workload of the pod that sent them (client IP), by response code.',
    labelNames: [...WORKLOAD_LABELS, 'rcode'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { id, values } of acc.seriesValues()) {
        RCODE_LABELS.forEach((rcode, i) => {
          const v = values[i] as number;
          if (v > 0) this.inc({ namespace: id.namespace, workload: id.workload, kind: id.kind, rcode }, v);
        });
      }
    },
  });
  new Counter({
    name: 'kdns_workload_search_expansions_total',
    help: 'Queries that were a further search-list candidate after an earlier candidate of the same lookup was denied.',
    labelNames: [...WORKLOAD_LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const { id, values } of acc.seriesValues()) {
        const v = values[RCODE_LABELS.length] as number;
        this.inc({ namespace: id.namespace, workload: id.workload, kind: id.kind }, v);
      }
    },
  });
  new Gauge({
    name: 'kdns_workload_amplification',
    help: 'Queries per lookup over the last minute, by workload and address family (1 = no search-list expansion).',
    labelNames: [...WORKLOAD_LABELS, 'family'],
    registers: [registry],
    collect() {
      this.reset();
      for (const w of acc.labelledWorkloads()) {
        const win = windowOf(w, 60_000);
        (['A', 'AAAA'] as const).forEach((family, i) => {
          const a = amplification(win.lookups[i] as number, win.familyQueries[i] as number);
          if (a !== undefined) this.set({ namespace: w.namespace, workload: w.workload, kind: w.kind, family }, a);
        });
      }
    },
  });
}
