import type { Registry } from '../../server/promclient.js';
import { parseHttpAddress } from '../pkg/httpaddress.js';
import { serverLabel } from '../pkg/metrics.js';
import { collectProcessMetrics } from './process.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, SetupFn, Shared } from '../../server/plugin.js';
import { PrometheusPlugin, type PrometheusConfig } from './handler.js';
import { gauge } from '../../server/metrics.js';

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
    collectProcessMetrics(shared.metrics);
    return true;
  });
}

/** coredns_plugin_enabled: 1 for every plugin of the block, per zone, as CoreDNS reports them. */
function markPluginsEnabled(registry: Registry, block: BlockInfo): void {
  const enabled = gauge(registry, 'coredns_plugin_enabled', 'A metric that indicates whether a plugin is enabled on per server and zone basis.', ['server', 'zone', 'view', 'name']);
  const addresses = block.settings.listenAddresses.length > 0 ? block.settings.listenAddresses : [''];
  for (const address of addresses) {
    for (const zone of block.zones) {
      for (const name of block.plugins) enabled.set({ server: serverLabel(address, block.port), zone, view: '', name }, 1);
    }
  }
}

/** CoreDNS allows one `prometheus` per server block. */
function claimBlock(instance: Map<string, unknown>, block: BlockInfo, d: Directive): void {
  const seen = (instance.get('prometheus|blocks') as Set<BlockInfo> | undefined) ?? new Set<BlockInfo>();
  instance.set('prometheus|blocks', seen);
  if (seen.has(block)) throw CorefileError.at(d, 'prometheus can only be used once per server block');
  seen.add(block);
}

export const setup: SetupFn = (ctx) => {
  const config = parsePrometheus(ctx.directive);
  claimBlock(ctx.instance, ctx.block, ctx.directive);
  enableProcessMetrics(ctx.shared);
  markPluginsEnabled(ctx.shared.metrics, ctx.block);
  return new PrometheusPlugin(config, ctx.shared, ctx.block);
};
