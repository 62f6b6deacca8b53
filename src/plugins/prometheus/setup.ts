import { parseHttpAddress } from '../pkg/httpaddress.js';
import { collectGcMetrics, collectProcessMetrics } from './process.js';
import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import type { HttpsIdentity } from '../pkg/endpoint.js';
import { loadWebConfig, WebConfigError } from './webconfig.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, SetupFn, Shared } from '../../server/plugin.js';
import { PrometheusPlugin, type PrometheusConfig } from './handler.js';

export const DEFAULT_ADDRESS = 'localhost:9153';

/** `prometheus [ADDRESS] { runtime_metrics; tls WEB_CONFIG }`: ADDRESS is host:port (default localhost:9153). */
export function parsePrometheus(d: Directive, corefilePath = 'Corefile'): PrometheusConfig {
  if (d.args.length > 1) throw CorefileError.at(d, `prometheus takes at most one address, got ${d.args.length} arguments`);
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_ADDRESS);
  if (typeof address === 'string') throw CorefileError.at(d, `prometheus: ${address}`);
  const config: PrometheusConfig = { address, runtimeMetrics: false };
  for (const prop of d.block ?? []) {
    switch (prop.name) {
      case 'runtime_metrics':
        expectArgs(prop, 0, 0);
        noBlockAllowed(prop);
        config.runtimeMetrics = true;
        break;
      case 'tls':
        if (config.webConfig !== undefined) throw CorefileError.at(prop, 'tls block already specified in prometheus');
        noBlockAllowed(prop);
        config.webConfig = corefileRelative(expectArgs(prop, 1, 1)[0] as string, corefilePath);
        break;
      default:
        throw CorefileError.at(prop, `unknown property "${prop.name}" in prometheus block`);
    }
  }
  return config;
}

/** The HTTPS identity the web configuration file gives, read now so that a bad file fails setup. */
function loadIdentity(d: Directive, config: PrometheusConfig): HttpsIdentity | undefined {
  if (config.webConfig === undefined) return undefined;
  const at = d.block?.find((p) => p.name === 'tls') ?? d;
  try {
    return loadWebConfig(config.webConfig);
  } catch (e) {
    if (e instanceof WebConfigError) throw CorefileError.at(at, `prometheus tls ${config.webConfig}: ${e.message}`);
    throw e;
  }
}

/** runtime_metrics: GC timing, process-wide from the first block that asks until the process ends (as CoreDNS's latch). */
function enableRuntimeMetrics(shared: Shared): void {
  shared.singleton('prometheus|runtime-metrics', () => {
    collectGcMetrics(shared.metrics);
    return true;
  });
}

/** Process metrics (CPU, memory, open files, event loop), once per registry like Go's collectors. */
function enableProcessMetrics(shared: Shared): void {
  shared.singleton('prometheus|process-metrics', () => {
    collectProcessMetrics(shared.metrics);
    return true;
  });
}

/** CoreDNS allows one `prometheus` per server block. */
function claimBlock(instance: Map<string, unknown>, block: BlockInfo, d: Directive): void {
  const seen = (instance.get('prometheus|blocks') as Set<BlockInfo> | undefined) ?? new Set<BlockInfo>();
  instance.set('prometheus|blocks', seen);
  if (seen.has(block)) throw CorefileError.at(d, 'prometheus can only be used once per server block');
  seen.add(block);
}

export const setup: SetupFn = (ctx) => {
  const config = parsePrometheus(ctx.directive, ctx.corefilePath);
  const identity = loadIdentity(ctx.directive, config);
  claimBlock(ctx.instance, ctx.block, ctx.directive);
  enableProcessMetrics(ctx.shared);
  if (config.runtimeMetrics) enableRuntimeMetrics(ctx.shared);
  return new PrometheusPlugin(config, ctx.shared, ctx.block, identity);
};
