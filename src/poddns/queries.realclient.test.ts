// The query model against the real thing: for each case kdns computes the pod's resolv.conf,
// the model predicts the queries, and real glibc and musl (test/util/realclient, in a network
// namespace, answered by its recorder) send theirs. The lists must be equal.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSpec } from '../lib/cluster/types.js';
import { loadRealClient, type ClientResult } from '../../test/util/realclient.js';
import { computePodDNS } from './compute.js';
import type { NodeDNSSettings } from './compute.js';
import { zoneMapOracle } from './oracle.js';
import type { ZoneMap } from './oracle.js';
import { LIBCS, predictLookup } from './queries.js';
import type { Family, Prediction } from './queries.js';
import { parseHostResolvConf, renderResolvConf } from './resolvconf.js';

const loaded = await loadRealClient();

const HOST = 'nameserver 192.168.0.2\nsearch corp.example\noptions ndots:1\n';

/** Names the recorder knows; everything else is NXDOMAIN. */
const ZONE: ZoneMap = {
  'api.ns1.svc.cluster.local': { A: ['10.96.5.5'] },
  'kubernetes.default.svc.cluster.local': { A: ['10.96.0.1'] },
  'api.example.com': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
  // exists in the pod's own namespace but has no address; a real address one level up
  'db.ns1.svc.cluster.local': {},
  'db.cluster.local': { A: ['10.96.7.7'] },
  // what an autopath server answers for a short name
  'api.search.ns1.cluster.local.ap.k8s.io': { A: ['10.96.5.5'] },
  'printer.corp.example': { A: ['192.0.2.99'] },
};

interface Case {
  name: string;
  /** The pod whose resolv.conf kdns computes… */
  spec?: PodSpec;
  /** …or a resolv.conf written out, for the libraries' parsing quirks. */
  resolvConf?: string;
  lookup: string;
  node?: Partial<NodeDNSSettings>;
  family?: Family;
}

const cases: Case[] = [
  { name: 'a short service name (ClusterFirst, ndots:5)', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'api' },
  { name: 'svc.ns, found in the second search domain', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'kubernetes.default' },
  { name: 'an external name with 2 dots walks the whole search list first', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'api.example.com' },
  { name: 'a trailing-dot name is asked once', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'api.example.com.' },
  { name: 'a name nobody knows', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'nothing.here' },
  { name: 'a host search domain answers', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'printer' },
  {
    name: 'ndots:1, external name: as is first',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'ndots', value: '1' }] } },
    lookup: 'api.example.com',
  },
  {
    name: 'ndots:1, svc.ns: glibc falls back to the search list, musl does not',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'ndots', value: '1' }] } },
    lookup: 'kubernetes.default',
  },
  {
    name: 'ndots:2, svc.ns: search list first',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'ndots', value: '2' }] } },
    lookup: 'kubernetes.default',
  },
  {
    name: 'ndots:2, external name with 2 dots: as is first',
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'ndots', value: '2' }] } },
    lookup: 'api.example.com',
  },
  { name: '3 nameservers: glibc asks the first, musl all three', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'kubernetes.default', node: { clusterDNS: ['10.96.0.10', '10.96.0.11', '10.96.0.12'] } },
  { name: '3 nameservers, name not found', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'nothing', node: { clusterDNS: ['10.96.0.10', '10.96.0.11', '10.96.0.12'] } },
  { name: 'NODATA in a search domain: musl stops, glibc goes on', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'db' },
  { name: 'AF_INET asks A only', spec: { dnsPolicy: 'ClusterFirst' }, lookup: 'api.example.com', family: 'inet' },
  {
    name: 'Custom policy (the issue example, ndots:2)',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)', 'my.dns.search.suffix', '$(HOST)'], options: ['ndots:2'] } } },
    lookup: 'kubernetes.default',
  },
  { name: 'ClusterFirstWithAutopath: one query pair', spec: { dnsPolicy: 'ClusterFirstWithAutopath' }, lookup: 'api', node: { nodecacheIP: '169.254.20.10' } },
  {
    name: 'no host file (search .): glibc asks the name once, musl 1.2.3 sends an unparseable query and times out',
    spec: { dnsPolicy: 'Default', dnsConfig: { options: [{ name: 'timeout', value: '1' }, { name: 'attempts', value: '1' }] } },
    lookup: 'api',
    node: { host: null },
  },
  // How each library reads the file, checked with files written by hand.
  {
    name: 'musl skips a search line of 255+ characters; glibc uses it',
    resolvConf: `search ${Array.from({ length: 10 }, (_, i) => `d${i}.a-long-search-domain.example`).join(' ')}\nnameserver 10.96.0.10\noptions ndots:5\n`,
    lookup: 'api',
  },
  { name: 'options no-aaaa: glibc asks A only, musl ignores it', resolvConf: 'nameserver 10.96.0.10\noptions no-aaaa\n', lookup: 'api.example.com' },
  {
    name: 'options no-tld-query: glibc does not ask a searched single label as is',
    resolvConf: 'search ns1.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5 no-tld-query\n',
    lookup: 'nothing',
  },
  { name: 'ndots:0: a single label is asked as is first', resolvConf: 'search ns1.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:0\n', lookup: 'api' },
  { name: 'a repeated search domain is asked twice', resolvConf: 'search corp.example corp.example\nnameserver 10.96.0.10\n', lookup: 'nothing' },
  { name: 'a search domain with a trailing dot', resolvConf: 'search corp.example.\nnameserver 10.96.0.10\n', lookup: 'printer' },
  { name: 'the root on the search list: glibc asks a dotted name twice, musl once', resolvConf: 'search . corp.example\nnameserver 10.96.0.10\n', lookup: 'a.b' },
  { name: 'localhost is answered from /etc/hosts', resolvConf: 'search ns1.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n', lookup: 'localhost' },
  { name: 'an address literal sends nothing', resolvConf: 'search ns1.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n', lookup: '10.1.2.3' },
];

function resolvConfFor(c: Case): string {
  if (c.resolvConf !== undefined) return c.resolvConf;
  const node: NodeDNSSettings = {
    host: parseHostResolvConf(HOST).config,
    clusterDNS: ['10.96.0.10'],
    clusterDomain: 'cluster.local',
    nodeIPs: [],
    ...c.node,
  };
  return renderResolvConf(computePodDNS({ spec: c.spec ?? {}, namespace: 'ns1' }, node).config);
}

/** A malformed query has no question the relay could read. */
function predictedList(p: Prediction): string[] {
  return p.queries.map((q) => (q.malformed ? `- - ${q.server}` : `${q.qname} ${q.qtype} ${q.server}`));
}

function sentList(r: ClientResult): string[] {
  return r.queries.map((q) => `${q.qname ?? '-'} ${q.qtype ?? '-'} ${q.server}`);
}

/**
 * Each name's copies, names in order of first appearance. musl sends every query to every
 * server at once and moves on at the first answer, so a slow copy of one name can arrive after
 * the next name's first: across servers only the set per name and the order of names are defined.
 */
function groupedByName(list: string[]): string[] {
  const byName = new Map<string, string[]>();
  for (const entry of list) {
    const name = entry.split(' ')[0]!;
    byName.set(name, [...(byName.get(name) ?? []), entry]);
  }
  return [...byName.values()].map((entries) => entries.sort().join(' | '));
}

describe('the query model matches real glibc and musl', { skip: loaded.skip, concurrency: 3 }, () => {
  for (const c of cases) {
    for (const libc of LIBCS) {
      it(`${libc}: ${c.name}`, async () => {
        const { harness } = loaded;
        assert.ok(harness, `realclient unavailable: ${loaded.reason}`);
        const resolvConf = resolvConfFor(c);
        const prediction = predictLookup(resolvConf, c.lookup, libc, zoneMapOracle(ZONE), c.family ? { family: c.family } : {});
        const rec = await harness.startRecorder({ zone: ZONE });
        let r: ClientResult;
        try {
          r = await harness.runClient({ resolvConf, name: c.lookup, libc, server: rec.server, ...(c.family ? { family: c.family } : {}) });
        } finally {
          await rec.close();
        }
        const context = `resolv.conf:\n${resolvConf}stderr: ${r.stderr}`;
        const want = predictedList(prediction);
        const got = sentList(r);
        if (prediction.view.nameservers.length === 1 || libc === 'glibc') assert.deepEqual(got, want, context);
        else assert.deepEqual(groupedByName(got), groupedByName(want), context);
        assert.equal(r.status === 0, prediction.result === 'resolved' || prediction.result === 'local', `status ${r.status} (${r.eai ?? ''}) vs model ${prediction.result}\n${context}`);
        if (prediction.result === 'timeout') assert.equal(r.eai, 'EAI_AGAIN');
        if (prediction.result === 'resolved' || prediction.result === 'local') assert.ok(r.addresses.length > 0);
      });
    }
  }
});
