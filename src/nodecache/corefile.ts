// The node cache's shipped configuration: NodeLocal DNSCache's Corefile (a block per cluster
// zone, the reverse zones and `.`, listening on a link-local address, cluster names forwarded
// to the cluster DNS over TCP on connections that are renewed every 30 s or 50 queries,
// everything cached) plus a block for `ap.k8s.io` whose names get
// the pod's search paths attached (searchpath) on their way to the cluster DNS. Pure: settings
// in, Corefile text out, so the deploy manifest and the tests can hold the exact text.

/** NodeLocal DNSCache's default link-local address. */
export const DEFAULT_LOCAL_IP = '169.254.20.10';
export const DEFAULT_INTERFACE = 'nodelocaldns';
export const DEFAULT_HEALTH_PORT = 8080;
/** NodeLocal DNSCache serves metrics on 9253, next to CoreDNS's 9153 on the same host network. */
export const DEFAULT_METRICS_PORT = 9253;

export interface NodeCacheSettings {
  /** Addresses the cache listens on (NodeLocal: the link-local address, optionally the kube-dns IP too). */
  localIPs: string[];
  port: number;
  /** The cluster DNS, as forward's TO: `IP` or `IP:PORT`. */
  clusterDNS: string;
  clusterDomain: string;
  /** Where names outside the cluster go: forward TO arguments (addresses or a resolv.conf). */
  upstreams: string[];
  /** The node's resolv.conf: its search paths complete each pod's search list. */
  nodeResolvConf: string;
  /** `host:port` of /health (health plugin) and /metrics (prometheus plugin). */
  health: string;
  metrics: string;
  /** The search-path option's EDNS0 code. */
  optionCode: number;
}

/**
 * Lifetime and query cap of the TCP connections to the cluster DNS. The cluster DNS is one
 * Service address whose load balancer spreads connections, not queries: without these a node's
 * misses stay on the replica its connection first reached, also after the cluster DNS scales
 * out. 50 queries and 30 s (each drawn 0–20% lower per connection) spread a busy node's misses
 * over new replicas within a minute or two (docs/notes/2026-11-28-forward-balance.md) for one
 * TCP handshake per 50 misses at most; 30 s bounds it for quiet nodes, and is not below
 * forward's 10 s `expire`, as `max_age` must not be.
 */
export const CLUSTER_DNS_MAX_AGE = '30s';
export const CLUSTER_DNS_MAX_TCP_QUERIES = 50;

function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export function defaultSettings(clusterDNS: string, localIPs: string[] = [DEFAULT_LOCAL_IP]): NodeCacheSettings {
  const first = localIPs[0] ?? DEFAULT_LOCAL_IP;
  return {
    localIPs,
    port: 53,
    clusterDNS,
    clusterDomain: 'cluster.local',
    upstreams: ['/etc/resolv.conf'],
    nodeResolvConf: '/etc/resolv.conf',
    health: hostPort(first, DEFAULT_HEALTH_PORT),
    metrics: hostPort(first, DEFAULT_METRICS_PORT),
    optionCode: 65534,
  };
}

interface BlockSpec {
  zone: string;
  /** NodeLocal keeps positive answers 30 s and denials 5 s for cluster names, 30 s for the rest. */
  cache: 'cluster' | 'plain';
  forwardTo: string[];
  forceTcp: boolean;
  searchpath: boolean;
  health: boolean;
}

function renderBlock(s: NodeCacheSettings, b: BlockSpec): string {
  const lines = [`${b.zone}:${s.port} {`, '    errors'];
  if (b.cache === 'cluster') lines.push('    cache {', '        success 9984 30', '        denial 9984 5', '    }');
  else lines.push('    cache 30');
  lines.push('    loop', `    bind ${s.localIPs.join(' ')}`);
  if (b.searchpath) {
    lines.push(s.optionCode === 65534 ? `    searchpath ${s.nodeResolvConf}` : `    searchpath ${s.nodeResolvConf} {`);
    if (s.optionCode !== 65534) lines.push(`        edns_option ${s.optionCode}`, '    }');
  }
  lines.push(b.forceTcp ? `    forward . ${b.forwardTo.join(' ')} {` : `    forward . ${b.forwardTo.join(' ')}`);
  if (b.forceTcp) lines.push('        force_tcp', `        max_age ${CLUSTER_DNS_MAX_AGE}`, `        maxtcpqueries ${CLUSTER_DNS_MAX_TCP_QUERIES}`, '    }');
  lines.push(`    prometheus ${s.metrics}`);
  if (b.health) lines.push(`    health ${s.health}`);
  lines.push('}');
  return lines.join('\n');
}

/** The Corefile `kdns nodecache` runs unless given its own. */
export function renderNodeCacheCorefile(s: NodeCacheSettings): string {
  const cluster = [s.clusterDNS];
  const blocks: BlockSpec[] = [
    { zone: s.clusterDomain, cache: 'cluster', forwardTo: cluster, forceTcp: true, searchpath: false, health: true },
    { zone: 'in-addr.arpa', cache: 'plain', forwardTo: cluster, forceTcp: true, searchpath: false, health: false },
    { zone: 'ip6.arpa', cache: 'plain', forwardTo: cluster, forceTcp: true, searchpath: false, health: false },
    { zone: 'ap.k8s.io', cache: 'cluster', forwardTo: cluster, forceTcp: true, searchpath: true, health: false },
    { zone: '.', cache: 'plain', forwardTo: s.upstreams, forceTcp: false, searchpath: false, health: false },
  ];
  const header = [
    '# kdns nodecache: NodeLocal DNSCache\'s configuration, plus ap.k8s.io for ClusterFirstWithAutopath pods.',
    '# Cluster names (and ap.k8s.io names, with the pod\'s search paths attached) go to the cluster DNS',
    '# over TCP, on connections renewed often enough to reach every replica; other names to the',
    '# node\'s upstreams. Everything is cached.',
  ];
  return `${header.join('\n')}\n${blocks.map((b) => renderBlock(s, b)).join('\n')}\n`;
}
