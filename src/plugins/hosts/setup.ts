import { argPosition, blockProperties, expectArgs, noBlockAllowed, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { gauge } from '../../server/metrics.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { parseFallthrough } from '../pkg/fallthrough.js';
import { parseReload } from '../pkg/filereload.js';
import { normalizeZones } from '../pkg/zones.js';
import { DEFAULT_HOSTS_PATH, DEFAULT_RELOAD_MS, DEFAULT_TTL, HostsPlugin, type HostsConfig, type HostsMetrics } from './handler.js';
import { hostsFields, parseHostAddress, parseHostsEntry, type HostsLine } from './hostsfile.js';

export const MAX_TTL = 65535;

export function parseTtl(d: Directive): number {
  const [text] = expectArgs(d, 1, 1) as [string];
  return parseIntArg(text, argPosition(d, 0), { what: 'ttl', min: 1, max: MAX_TTL });
}

/**
 * `hosts [FILE [ZONES...]] { [INLINE ENTRIES] ttl SECONDS  no_reverse  reload DURATION
 * fallthrough [ZONES...] }`. A block line that starts with an IP address is an inline entry;
 * any other unknown word is an error (CoreDNS would silently take a typo such as `tll 60`
 * for a hosts line and drop it).
 */
export function parseHosts(d: Directive, blockZones: readonly string[], corefilePath: string): HostsConfig {
  const [file, ...zoneArgs] = d.args;
  const path = file === undefined ? DEFAULT_HOSTS_PATH : corefileRelative(file, corefilePath);
  const zones = zoneArgs.length > 0 ? zoneArgs.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const config: HostsConfig = { path, zones, ttl: DEFAULT_TTL, autoReverse: true, reloadMs: DEFAULT_RELOAD_MS, inline: [] };
  // Options appear once each; inline entries are checked by parseInline.
  const option = (prop: Directive): string | undefined => (['ttl', 'no_reverse', 'reload', 'fallthrough'].includes(prop.name) ? prop.name : undefined);
  for (const prop of blockProperties(d, 'hosts', option)) {
    switch (prop.name) {
      case 'ttl':
        config.ttl = parseTtl(prop);
        break;
      case 'no_reverse':
        expectArgs(prop, 0, 0);
        config.autoReverse = false;
        break;
      case 'reload':
        config.reloadMs = parseReload(prop);
        break;
      case 'fallthrough':
        config.fallthrough = parseFallthrough(prop);
        break;
      default:
        config.inline.push(parseInline(prop));
    }
  }
  return config;
}

function parseInline(prop: Directive): HostsLine {
  if (parseHostAddress(prop.name) === undefined) unknownProperty(prop, 'hosts');
  noBlockAllowed(prop);
  const entry = parseHostsEntry(hostsFields([prop.name, ...prop.args].join(' ')), prop.line);
  if (typeof entry === 'string') throw CorefileError.at(prop, `invalid hosts entry: ${entry}`);
  return entry;
}

function metricsFor(registry: Parameters<typeof gauge>[0]): HostsMetrics {
  return {
    entries: gauge(registry, 'coredns_hosts_entries', 'Number of (name, address) pairs served from the hosts file and the inline entries.'),
    reloadTimestamp: gauge(registry, 'coredns_hosts_reload_timestamp_seconds', 'Unix time at which the hosts file was last (re)loaded.'),
  };
}

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  // One hosts per block, as in CoreDNS: two would silently shadow each other.
  const onceKey = `hosts@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(onceKey)) throw CorefileError.at(d, 'hosts can only be used once per server block');
  ctx.instance.set(onceKey, true);
  const config = parseHosts(d, ctx.block.zones, ctx.corefilePath);
  return new HostsPlugin(config, { log: ctx.shared.log.plugin('hosts'), metrics: metricsFor(ctx.shared.metrics) });
};
