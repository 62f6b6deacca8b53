import type { Registry } from '../../server/promclient.js';

/** The /metrics body. */
export function scrapeText(registry: Registry): Promise<string> {
  return registry.metrics();
}
