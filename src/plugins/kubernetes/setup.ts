// `kubernetes` setup: read the block, find (or start sharing) the cluster source, build the handler.

import { statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { CorefileError } from '../../lib/corefile/ast.js';
import { canonicalIP } from '../../lib/cluster/keys.js';
import type { BlockSettings, SetupFn } from '../../server/plugin.js';
import { parseKubernetes, type SourceSpec } from './config.js';
import { KubernetesPlugin } from './handler.js';
import { SourceRegistry } from './sources.js';
import { TransferHub } from '../pkg/xfr.js';

/** Key under which other plugins of the same config (autopath) find this block's kubernetes plugin. */
export function instanceKey(file: string, line: number): string {
  return `kubernetes@${file}:${line}`;
}

/**
 * The addresses this server answers on: the block's `bind` addresses, else every interface
 * address (CoreDNS does the same to find which Service fronts it).
 */
export function localAddresses(settings: BlockSettings): string[] {
  const bound = settings.listenAddresses.map((a) => canonicalIP(a)).filter((a): a is string => a !== undefined && a !== '0.0.0.0' && a !== '::');
  if (bound.length > 0) return bound;
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) {
      // Link-local IPv6 needs a scope to be usable: useless in an A/AAAA record.
      if (i.family === 'IPv6' && i.address.startsWith('fe80')) continue;
      const ip = canonicalIP(i.address);
      if (ip !== undefined && !out.includes(ip)) out.push(ip);
    }
  }
  return out;
}

/** A source of manifests must be a directory that exists when the Corefile loads (a typo fails here, with its line). */
export function checkManifestsDirectory(source: SourceSpec, at: { file: string; line: number }, plugin: string): void {
  if (source.kind !== 'directory') return;
  const dir = source.dir;
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (e) {
    throw CorefileError.at(at, `${plugin}: manifests directory ${dir}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (e as Error).message}`);
  }
  if (!isDir) throw CorefileError.at(at, `${plugin}: manifests ${dir} is not a directory`);
}

export const setup: SetupFn = async (ctx) => {
  const d = ctx.directive;
  const key = instanceKey(ctx.block.file, ctx.block.line);
  if (ctx.instance.has(key)) throw CorefileError.at(d, 'kubernetes can only be used once per server block');
  const cfg = parseKubernetes(d, ctx.block.zones, ctx.corefilePath, ctx.options.clusterDir);
  checkManifestsDirectory(cfg.source, d, 'kubernetes');
  let handle;
  try {
    handle = await SourceRegistry.of(ctx.shared).acquire(cfg.source, {
      pods: cfg.podMode === 'verified',
      endpoints: !cfg.noEndpoints,
      multicluster: (cfg.multiclusterZones ?? []).length > 0,
      // Only blocks that serve zone-scoped names pay for the zones (and they read the source separately).
      ...(cfg.zonal ? { zones: true } : {}),
    });
  } catch (e) {
    throw CorefileError.at(d, `kubernetes: ${(e as Error).message}`);
  }
  const settings = ctx.block.settings;
  const plugin = new KubernetesPlugin(cfg, handle, { log: ctx.shared.log.plugin('kubernetes'), localIPs: () => localAddresses(settings) });
  ctx.instance.set(key, plugin);
  TransferHub.of(ctx.instance, ctx.block).offer(plugin);
  return plugin;
};
