// The order plugins run in, whatever order a Corefile lists them in: CoreDNS's plugin.cfg as of
// CoreDNS 1.14.7, with kdns's own plugins placed where they must act. A directive not in this
// list is unknown; one in it without an entry in src/plugins/registry.ts is "not available in
// kdns" (./obsolete.ts says what CoreDNS does with it).
//
// Access control depends on this order (see src/plugins/acl/README.md):
//  - rewrite and autopath run before acl, so acl judges the names they look up, not only the
//    name the client asked (which the chain also judges before they run, see config.ts);
//  - cache runs after acl, so an answer stored for one client is never handed to a client
//    that acl refuses.

export const PLUGIN_ORDER: readonly string[] = [
  'root',
  'metadata',
  'geoip',
  'cancel',
  'proxyproto',
  'quic',
  'grpc_server',
  'https',
  'https3',
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
  'shed',
  'prometheus',
  // kdns: counts each query against the client pod's workload; this early it sees every query
  // and the rcode the client finally gets (after autopath, acl, cache and forward).
  'workloads',
  'errors',
  'log',
  'dnstap',
  'local',
  'dns64',
  'any',
  'chaos',
  'loadbalance',
  'tsig',
  'rewrite',
  'autopath',
  'acl',
  'cache',
  'header',
  'dnssec',
  'tls',
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
  'nomad',
];

const rank = new Map(PLUGIN_ORDER.map((name, i) => [name, i]));

/** Position of a directive in the chain, or undefined when CoreDNS knows no such plugin. */
export function pluginRank(name: string): number | undefined {
  return rank.get(name);
}

/**
 * The plugins that run before acl and may put another question in the client's place
 * (rewrite, autopath): from the first of them on, the chain has acl judge the question as the
 * client asked it, so a name acl refuses cannot be asked under a name it allows, or the other
 * way round.
 */
export function changesQuestionBeforeAcl(name: string): boolean {
  const r = rank.get(name);
  return r !== undefined && r >= (rank.get('rewrite') as number) && r < (rank.get('acl') as number);
}
