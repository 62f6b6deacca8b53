// The /metrics body: every metric of the registry in registration order, as prom-client's
// `registry.metrics()` writes them, but kdns's histogram families written by kdns (see
// ../pkg/series.ts). Only public Registry calls: getMetricsAsArray and getSingleMetricAsString.
import type { Registry } from '../../server/promclient.js';
import { answerPodScrapes, podMetrics } from '../../server/metricsum.js';
import { BatchedHistogram } from '../pkg/series.js';

export async function scrapeText(registry: Registry): Promise<string> {
  const families: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    // Typed as prom-client's own metric objects, which ours is not: tested as unknown.
    const m: unknown = metric;
    families.push(m instanceof BatchedHistogram ? m.exposition() : await registry.getSingleMetricAsString(metric.name));
  }
  return `${families.join('\n\n')}\n`;
}

/** Lets sibling workers gather this process's body (a no-op without siblings). */
export function answerScrapes(registry: Registry): void {
  answerPodScrapes(() => scrapeText(registry));
}

/** The body of the whole pod: every worker's, summed (src/server/metricsum.ts). */
export function podScrape(registry: Registry): Promise<string> {
  return podMetrics(() => scrapeText(registry));
}
