// The node cache's two command lines turned into what runs, each bad flag a FlagError naming
// the flag:
//   - `kdns nodecache`'s own flags → the settings the shipped Corefile is rendered from
//     (settingsFromFlags; the CLI exits 2);
//   - node-cache's flags (NodeLocal DNSCache's binary, `kdns node-cache` / `kdns -localip …`)
//     → the drop-in app's parameters (nodeCacheParams; the CLI exits 1, as node-cache does).
// Both take IPv4 and IPv6 local addresses together (a dual-stack node).
import { isIP, isIPv6 } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseHttpAddress } from '../plugins/pkg/httpaddress.js';
import { parseUpstream } from '../plugins/pkg/upstreams.js';
import { LOCAL_OPTION_CODE_MAX, LOCAL_OPTION_CODE_MIN } from '../plugins/pkg/searchoption.js';
import type { NodeCacheAppParams } from './app.js';
import { defaultSettings, type NodeCacheSettings } from './corefile.js';

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export interface NodecacheFlags {
  conf?: string;
  localIp: string;
  port: string;
  clusterDns?: string;
  clusterDomain: string;
  /** Absent: the node's /etc/resolv.conf. */
  upstream?: string[];
  resolvConf: string;
  health?: string;
  metrics?: string;
  ednsOption: string;
  setupInterface?: boolean;
  interface: string;
  printCorefile?: boolean;
}

function usage(message: string): never {
  throw new FlagError(message);
}

/** A file's text, or undefined when it cannot be read (forward's TO reads resolv.conf files through this). */
export function readable(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function checkForwardTo(flag: string, value: string): void {
  const parsed = parseUpstream(value, readable);
  if (typeof parsed === 'string') usage(`${flag}: "${value}": ${parsed}`);
}

function intFlag(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < min || n > max) usage(`${flag}: "${text}" is not a number from ${min} to ${max}`);
  return n;
}

/**
 * Why a local address cannot be one, or undefined. An IPv6 link-local address (fe80::/10) is
 * refused: a socket binds one only with an interface scope, and pods, being on other links,
 * could not reach it anyway; a dual-stack node's IPv6 local address is a unique local one
 * (fd00::/8), as its IPv4 one is link-local (169.254.0.0/16).
 */
export function localAddressProblem(ip: string): string | undefined {
  if (isIP(ip) === 0) return 'not an IP address';
  if (isIPv6(ip) && /^fe[89ab][0-9a-f]:/i.test(ip)) return 'an IPv6 link-local address (fe80::/10), which a socket binds only with an interface and pods cannot reach; use a unique local address (fd00::/8)';
  return undefined;
}

/** Flags → the settings the shipped Corefile is rendered from; a bad flag is a usage error naming it. */
export function settingsFromFlags(f: NodecacheFlags): NodeCacheSettings {
  const localIPs = f.localIp.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (localIPs.length === 0) usage('--local-ip: at least one address is needed');
  for (const ip of localIPs) {
    const problem = localAddressProblem(ip);
    if (problem !== undefined) usage(`--local-ip: "${ip}" is ${problem}`);
  }
  if (f.clusterDns === undefined || f.clusterDns === '') usage('--cluster-dns is required (the cluster DNS service address, IP or IP:PORT) unless --conf is given');
  checkForwardTo('--cluster-dns', f.clusterDns);
  const upstreams = f.upstream !== undefined && f.upstream.length > 0 ? f.upstream : ['/etc/resolv.conf'];
  for (const u of upstreams) checkForwardTo('--upstream', u);
  const domain = f.clusterDomain.replace(/\.$/, '');
  if (domain === '' || !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(domain)) usage(`--cluster-domain: "${f.clusterDomain}" is not a domain name`);
  const s = defaultSettings(f.clusterDns, localIPs);
  s.port = intFlag('--port', f.port, 1, 65535);
  s.clusterDomain = domain;
  s.upstreams = upstreams;
  s.nodeResolvConf = f.resolvConf;
  if (f.health !== undefined) s.health = f.health;
  if (f.metrics !== undefined) s.metrics = f.metrics;
  s.optionCode = intFlag('--edns-option', f.ednsOption, LOCAL_OPTION_CODE_MIN, LOCAL_OPTION_CODE_MAX);
  return s;
}

/**
 * node-cache's own flags as given, else their defaults (src/cli/dropin-flags.ts holds the
 * names, defaults and usage lines), by their Go names.
 */
export interface NodeCacheFlagValues {
  localip: string;
  upstreamsvc: string;
  basecorefile: string;
  /** CoreDNS's -conf: where the rendered Corefile goes; empty: -corefile. */
  conf: string;
  corefile: string;
  /** Empty: /etc/kube-dns when it exists. */
  kubednscm: string;
  setupinterface: boolean;
  interfacename: string;
  setupiptables: boolean;
  skipteardown: boolean;
  'health-port': string;
  syncinterval: string;
  'metrics-listen-address': string;
  'prometheus-listen-address': string;
  reloadwithsignal: boolean;
}

/** What nodeCacheParams needs besides the flags: the process's environment and the node's files. */
export interface NodeCacheFlagContext {
  /** The DNS port (CoreDNS's -dns.port / -p, checked by the CoreDNS flags). */
  port: number;
  env: Readonly<Record<string, string | undefined>>;
  /** The kube-dns ConfigMap's directory used when -kubednscm is empty (node-cache's: /etc/kube-dns when it exists). */
  defaultKubeDnsDir: string | undefined;
}

/** -syncinterval: node-cache reads a number of seconds; a Go duration (30s, 1m, 1m30s) is taken as written. Zero is refused (a busy loop). */
export function parseSyncInterval(text: string): number | undefined {
  if (/^[0-9]+$/.test(text)) return Number(text) > 0 ? Number(text) * 1000 : undefined;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  let rest = text;
  while (rest !== '') {
    const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/.exec(rest);
    if (!m) return undefined;
    ms += Number(m[1]) * (units[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  return ms > 0 ? ms : undefined;
}

/**
 * -localip: comma-separated addresses, IPv4 and IPv6 in any mix (a dual-stack node holds one
 * of each family, and the kube-dns Service's addresses of both when iptables sends them to the
 * cache). The messages are node-cache's, which name the flag.
 */
export function parseLocalIPs(text: string): string[] {
  const ips = text.split(',').map((s) => s.trim());
  for (const ip of ips) {
    const problem = localAddressProblem(ip);
    if (problem === 'not an IP address') throw new FlagError(`invalid localip specified - "${ip}"`);
    if (problem !== undefined) throw new FlagError(`invalid localip specified - "${ip}": ${problem}`);
  }
  return ips;
}

/** The environment variable Kubernetes sets to a Service's ClusterIP in every pod: kube-dns-upstream → KUBE_DNS_UPSTREAM_SERVICE_HOST. */
export function serviceHostEnv(service: string): string {
  return `${service.replace(/-/g, '_').toUpperCase()}_SERVICE_HOST`;
}

/** A Service's name is a DNS-1035 label; anything else names no Service, so no variable would ever be set. */
const SERVICE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** What the kernel takes as a link name (dev_valid_name): 1-15 bytes, not "." or "..", no "/", ":" or whitespace. */
const INTERFACE_NAME = /^[^/:\s]{1,15}$/;

function listenAddress(flag: string, text: string): string {
  const parsed = parseHttpAddress(text);
  if (typeof parsed === 'string') throw new FlagError(`invalid -${flag} "${text}": ${parsed.replace(/^address \S*: /, '')} (host:port, :port or [IPv6]:port)`);
  return text;
}

/**
 * node-cache's flags → the drop-in app's parameters. A bad value is a FlagError naming the flag;
 * values node-cache takes only to pass on (-reloadwithsignal) are accepted. The upstream
 * Service's address is left undefined when its variable is unset or not an address (node-cache
 * warns and goes on; the template then fails only if it uses __PILLAR__CLUSTER__DNS__).
 */
export function nodeCacheParams(v: NodeCacheFlagValues, ctx: NodeCacheFlagContext): NodeCacheAppParams {
  const localIPs = parseLocalIPs(v.localip);
  const healthPort = v['health-port'];
  if (!/^[0-9]{1,5}$/.test(healthPort) || Number(healthPort) < 1 || Number(healthPort) > 65535) throw new FlagError(`invalid healthcheck port specified - "${healthPort}" (-health-port)`);
  const syncIntervalMs = parseSyncInterval(v.syncinterval);
  if (syncIntervalMs === undefined) throw new FlagError(`invalid -syncinterval "${v.syncinterval}" (seconds, or a duration such as 1m)`);
  if (!SERVICE_NAME.test(v.upstreamsvc)) throw new FlagError(`invalid -upstreamsvc "${v.upstreamsvc}": not a Service name (lowercase letters, digits and "-", starting with a letter, at most 63 characters)`);
  if (!INTERFACE_NAME.test(v.interfacename) || v.interfacename === '.' || v.interfacename === '..') {
    throw new FlagError(`invalid -interfacename "${v.interfacename}": not a network interface name (1-15 characters, no "/", ":" or whitespace)`);
  }
  if (v.basecorefile === '') throw new FlagError('invalid -basecorefile "": the template Corefile\'s path is needed');
  // node-cache writes to CoreDNS's -conf; -corefile only names the file when -conf is absent.
  const corefile = v.conf !== '' ? v.conf : v.corefile;
  if (corefile === '') throw new FlagError('invalid -corefile "": a path to write the Corefile to is needed (or -conf)');
  const clusterIP = ctx.env[serviceHostEnv(v.upstreamsvc)];
  return {
    localIPs,
    port: ctx.port,
    healthPort: Number(healthPort),
    baseCorefile: v.basecorefile,
    corefile,
    kubeDnsDir: v.kubednscm !== '' ? v.kubednscm : ctx.defaultKubeDnsDir,
    clusterDNS: clusterIP !== undefined && isIP(clusterIP) !== 0 ? clusterIP : undefined,
    setupInterface: v.setupinterface,
    interfaceName: v.interfacename,
    setupIptables: v.setupiptables,
    skipTeardown: v.skipteardown,
    syncIntervalMs,
    metricsListen: listenAddress('metrics-listen-address', v['metrics-listen-address']),
    prometheusListen: listenAddress('prometheus-listen-address', v['prometheus-listen-address']),
  };
}

/** Where node-cache looks for the kube-dns ConfigMap when -kubednscm is not given. */
export const DEFAULT_KUBE_DNS_DIR = '/etc/kube-dns';
