// The node-cache binary's own flags (kubernetes-sigs/node-local-dns cmd/node-cache), on top of CoreDNS's. Kept
// apart from node-cache.ts so that main.ts can tell the two binaries' command lines apart
// without loading either mode.
import type { GoFlagSet } from './goflags.js';

export const NODE_CACHE_OWN_FLAGS: GoFlagSet = {
  localip: { kind: 'string', usage: 'comma-separated string of ip addresses to bind dnscache to (IPv4, IPv6 or both)' },
  setupinterface: { kind: 'bool', usage: 'indicates whether network interface should be setup', default: 'true' },
  interfacename: { kind: 'string', usage: 'name of the interface to be created', default: 'nodelocaldns' },
  syncinterval: { kind: 'string', usage: 'interval to check for iptables rules and the interface (seconds, or a Go duration such as 1m)', default: '60' },
  'metrics-listen-address': { kind: 'string', usage: 'address to serve metrics on', default: '0.0.0.0:9353' },
  'prometheus-listen-address': { kind: 'string', usage: 'address to serve Prometheus metrics on (what __PROMETHEUS__ENDPOINT__ in the template becomes)', default: ':9253' },
  setupiptables: { kind: 'bool', usage: 'indicates whether iptables rules should be setup', default: 'true' },
  basecorefile: { kind: 'string', usage: 'Path to the template Corefile for node-cache', default: '/etc/coredns/Corefile.base' },
  corefile: { kind: 'string', usage: 'Path to the Corefile to be used by node-cache (when -conf is not given)', default: '/etc/Corefile' },
  kubednscm: { kind: 'string', usage: 'Path where the kube-dns configmap will be mounted (default /etc/kube-dns when it exists)' },
  upstreamsvc: { kind: 'string', usage: 'Service name whose cluster IP is upstream for node-cache', default: 'kube-dns' },
  'health-port': { kind: 'string', usage: 'port used by health plugin', default: '8080' },
  skipteardown: { kind: 'bool', usage: 'indicates whether iptables rules should be torn down on exit' },
  reloadwithsignal: { kind: 'bool', usage: 'use SIGUSR1 on self to reload CoreDNS (kdns always reloads in process)' },
};

export const NODE_CACHE_ONLY_FLAGS: ReadonlySet<string> = new Set(Object.keys(NODE_CACHE_OWN_FLAGS));
