// NodeLocal DNSCache's Corefile template (the `node-local-dns` ConfigMap, mounted as
// Corefile.base) turned into the Corefile that runs, as the node-cache binary does it at start
// and again whenever the ConfigMap changes:
//   __PILLAR__CLUSTER__DNS__      the upstream Service's ClusterIP (from <SVC>_SERVICE_HOST)
//   __PILLAR__UPSTREAM__SERVERS__ the kube-dns ConfigMap's upstreamNameservers, else /etc/resolv.conf
//   __PILLAR__LOCAL__DNS__        the -localip addresses
//   __PILLAR__DNS__SERVER__       removed (the kube-dns IP is already among -localip)
//   __PROMETHEUS__ENDPOINT__      -prometheus-listen-address (default :9253), for `prometheus`
// plus a block per stubDomains entry of the kube-dns ConfigMap. Pure: text in, text out.
// (__PILLAR__DNS__DOMAIN__ and the like are the install instructions' sed, before kubectl
// apply: node-cache never sees them.)
import { parseUpstream } from '../plugins/pkg/upstreams.js';
import { readable } from './flags.js';

export { serviceHostEnv } from './flags.js';

export const PILLAR_CLUSTER_DNS = '__PILLAR__CLUSTER__DNS__';
export const PILLAR_UPSTREAM_SERVERS = '__PILLAR__UPSTREAM__SERVERS__';
export const PILLAR_LOCAL_DNS = '__PILLAR__LOCAL__DNS__';
export const PILLAR_DNS_SERVER = '__PILLAR__DNS__SERVER__';
export const PILLAR_PROMETHEUS_ENDPOINT = '__PROMETHEUS__ENDPOINT__';

/** What node-cache reads from the kube-dns ConfigMap (mounted at /etc/kube-dns). */
export interface KubeDnsConfig {
  stubDomains: Record<string, string[]>;
  upstreamNameservers: string[];
}

export const EMPTY_KUBE_DNS_CONFIG: KubeDnsConfig = { stubDomains: {}, upstreamNameservers: [] };

export interface PillarValues {
  localIPs: readonly string[];
  port: number;
  /** The upstream Service's ClusterIP; undefined when its environment variable is unset. */
  clusterDNS: string | undefined;
  kubeDns: KubeDnsConfig;
  /** What __PROMETHEUS__ENDPOINT__ becomes: -prometheus-listen-address. */
  prometheusEndpoint: string;
}

/** A template that cannot be rendered, or a kube-dns ConfigMap that is not valid. */
export class PillarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PillarError';
  }
}

/** The forward block the stock template sends `.` over TCP with; custom upstreams get UDP (as node-cache). */
const TCP_UPSTREAM_FORWARD = new RegExp(`forward \\. ${PILLAR_UPSTREAM_SERVERS}\\s*\\{\\s*force_tcp\\s*\\}`, 'g');

function stubBlock(domain: string, servers: readonly string[], v: PillarValues): string {
  return `\n${domain}:${v.port} {\n    errors\n    cache 30\n    bind ${v.localIPs.join(' ')}\n    forward . ${servers.join(' ')}\n}\n`;
}

export function renderTemplate(template: string, v: PillarValues): string {
  let text = template;
  if (text.includes(PILLAR_CLUSTER_DNS)) {
    if (v.clusterDNS === undefined) throw new PillarError(`${PILLAR_CLUSTER_DNS} is used but the upstream Service's IP is unknown`);
    text = text.split(PILLAR_CLUSTER_DNS).join(v.clusterDNS);
  }
  const custom = v.kubeDns.upstreamNameservers;
  if (custom.length > 0) text = text.replace(TCP_UPSTREAM_FORWARD, `forward . ${PILLAR_UPSTREAM_SERVERS}`);
  text = text.split(PILLAR_UPSTREAM_SERVERS).join(custom.length > 0 ? custom.join(' ') : '/etc/resolv.conf');
  text = text.split(PILLAR_LOCAL_DNS).join(v.localIPs.join(' '));
  text = text.split(PILLAR_DNS_SERVER).join('');
  text = text.split(PILLAR_PROMETHEUS_ENDPOINT).join(v.prometheusEndpoint);
  const stubs = Object.keys(v.kubeDns.stubDomains).sort();
  return text + stubs.map((d) => stubBlock(d, v.kubeDns.stubDomains[d] ?? [], v)).join('');
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkNameservers(what: string, servers: unknown): string[] {
  if (!Array.isArray(servers) || servers.some((s) => typeof s !== 'string')) throw new PillarError(`${what}: must be a list of strings`);
  for (const s of servers as string[]) {
    // A path is a resolv.conf, as for forward: it must be there (node-cache checks the same).
    const parsed = parseUpstream(s, readable);
    if (typeof parsed === 'string') throw new PillarError(`${what}: "${s}": ${parsed}`);
  }
  return servers as string[];
}

/**
 * The kube-dns ConfigMap's files (name → content) as node-cache reads them: `stubDomains` (a
 * JSON object of domain → nameservers) and `upstreamNameservers` (a JSON list). Other keys
 * (`federations`) mean nothing to a node cache and are ignored.
 */
export function parseKubeDnsConfig(files: ReadonlyMap<string, string>): KubeDnsConfig {
  const out: KubeDnsConfig = { stubDomains: {}, upstreamNameservers: [] };
  const stub = jsonKey(files, 'stubDomains');
  if (stub !== undefined) {
    if (stub === null || typeof stub !== 'object' || Array.isArray(stub)) throw new PillarError('stubDomains: must be a JSON object of domain → nameservers');
    for (const [domain, servers] of Object.entries(stub as Record<string, unknown>)) {
      if (!DNS1123_SUBDOMAIN.test(domain)) throw new PillarError(`stubDomains: invalid domain name: "${domain}"`);
      out.stubDomains[domain] = checkNameservers(`stubDomains["${domain}"]`, servers);
    }
  }
  const up = jsonKey(files, 'upstreamNameservers');
  if (up !== undefined) out.upstreamNameservers = checkNameservers('upstreamNameservers', up);
  return out;
}

/** A key's JSON value; undefined when the key is absent or blank. */
function jsonKey(files: ReadonlyMap<string, string>, key: string): unknown {
  const text = files.get(key);
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new PillarError(`${key}: ${(e as Error).message}`);
  }
}
