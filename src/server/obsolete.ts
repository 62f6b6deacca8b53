// Directives kdns refuses, and why, so that a Corefile written for CoreDNS fails with a line
// that says what the directive does there and what to do in kdns:
//  - directives and plugin options that CoreDNS once had and has since removed: CoreDNS refuses
//    them too ("Unknown directive", "unknown property"); these lines mostly come from Corefiles
//    written for older releases;
//  - directives of CoreDNS's current plugin.cfg (./order.ts) that kdns has no plugin for.

/** Removed directive → why and what to use instead. */
const REMOVED_DIRECTIVES: ReadonlyMap<string, string> = new Map([
  ['proxy', 'proxy was removed in CoreDNS 1.5.0; use forward (e.g. "forward . /etc/resolv.conf")'],
  ['federation', 'federation was removed in CoreDNS 1.6.3 (it became an external plugin kdns does not include); serve the federated names with forward or file'],
  ['reverse', 'reverse was removed in CoreDNS 1.1.4; use template to synthesize PTR answers'],
]);

/** `plugin → option → advice` for options a plugin's block no longer takes. */
const REMOVED_OPTIONS: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  [
    'kubernetes',
    new Map([
      ['upstream', 'upstream was removed from kubernetes in CoreDNS 1.7.0; delete the line (external names are resolved through the server itself)'],
      ['resyncperiod', 'resyncperiod was removed from kubernetes in CoreDNS 1.7.0; delete the line'],
    ]),
  ],
]);

/** Advice for a directive CoreDNS removed, or undefined when `name` is not one. */
export function removedDirective(name: string): string | undefined {
  return REMOVED_DIRECTIVES.get(name);
}

/** Advice for an option `plugin` no longer takes, or undefined. */
export function removedOption(plugin: string, option: string): string | undefined {
  return REMOVED_OPTIONS.get(plugin)?.get(option);
}

/**
 * Directives of CoreDNS's plugin.cfg that kdns has no plugin for → what they do in CoreDNS, and
 * what to do instead when kdns has an answer. Every name here is in PLUGIN_ORDER.
 */
const UNAVAILABLE_DIRECTIVES: ReadonlyMap<string, { does: string; instead?: string }> = new Map([
  ['geoip', { does: "adds the client's location, looked up in a MaxMind database, to the request metadata" }],
  ['proxyproto', { does: "takes the client's address from the PROXY protocol header a load balancer sends ahead of each query", instead: 'turn the PROXY protocol off on the load balancer (kdns would read the header as a malformed query)' }],
  ['quic', { does: 'sets the stream limits of a quic:// (DNS over QUIC) server block', instead: 'kdns serves no quic://: serve DNS over TLS (tls://) or over HTTPS (https://)' }],
  ['grpc_server', { does: 'sets the stream and connection limits of a grpc:// (DNS over gRPC) server block', instead: 'kdns serves no grpc://: serve DNS over TLS (tls://) or over HTTPS (https://)' }],
  ['https', { does: 'sets the connection limit of an https:// (DNS over HTTPS) server block', instead: "kdns's https:// listeners have fixed limits (1000 connections, idle ones closed after 10 s): remove the line" }],
  ['https3', { does: 'sets the stream and connection limits of an https3:// (DNS over HTTP/3) server block', instead: 'kdns serves no https3://: serve DNS over HTTPS (https://)' }],
  ['trace', { does: 'sends a trace of each query to Zipkin or Datadog' }],
  ['shed', { does: "drops UDP queries while a listener's replies back up faster than its socket can send them", instead: "kdns sends each socket's replies from one thread and leaves the excess to the kernel's socket buffer: remove the line" }],
  ['tsig', { does: 'checks and signs TSIG-authenticated queries and zone transfers' }],
  ['dnssec', { does: 'signs answers with DNSSEC as they are made' }],
  ['route53', { does: 'serves zones held in AWS Route 53' }],
  ['azure', { does: 'serves zones held in Azure DNS' }],
  ['clouddns', { does: 'serves zones held in Google Cloud DNS' }],
  ['secondary', { does: 'serves a zone it transfers (AXFR) from a primary server' }],
  ['grpc', { does: 'forwards queries to upstreams over gRPC', instead: 'forward over DNS or DNS over TLS with forward' }],
  ['erratic', { does: 'answers with fixed records, delayed, dropped or truncated on purpose, to test clients' }],
  ['on', { does: 'runs a command when the server starts up, restarts or shuts down' }],
  ['sign', { does: 'signs zone files with DNSSEC for file and auto to serve' }],
  ['nomad', { does: "serves HashiCorp Nomad's service catalogue as SERVICE.NAMESPACE.service.nomad" }],
]);

/** Why a directive CoreDNS has cannot be used in kdns: what it does there, and what to do instead. */
export function unavailableDirective(name: string): string {
  const known = UNAVAILABLE_DIRECTIVES.get(name);
  const head = `plugin "${name}" is not available in kdns`;
  if (!known) return head;
  return `${head}: in CoreDNS it ${known.does}${known.instead ? `; ${known.instead}` : ''}`;
}
