import { dirname, isAbsolute, resolve } from 'node:path';
import { CorefileError, type Directive } from '../../corefile/ast.js';
import { cidrToReverseZones, fqdn, isValidDomainName, lowerName } from '../../dns/name.js';
import { gauge } from '../../server/metrics.js';
import type { SetupFn } from '../../server/plugin.js';
import { DEFAULT_HOSTS_PATH, DEFAULT_RELOAD_MS, DEFAULT_TTL, HostsPlugin, type HostsConfig, type HostsMetrics } from './handler.js';
import { hostsFields, parseHostAddress, parseHostsEntry } from './hostsfile.js';

export const MAX_TTL = 65535;

/** A zone argument: a domain name, or a CIDR standing for its reverse zones (as in server keys). */
export function normalizeZones(arg: string, at: Directive): string[] {
  if (arg.includes('/')) {
    try {
      return cidrToReverseZones(arg);
    } catch {
      throw CorefileError.at(at, `invalid zone "${arg}": not a valid CIDR`);
    }
  }
  if (!isValidDomainName(arg)) throw CorefileError.at(at, `invalid zone "${arg}"`);
  return [lowerName(fqdn(arg))];
}

const DURATION_UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration forms ("5s", "300ms", "1.5h", "2h45m", "0"), in ms; undefined if malformed. */
export function parseDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  const re = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * (DURATION_UNITS_MS[m[2] as string] as number);
    at = re.lastIndex;
  }
  return at > 0 ? total : undefined;
}

function oneArg(d: Directive, what: string): string {
  if (d.args.length !== 1) throw CorefileError.at(d, `${d.name} needs exactly one argument (${what}), got ${d.args.length}`);
  return d.args[0] as string;
}

export function parseTtl(d: Directive): number {
  const text = oneArg(d, 'seconds');
  const ttl = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(ttl >= 1 && ttl <= MAX_TTL)) throw CorefileError.at(d, `ttl must be a whole number of seconds from 1 to ${MAX_TTL}, got "${text}"`);
  return ttl;
}

export function parseReload(d: Directive): number {
  const text = oneArg(d, 'a duration, 0 to disable');
  const ms = parseDurationMs(text);
  if (ms === undefined) throw CorefileError.at(d, `reload needs a duration such as 5s or 1m (0 disables), got "${text}"`);
  return ms;
}

/**
 * `hosts [FILE [ZONES...]] { [INLINE ENTRIES] ttl SECONDS  no_reverse  reload DURATION
 * fallthrough [ZONES...] }`. A block line that starts with an IP address is an inline entry;
 * any other unknown word is an error (CoreDNS would silently take a typo such as `tll 60`
 * for a hosts line and drop it).
 */
export function parseHosts(d: Directive, blockZones: readonly string[], corefilePath: string): HostsConfig {
  const [file, ...zoneArgs] = d.args;
  const path = file === undefined ? DEFAULT_HOSTS_PATH : isAbsolute(file) ? file : resolve(dirname(corefilePath), file);
  const zones = zoneArgs.length > 0 ? zoneArgs.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  const config: HostsConfig = { path, zones, ttl: DEFAULT_TTL, autoReverse: true, reloadMs: DEFAULT_RELOAD_MS, inline: [] };
  const seen = new Set<string>();
  for (const prop of d.block ?? []) {
    const isOption = ['ttl', 'no_reverse', 'reload', 'fallthrough'].includes(prop.name);
    if (isOption) {
      if (seen.has(prop.name)) throw CorefileError.at(prop, `${prop.name} is given twice in hosts block`);
      seen.add(prop.name);
    }
    switch (prop.name) {
      case 'ttl':
        config.ttl = parseTtl(prop);
        break;
      case 'no_reverse':
        if (prop.args.length > 0) throw CorefileError.at(prop, 'no_reverse takes no arguments');
        config.autoReverse = false;
        break;
      case 'reload':
        config.reloadMs = parseReload(prop);
        break;
      case 'fallthrough':
        config.fallthrough = prop.args.flatMap((z) => normalizeZones(z, prop));
        break;
      default:
        config.inline.push(parseInline(prop));
    }
  }
  return config;
}

function parseInline(prop: Directive) {
  if (prop.block !== undefined) throw CorefileError.at(prop, `unexpected block after "${prop.name}" in hosts block`);
  if (parseHostAddress(prop.name) === undefined) throw CorefileError.at(prop, `unknown property "${prop.name}" in hosts block`);
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
