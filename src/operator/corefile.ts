// The Corefile the operator generates, as data: one server block per forwarding entry in spec
// order, then the default block. Routing a name to the block with the longest matching zone
// (foo.com vs a.foo.com) is the server's job, so the order here only keeps diffs readable.

import { renderCorefile } from '../lib/corefile/index.js';
import type { RenderBlock, RenderDirective } from '../lib/corefile/index.js';
import type { DNSLogLevel, ForwardingPolicy } from '../lib/cluster/dnsresource.js';
import type { DNSSettings, ForwardingEntry, TLSSettings } from './config.js';

export interface CorefilePorts {
  /** Port every server block listens on (the Service maps 53 to it). */
  dns: number;
  health: number;
  ready: number;
  metrics: number;
}

export const DEFAULT_PORTS: CorefilePorts = { dns: 5353, health: 8080, ready: 8181, metrics: 9153 };

/** Where the DaemonSet mounts the caBundle ConfigMaps, one folder each. */
export const CA_BUNDLE_ROOT = '/etc/kdns/ca';

/** Where the DaemonSet mounts a caBundle ConfigMap named `name`. */
export function caBundleDir(name: string, root = CA_BUNDLE_ROOT): string {
  return `${root}/${name}`;
}
export const CA_BUNDLE_KEY = 'ca-bundle.crt';

/** How long health keeps answering after SIGTERM, so the Service drops the pod before it stops. */
export const LAMEDUCK = '20s';
/**
 * The EDNS0 UDP size queries are capped to, OpenShift's since 4.14 (OCPBUGS-15605): 1232 bytes is
 * DNS Flag Day 2020's size, the largest that fits an IPv6 packet at the minimum MTU of 1280, so
 * a reply never needs IP fragmentation yet rarely needs a retry over TCP. The 512 OpenShift used
 * before protected clients that do not speak EDNS0 from the upstreams' larger replies, but such a
 * client's query carries no OPT record, and forward sends the client's query as it came: the
 * upstream answers it within 512 bytes anyway.
 */
export const BUFSIZE = 1232;

export interface CorefileInput {
  settings: DNSSettings;
  clusterDomain: string;
  ports?: CorefilePorts;
  /** Folder holding one folder per caBundle ConfigMap (default CA_BUNDLE_ROOT, where the DaemonSet mounts them). */
  caBundleRoot?: string;
  /** How often `reload` checks the Corefile (Go duration); default: reload's own (30s). */
  reloadInterval?: string;
}

const POLICY_WORD: Record<ForwardingPolicy, string> = { Random: 'random', RoundRobin: 'round_robin', Sequential: 'sequential' };

/** Which responses `log` records: Normal logs errors, Debug adds denials, Trace logs everything. */
const LOG_CLASSES: Record<DNSLogLevel, string[]> = { Normal: ['error'], Debug: ['denial', 'error'], Trace: ['all'] };

function d(name: string, args: Array<string | number> = [], block?: RenderDirective[]): RenderDirective {
  return { name, args: args.map(String), ...(block === undefined ? {} : { block }) };
}

/** The Corefile text for a DNS resource's settings. */
export function renderDNSCorefile(input: CorefileInput): string {
  return renderCorefile(corefileBlocks(input));
}

export function corefileBlocks(input: CorefileInput): RenderBlock[] {
  const ports = input.ports ?? DEFAULT_PORTS;
  const { settings } = input;
  const common = { logLevel: settings.logLevel, positiveTTL: settings.positiveTTL, negativeTTL: settings.negativeTTL, metricsPort: ports.metrics };
  const caRoot = input.caBundleRoot ?? CA_BUNDLE_ROOT;
  const blocks = settings.forwarding.map((entry) => forwardingBlock(entry, ports.dns, common, caRoot));
  blocks.push(defaultBlock(input.clusterDomain, ports, settings, caRoot, input.reloadInterval));
  return blocks;
}

interface Common {
  logLevel: DNSLogLevel;
  positiveTTL: number;
  negativeTTL: number;
  metricsPort: number;
}

function forwardingBlock(entry: ForwardingEntry, port: number, c: Common, caRoot: string): RenderBlock {
  return {
    keys: entry.zones.map((z) => `${z}:${port}`),
    directives: [
      d('prometheus', [`:${c.metricsPort}`]),
      forwardDirective(entry.upstreams, entry.policy, entry.forceTcp, caRoot, entry.tls),
      d('errors'),
      logDirective(c.logLevel),
      d('bufsize', [BUFSIZE]),
      cacheDirective(c.positiveTTL, c.negativeTTL),
    ],
  };
}

function defaultBlock(clusterDomain: string, ports: CorefilePorts, s: DNSSettings, caRoot: string, reloadInterval?: string): RenderBlock {
  const f = s.defaultForwarding;
  return {
    keys: [`.:${ports.dns}`],
    directives: [
      d('bufsize', [BUFSIZE]),
      d('errors'),
      logDirective(s.logLevel),
      d('health', [`:${ports.health}`], [d('lameduck', [LAMEDUCK])]),
      d('ready', [`:${ports.ready}`]),
      d('kubernetes', [clusterDomain, 'in-addr.arpa', 'ip6.arpa'], [d('pods', ['insecure']), d('fallthrough', ['in-addr.arpa', 'ip6.arpa'])]),
      d('prometheus', [`:${ports.metrics}`]),
      forwardDirective(f.upstreams, f.policy, f.forceTcp, caRoot, f.tls),
      cacheDirective(s.positiveTTL, s.negativeTTL),
      d('reload', reloadInterval === undefined ? [] : [reloadInterval]),
    ],
  };
}

function forwardDirective(upstreams: string[], policy: ForwardingPolicy, forceTcp: boolean, caRoot: string, tls?: TLSSettings): RenderDirective {
  const to = tls ? upstreams.map((u) => `tls://${u}`) : upstreams;
  const options: RenderDirective[] = [];
  if (forceTcp) options.push(d('force_tcp'));
  if (tls) {
    options.push(d('tls_servername', [tls.serverName]));
    if (tls.caBundle !== undefined) options.push(d('tls', [`${caBundleDir(tls.caBundle, caRoot)}/${CA_BUNDLE_KEY}`]));
  }
  // Inside the block: the proposal's example put `policy` after the block, which CoreDNS rejects.
  options.push(d('policy', [POLICY_WORD[policy]]));
  return d('forward', ['.', ...to], options);
}

function logDirective(level: DNSLogLevel): RenderDirective {
  return d('log', ['.'], [d('class', LOG_CLASSES[level])]);
}

function cacheDirective(positiveTTL: number, negativeTTL: number): RenderDirective {
  return d('cache', [positiveTTL], [d('denial', [9984, negativeTTL])]);
}

