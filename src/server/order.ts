// The order plugins run in, whatever order a Corefile lists them in: CoreDNS's plugin.cfg,
// with kdns's own plugins placed where they must act. A directive not in this list is
// unknown; one in it without a folder under src/plugins/ is "not available in kdns".

export const PLUGIN_ORDER: readonly string[] = [
  'root',
  'metadata',
  'geoip',
  'cancel',
  'tls',
  'timeouts',
  'multisocket',
  'reload',
  'nsid',
  'bufsize',
  'bind',
  'debug',
  'trace',
  'ready',
  'health',
  'pprof',
  'prometheus',
  // kdns: counts each query against the client pod's workload; this early it sees every query
  // and the rcode the client finally gets (after cache, autopath and forward).
  'workloads',
  'errors',
  'log',
  'dnstap',
  'local',
  'dns64',
  'acl',
  'any',
  'chaos',
  'loadbalance',
  'tsig',
  'cache',
  'rewrite',
  'header',
  'dnssec',
  'autopath',
  'minimal',
  'template',
  'transfer',
  'hosts',
  'route53',
  'azure',
  'clouddns',
  'k8s_external',
  'kubernetes',
  'file',
  'auto',
  'secondary',
  'etcd',
  'loop',
  // kdns: attaches the pod's search paths (EDNS0) to ap.k8s.io names before they are forwarded.
  'searchpath',
  'forward',
  'grpc',
  'erratic',
  'whoami',
  'on',
  'sign',
  'view',
];

const rank = new Map(PLUGIN_ORDER.map((name, i) => [name, i]));

/** Position of a directive in the chain, or undefined when CoreDNS knows no such plugin. */
export function pluginRank(name: string): number | undefined {
  return rank.get(name);
}
