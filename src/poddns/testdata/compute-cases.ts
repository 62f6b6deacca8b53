// The resolv.conf table: one case per behaviour of the kubelet's pod DNS computation and kdns's
// two policies. compute.test.ts checks computePodDNS against it; the webhook's tests send every
// case through the admission webhook and check the kubelet's `None` rendering of the admitted pod
// against the same computation of the pod as written.
import type { PodSpec } from '../../lib/cluster/types.js';
import type { ResolvConf } from '../resolvconf.js';

export const HOST = 'nameserver 192.168.0.2\nsearch foo.com bar.com\noptions ndots:1 timeout:2\n';
export const CLUSTER_DNS = ['10.96.0.10'];

export interface ComputeCase {
  name: string;
  spec: PodSpec;
  namespace?: string;
  /** Host resolv.conf text; null means `--resolv-conf=""`. Default HOST. */
  host?: string | null;
  clusterDNS?: string[];
  clusterDomain?: string;
  nodeIPs?: string[];
  nodecacheIP?: string;
  want: ResolvConf;
  /** Strings the warnings must contain (each in some warning). */
  warnings?: string[];
  /** How many warnings there are; default: one per string above. */
  warningCount?: number;
}

const CLUSTER_SEARCH = ['ns1.svc.cluster.local', 'svc.cluster.local', 'cluster.local'];
const manyPaths = (n: number, prefix = 'd'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}.example`);
const longPath = (len: number): string => {
  const labels: string[] = [];
  let s = '';
  while (s.length < len) {
    labels.push('a'.repeat(Math.min(50, len - s.length - (s === '' ? 0 : 1))));
    s = labels.join('.');
  }
  return s;
};

export const COMPUTE_CASES: ComputeCase[] = [
  // --- ClusterFirst and its fallbacks
  {
    name: 'ClusterFirst: cluster search paths then the host ones, ndots:5, host options dropped',
    spec: { dnsPolicy: 'ClusterFirst' },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst: every cluster DNS address is a nameserver',
    spec: { dnsPolicy: 'ClusterFirst' },
    clusterDNS: ['10.96.0.10', 'fd00::10'],
    want: { nameservers: ['10.96.0.10', 'fd00::10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst: host search paths already in the cluster list appear once',
    spec: { dnsPolicy: 'ClusterFirst' },
    host: 'nameserver 1.1.1.1\nsearch svc.cluster.local foo.com cluster.local\n',
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst: without a cluster domain only the host search paths',
    spec: { dnsPolicy: 'ClusterFirst' },
    clusterDomain: '',
    want: { nameservers: ['10.96.0.10'], searches: ['foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst: the namespace leads the search list',
    spec: { dnsPolicy: 'ClusterFirst' },
    namespace: 'kube-system',
    clusterDomain: 'k8s.example',
    want: { nameservers: ['10.96.0.10'], searches: ['kube-system.svc.k8s.example', 'svc.k8s.example', 'k8s.example', 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst: without cluster DNS the kubelet falls back to Default and warns',
    spec: { dnsPolicy: 'ClusterFirst' },
    clusterDNS: [],
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:2'] },
    warnings: ['MissingClusterDNS: kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.'],
  },
  {
    name: 'ClusterFirst on the host network falls back to Default (no warning)',
    spec: { dnsPolicy: 'ClusterFirst', hostNetwork: true },
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:2'] },
  },
  {
    name: 'ClusterFirstWithHostNet on the host network gets the cluster DNS',
    spec: { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirstWithHostNet off the host network is ClusterFirst',
    spec: { dnsPolicy: 'ClusterFirstWithHostNet' },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst without a host file: cluster search paths only',
    spec: { dnsPolicy: 'ClusterFirst' },
    host: null,
    want: { nameservers: ['10.96.0.10'], searches: CLUSTER_SEARCH, options: ['ndots:5'] },
  },
  {
    name: 'ClusterFirst without cluster DNS nor host file: loopback and the root search path, with a warning',
    spec: { dnsPolicy: 'ClusterFirst' },
    host: null,
    clusterDNS: [],
    want: { nameservers: ['127.0.0.1'], searches: ['.'], options: [] },
    warnings: ['MissingClusterDNS'],
  },
  {
    name: 'an unknown policy is treated as ClusterFirst (the kubelet does the same)',
    spec: { dnsPolicy: 'Bogus' },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  // --- Default and None
  {
    name: 'Default: the host file as it is, options included',
    spec: { dnsPolicy: 'Default' },
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:2'] },
  },
  {
    name: 'Default: host search paths are not de-duplicated without dnsConfig',
    spec: { dnsPolicy: 'Default' },
    host: 'nameserver 1.1.1.1\nsearch a.com a.com\n',
    want: { nameservers: ['1.1.1.1'], searches: ['a.com', 'a.com'], options: [] },
  },
  {
    name: 'Default without a host file and no node IP: 127.0.0.1 and search .',
    spec: { dnsPolicy: 'Default' },
    host: null,
    want: { nameservers: ['127.0.0.1'], searches: ['.'], options: [] },
  },
  {
    name: 'Default without a host file on an IPv6 node: ::1',
    spec: { dnsPolicy: 'Default' },
    host: null,
    nodeIPs: ['fd00::5'],
    want: { nameservers: ['::1'], searches: ['.'], options: [] },
  },
  {
    name: 'Default without a host file on a dual-stack node: one loopback per node IP',
    spec: { dnsPolicy: 'Default' },
    host: null,
    nodeIPs: ['10.0.0.5', 'fd00::5'],
    want: { nameservers: ['127.0.0.1', '::1'], searches: ['.'], options: [] },
  },
  {
    name: 'Default without a host file plus dnsConfig searches: appended after the root',
    spec: { dnsPolicy: 'Default', dnsConfig: { searches: ['corp.example'] } },
    host: null,
    want: { nameservers: ['127.0.0.1'], searches: ['.', 'corp.example'], options: [] },
  },
  {
    name: 'None without dnsConfig: an empty file',
    spec: { dnsPolicy: 'None' },
    want: { nameservers: [], searches: [], options: [] },
  },
  {
    name: 'None: exactly the dnsConfig',
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }] } },
    want: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:2'] },
  },
  // --- dnsConfig merge
  {
    name: 'dnsConfig nameservers are appended without repeats',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { nameservers: ['10.96.0.10', '8.8.8.8'] } },
    want: { nameservers: ['10.96.0.10', '8.8.8.8'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
  },
  {
    name: 'dnsConfig searches are appended without repeats',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { searches: ['foo.com', 'extra.example'] } },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com', 'extra.example'], options: ['ndots:5'] },
  },
  {
    name: 'dnsConfig ndots overrides ndots:5 where it stands',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'edns0' }, { name: 'ndots', value: '2' }] } },
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:2', 'edns0'] },
  },
  {
    name: 'a dnsConfig option with an empty value is written as its name',
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'single-request', value: '' }] } },
    want: { nameservers: ['1.1.1.1'], searches: [], options: ['single-request'] },
  },
  {
    name: 'repeated dnsConfig options: the last one wins',
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'timeout', value: '1' }, { name: 'timeout', value: '3' }] } },
    want: { nameservers: ['1.1.1.1'], searches: [], options: ['timeout:3'] },
  },
  {
    name: 'Default + dnsConfig: host options merged by name',
    spec: { dnsPolicy: 'Default', dnsConfig: { options: [{ name: 'timeout', value: '5' }, { name: 'rotate' }] } },
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:5', 'rotate'] },
  },
  {
    name: 'dnsConfig search paths keep a trailing dot (only the host file is trimmed)',
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['corp.example.'] } },
    want: { nameservers: ['1.1.1.1'], searches: ['corp.example.'], options: [] },
  },
  {
    name: 'ClusterFirst on the host network + dnsConfig: merged onto the host base',
    spec: { dnsPolicy: 'ClusterFirst', hostNetwork: true, dnsConfig: { searches: ['x.example'] } },
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com', 'x.example'], options: ['ndots:1', 'timeout:2'] },
  },
  // --- limits
  {
    name: 'more than 3 nameservers: cut to 3, the warning names the dropped one',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { nameservers: ['8.8.8.8', '9.9.9.9'] } },
    clusterDNS: ['10.96.0.10', '10.96.0.11'],
    want: { nameservers: ['10.96.0.10', '10.96.0.11', '8.8.8.8'], searches: [...CLUSTER_SEARCH, 'foo.com', 'bar.com'], options: ['ndots:5'] },
    warnings: [
      'DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 10.96.0.11 8.8.8.8 (omitted: 9.9.9.9)',
    ],
  },
  {
    name: 'Default with 4 host nameservers: cut to 3',
    spec: { dnsPolicy: 'Default' },
    host: 'nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\n',
    want: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3'], searches: [], options: [] },
    warnings: ['(omitted: 4.4.4.4)'],
  },
  {
    name: 'more than 32 search paths: cut to 32, the warning names the dropped ones',
    spec: { dnsPolicy: 'ClusterFirst' },
    host: `nameserver 1.1.1.1\nsearch ${manyPaths(31).join(' ')}\n`,
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, ...manyPaths(29)], options: ['ndots:5'] },
    warnings: ['Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ns1.svc.cluster.local', '(omitted: d29.example d30.example)'],
    warningCount: 1,
  },
  {
    name: 'exactly 32 search paths: no warning',
    spec: { dnsPolicy: 'ClusterFirst' },
    host: `nameserver 1.1.1.1\nsearch ${manyPaths(29).join(' ')}\n`,
    want: { nameservers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, ...manyPaths(29)], options: ['ndots:5'] },
  },
  {
    name: 'a search path over 253 characters is dropped, the others kept in order',
    spec: { dnsPolicy: 'Default' },
    host: `nameserver 1.1.1.1\nsearch a.example ${longPath(254)} b.example\n`,
    want: { nameservers: ['1.1.1.1'], searches: ['a.example', 'b.example'], options: [] },
    warnings: ['the applied search line is: a.example b.example (omitted: aaaaaaaaaa'],
  },
  {
    name: 'a search path of exactly 253 characters is kept',
    spec: { dnsPolicy: 'Default' },
    host: `nameserver 1.1.1.1\nsearch ${longPath(253)}\n`,
    want: { nameservers: ['1.1.1.1'], searches: [longPath(253)], options: [] },
  },
  {
    name: 'a search line over 2048 characters loses paths from the end until it fits',
    spec: { dnsPolicy: 'Default' },
    // 9 paths of 250 characters: 9*250+8 = 2258 > 2048; 8 paths: 2007 fits
    host: `nameserver 1.1.1.1\nsearch ${Array.from({ length: 9 }, (_, i) => `${i}${longPath(249)}`).join(' ')}\n`,
    want: { nameservers: ['1.1.1.1'], searches: Array.from({ length: 8 }, (_, i) => `${i}${longPath(249)}`), options: [] },
    warnings: ['Search Line limits were exceeded'],
  },
  {
    name: 'a search line of exactly 2048 characters is kept whole',
    spec: { dnsPolicy: 'Default' },
    // 8 paths of 250 + 1 path of 41 characters, 8 spaces: 2000 + 40 + 8 = 2048
    host: `nameserver 1.1.1.1\nsearch ${[...Array.from({ length: 8 }, (_, i) => `${i}${longPath(249)}`), `x${longPath(39)}`].join(' ')}\n`,
    want: { nameservers: ['1.1.1.1'], searches: [...Array.from({ length: 8 }, (_, i) => `${i}${longPath(249)}`), `x${longPath(39)}`], options: [] },
  },
  {
    name: 'nameserver and search limits both exceeded: two warnings',
    spec: { dnsPolicy: 'Default' },
    host: `nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\nsearch ${manyPaths(33).join(' ')}\n`,
    want: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3'], searches: manyPaths(32), options: [] },
    warnings: ['Nameserver limits were exceeded', '(omitted: d32.example)'],
  },
  // --- Custom
  {
    name: 'Custom: the issue example',
    spec: {
      dnsPolicy: 'Custom',
      dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)', 'my.dns.search.suffix', '$(HOST)'], options: ['ndots:2'] } },
    },
    host: 'nameserver 1.2.3.4\nsearch foo.com bar.com\noptions ndots:1\n',
    want: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local', 'my.dns.search.suffix', 'foo.com', 'bar.com'], options: ['ndots:2'] },
  },
  {
    name: 'Custom: $HOST is another spelling of $(HOST)',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)', '$HOST'] } } },
    want: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local', 'foo.com', 'bar.com'], options: [] },
  },
  {
    name: 'Custom: searchPaths is another name for search',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { searchPaths: ['svc.$(CLUSTER)', '$(CLUSTER)'], options: ['ndots:3'] } } },
    want: { nameservers: ['10.96.0.10'], searches: ['svc.cluster.local', 'cluster.local'], options: ['ndots:3'] },
  },
  {
    name: 'Custom: without $(HOST) the host search paths stay out',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)'] } } },
    want: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local'], options: [] },
  },
  {
    name: 'Custom: substitution is by whole label, in any position',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['team.$(NAMESPACE).internal', '$(CLUSTER)'] } } },
    namespace: 'payments',
    clusterDomain: 'k8s.example',
    want: { nameservers: ['10.96.0.10'], searches: ['team.payments.internal', 'k8s.example'], options: [] },
  },
  {
    name: 'Custom: more than 5 paths after $(HOST) expands: cut to 5, the warning names the dropped ones',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['a.example', 'b.example', 'c.example', '$(HOST)'] } } },
    host: 'nameserver 1.1.1.1\nsearch h1.example h2.example h3.example h4.example\n',
    want: { nameservers: ['10.96.0.10'], searches: ['a.example', 'b.example', 'c.example', 'h1.example', 'h2.example'], options: [] },
    warnings: [
      'DNSConfigForming: Custom search paths exceeded 5, some search paths have been omitted, the applied search line is: a.example b.example c.example h1.example h2.example (omitted: h3.example h4.example)',
    ],
  },
  {
    name: 'Custom: options copied verbatim, host options dropped',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: [], options: ['ndots:1', 'edns0', 'timeout:1'] } } },
    want: { nameservers: ['10.96.0.10'], searches: [], options: ['ndots:1', 'edns0', 'timeout:1'] },
  },
  {
    name: 'Custom: a repeated option is merged by name, the last value where the first stood (as the kubelet merges a None pod\'s options)',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { options: ['ndots:1', 'edns0', 'ndots:2'] } } },
    want: { nameservers: ['10.96.0.10'], searches: [], options: ['ndots:2', 'edns0'] },
  },
  {
    name: 'Custom + dnsConfig: merged afterwards as for ClusterFirst',
    spec: {
      dnsPolicy: 'Custom',
      dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)'], options: ['ndots:2', 'edns0'] } },
      dnsConfig: { nameservers: ['8.8.8.8'], searches: ['ns1.svc.cluster.local', 'x.example'], options: [{ name: 'ndots', value: '1' }] },
    },
    want: { nameservers: ['10.96.0.10', '8.8.8.8'], searches: ['ns1.svc.cluster.local', 'x.example'], options: ['ndots:1', 'edns0'] },
  },
  {
    name: 'Custom: a host path equal to a static entry appears once',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['foo.com', '$(HOST)'] } } },
    want: { nameservers: ['10.96.0.10'], searches: ['foo.com', 'bar.com'], options: [] },
  },
  {
    name: 'Custom: $(HOST) without a host file adds nothing',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)', '$(HOST)'] } } },
    host: null,
    want: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local'], options: [] },
  },
  {
    name: 'Custom: every cluster DNS address is a nameserver',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(CLUSTER)'] } } },
    clusterDNS: ['10.96.0.10', '10.96.0.11'],
    want: { nameservers: ['10.96.0.10', '10.96.0.11'], searches: ['cluster.local'], options: [] },
  },
  {
    name: 'Custom without cluster DNS: falls back to Default with a warning',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(CLUSTER)'] } } },
    clusterDNS: [],
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:2'] },
    warnings: ['cannot create Pod using "Custom" policy'],
  },
  // --- ClusterFirstWithAutopath
  {
    name: 'Autopath: one search path, ndots:5, the node-local cache first and the cluster DNS behind it',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    nodecacheIP: '169.254.20.10',
    want: { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: ['ndots:5'] },
  },
  {
    name: 'Autopath without a node-local cache: the cluster DNS',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    namespace: 'web',
    clusterDomain: 'k8s.example',
    want: { nameservers: ['10.96.0.10'], searches: ['search.web.k8s.example.ap.k8s.io'], options: ['ndots:5'] },
  },
  {
    name: 'Autopath with a cache but no cluster DNS: the cache, no fallback',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    clusterDNS: [],
    nodecacheIP: '169.254.20.10',
    want: { nameservers: ['169.254.20.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: ['ndots:5'] },
  },
  {
    name: 'Autopath + dnsConfig: merged as for ClusterFirst',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath', dnsConfig: { searches: ['corp.example'], options: [{ name: 'ndots', value: '3' }, { name: 'edns0' }] } },
    nodecacheIP: '169.254.20.10',
    want: { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io', 'corp.example'], options: ['ndots:3', 'edns0'] },
  },
  {
    name: 'Autopath with a cache that holds the cluster DNS address (NodeLocal DNSCache): one nameserver',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    nodecacheIP: '10.96.0.10',
    want: { nameservers: ['10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: ['ndots:5'] },
  },
  {
    name: 'Autopath: cache + three cluster DNS addresses are cut to three nameservers, with the kubelet warning',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    nodecacheIP: '169.254.20.10',
    clusterDNS: ['10.96.0.10', '10.96.0.11', '10.96.0.12'],
    want: { nameservers: ['169.254.20.10', '10.96.0.10', '10.96.0.11'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: ['ndots:5'] },
    warnings: ['Nameserver limits were exceeded'],
  },
  {
    name: 'Autopath with neither cache nor cluster DNS: Default with a warning',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    clusterDNS: [],
    want: { nameservers: ['192.168.0.2'], searches: ['foo.com', 'bar.com'], options: ['ndots:1', 'timeout:2'] },
    warnings: ['cannot create Pod using "ClusterFirstWithAutopath" policy'],
  },
  {
    name: 'Autopath on the host network still uses autopath (it is chosen explicitly)',
    spec: { dnsPolicy: 'ClusterFirstWithAutopath', hostNetwork: true },
    want: { nameservers: ['10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: ['ndots:5'] },
  },
];
