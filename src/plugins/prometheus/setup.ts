import { collectDefaultMetrics } from 'prom-client';
import { CorefileError, type Directive } from '../../corefile/ast.js';
import type { SetupFn, Shared } from '../../server/plugin.js';
import { parseHttpAddress } from '../health/endpoint.js';
import { PrometheusPlugin, type PrometheusConfig } from './handler.js';

export const DEFAULT_ADDRESS = 'localhost:9153';

/** `prometheus [ADDRESS]`: ADDRESS is host:port (default localhost:9153); no block options. */
export function parsePrometheus(d: Directive): PrometheusConfig {
  if (d.args.length > 1) throw CorefileError.at(d, `prometheus takes at most one address, got ${d.args.length} arguments`);
  for (const prop of d.block ?? []) {
    throw CorefileError.at(prop, `unknown property "${prop.name}" in prometheus block`);
  }
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_ADDRESS);
  if (typeof address === 'string') throw CorefileError.at(d, `prometheus: ${address}`);
  return { address };
}

/** Process metrics (CPU, memory, open files, event loop), once per registry like Go's collectors. */
function enableProcessMetrics(shared: Shared): void {
  shared.singleton('prometheus|process-metrics', () => {
    collectDefaultMetrics({ register: shared.metrics });
    return true;
  });
}

export const setup: SetupFn = (ctx) => {
  const config = parsePrometheus(ctx.directive);
  enableProcessMetrics(ctx.shared);
  return new PrometheusPlugin(config, ctx.shared, ctx.block);
};
