// How answers are spelled for a question in mixed case, record type by record type, as CoreDNS
// spells them: records are owned by the question as written; names built in the zone (SRV
// targets and their glue, NS, SOA, ns.dns) carry the question's spelling of the zone; what comes
// from the cluster (Service, namespace and endpoint labels, ExternalName targets) and PTR targets
// keep their own. Each row asks one name in several spellings, in order, against one plugin: the
// first answer is resolved and kept, the later ones are replayed from the kept bytes, so a
// spelling never leaks from one client's answer into another's. Replies are read back from the
// bytes a client gets.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage } from '../../lib/dns/codec.js';
import { rrToString } from '../../lib/dns/rr.js';
import { RRType } from '../../lib/dns/types.js';
import { createLogger } from '../../server/log.js';
import { finalizeReply } from '../../server/finalize.js';
import type { Reply } from '../../server/reply.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { ClusterObject, Endpoint } from '../../lib/cluster/types.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes } from './config.js';
import { KubernetesPlugin } from './handler.js';
import { testRequest } from '../../../test/util/request.js';

const slice = (name: string, service: string, endpoints: Endpoint[], port: number): ClusterObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: service.split('.')[1], labels: { 'kubernetes.io/service-name': service.split('.')[0] } },
  addressType: 'IPv4',
  endpoints,
  ports: [{ name: 'http', port, protocol: 'TCP' }],
});

const objects: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'testns' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc1', namespace: 'testns' }, spec: { clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 80 }] } },
  slice('svc1-a', 'svc1.testns', [{ addresses: ['172.0.0.2'] }], 80),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hdls1', namespace: 'testns' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] } },
  slice('hdls1-a', 'hdls1.testns', [{ addresses: ['172.0.0.3'], hostname: 'web-0' }, { addresses: ['172.0.0.4'] }], 80),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'testns' }, spec: { type: 'ExternalName', externalName: 'svc1.testns.svc.cluster.local' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kube-dns', namespace: 'kube-system' }, spec: { clusterIP: '10.0.0.10', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } },
  slice('kube-dns-a', 'kube-dns.kube-system', [{ addresses: ['172.0.0.53'] }], 53),
];

function plugin(localIP: string): KubernetesPlugin {
  const store = new ClusterStore();
  for (const o of objects) store.upsert(o);
  store.markSynced();
  const d = parseCorefile('cluster.local in-addr.arpa {\nkubernetes {\npods insecure\n}\n}\n', { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
  if (!d) throw new Error('no directive');
  const cfg = parseKubernetes(d, ['cluster.local.', 'in-addr.arpa.'], '/Corefile', '/unused');
  return new KubernetesPlugin(cfg, { store, description: 'test store', start: async () => {}, release: async () => {} }, { log: createLogger(() => {}), localIPs: () => [localIP] });
}

/** The reply as dig-like lines (question first), the SOA serial left out. */
async function ask(p: KubernetesPlugin, name: string, type: number): Promise<string[]> {
  const req = testRequest(name, type);
  const reply = (await p.serve(req, () => undefined)) as Reply;
  const msg = decodeMessage(finalizeReply(req, reply));
  const records = [...msg.answers, ...msg.authority, ...msg.additional].map((r) => rrToString(r).replace(/(hostmaster\.\S+) \d+/, '$1 SERIAL'));
  return [`${msg.rcode} ${msg.questions[0]?.name}`, ...records];
}

interface Row {
  what: string;
  type: number;
  /** This server's own address (NS answers name the Service in front of it, if any). */
  localIP?: string;
  /** Asked in this order; each with the reply it must get. */
  asks: Array<{ name: string; reply: string[] }>;
}

const rows: Row[] = [
  // CoreDNS's TestPreserveCase, then the other spellings of the same names.
  {
    what: 'NXDOMAIN: the SOA in the question’s spelling of the zone',
    type: RRType.A,
    asks: [
      { name: 'not-a-service.testns.svc.ClUsTeR.lOcAl.', reply: ['3 not-a-service.testns.svc.ClUsTeR.lOcAl.', 'ClUsTeR.lOcAl.\t5\tIN\tSOA\tns.dns.ClUsTeR.lOcAl. hostmaster.ClUsTeR.lOcAl. SERIAL 7200 1800 86400 5'] },
      { name: 'not-a-service.testns.svc.cluster.local.', reply: ['3 not-a-service.testns.svc.cluster.local.', 'cluster.local.\t5\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5'] },
      { name: 'NOT-A-SERVICE.TESTNS.SVC.CLUSTER.LOCAL.', reply: ['3 NOT-A-SERVICE.TESTNS.SVC.CLUSTER.LOCAL.', 'CLUSTER.LOCAL.\t5\tIN\tSOA\tns.dns.CLUSTER.LOCAL. hostmaster.CLUSTER.LOCAL. SERIAL 7200 1800 86400 5'] },
    ],
  },
  {
    what: 'A: owned by the question as written',
    type: RRType.A,
    asks: [
      { name: 'SvC1.TeStNs.SvC.cLuStEr.LoCaL.', reply: ['0 SvC1.TeStNs.SvC.cLuStEr.LoCaL.', 'SvC1.TeStNs.SvC.cLuStEr.LoCaL.\t5\tIN\tA\t10.0.0.1'] },
      { name: 'svc1.testns.svc.cluster.local.', reply: ['0 svc1.testns.svc.cluster.local.', 'svc1.testns.svc.cluster.local.\t5\tIN\tA\t10.0.0.1'] },
    ],
  },
  {
    what: 'SRV of a ClusterIP Service: the target and its glue in the question’s spelling of the zone only',
    type: RRType.SRV,
    asks: [
      {
        name: '_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.',
        reply: ['0 _HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.', '_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.\t5\tIN\tSRV\t0 100 80 svc1.testns.svc.cLuStEr.LoCaL.', 'svc1.testns.svc.cLuStEr.LoCaL.\t5\tIN\tA\t10.0.0.1'],
      },
      {
        name: '_http._tcp.svc1.testns.svc.cluster.local.',
        reply: ['0 _http._tcp.svc1.testns.svc.cluster.local.', '_http._tcp.svc1.testns.svc.cluster.local.\t5\tIN\tSRV\t0 100 80 svc1.testns.svc.cluster.local.', 'svc1.testns.svc.cluster.local.\t5\tIN\tA\t10.0.0.1'],
      },
      {
        name: '_http._tcp.SVC1.TESTNS.svc.Cluster.local.',
        reply: ['0 _http._tcp.SVC1.TESTNS.svc.Cluster.local.', '_http._tcp.SVC1.TESTNS.svc.Cluster.local.\t5\tIN\tSRV\t0 100 80 svc1.testns.svc.Cluster.local.', 'svc1.testns.svc.Cluster.local.\t5\tIN\tA\t10.0.0.1'],
      },
    ],
  },
  {
    what: 'SRV of a headless Service: every target and its glue',
    type: RRType.SRV,
    asks: [
      {
        name: 'hdls1.testns.svc.cluster.local.',
        reply: [
          '0 hdls1.testns.svc.cluster.local.',
          'hdls1.testns.svc.cluster.local.\t5\tIN\tSRV\t0 50 80 web-0.hdls1.testns.svc.cluster.local.',
          'hdls1.testns.svc.cluster.local.\t5\tIN\tSRV\t0 50 80 172-0-0-4.hdls1.testns.svc.cluster.local.',
          'web-0.hdls1.testns.svc.cluster.local.\t5\tIN\tA\t172.0.0.3',
          '172-0-0-4.hdls1.testns.svc.cluster.local.\t5\tIN\tA\t172.0.0.4',
        ],
      },
      {
        name: 'HDLS1.TestNS.svc.CLUSTER.local.',
        reply: [
          '0 HDLS1.TestNS.svc.CLUSTER.local.',
          'HDLS1.TestNS.svc.CLUSTER.local.\t5\tIN\tSRV\t0 50 80 web-0.hdls1.testns.svc.CLUSTER.local.',
          'HDLS1.TestNS.svc.CLUSTER.local.\t5\tIN\tSRV\t0 50 80 172-0-0-4.hdls1.testns.svc.CLUSTER.local.',
          'web-0.hdls1.testns.svc.CLUSTER.local.\t5\tIN\tA\t172.0.0.3',
          '172-0-0-4.hdls1.testns.svc.CLUSTER.local.\t5\tIN\tA\t172.0.0.4',
        ],
      },
    ],
  },
  {
    what: 'CNAME of an ExternalName: the target as the Service spells it',
    type: RRType.CNAME,
    asks: [
      { name: 'EXT.TestNS.svc.Cluster.local.', reply: ['0 EXT.TestNS.svc.Cluster.local.', 'EXT.TestNS.svc.Cluster.local.\t5\tIN\tCNAME\tsvc1.testns.svc.cluster.local.'] },
      { name: 'ext.testns.svc.cluster.local.', reply: ['0 ext.testns.svc.cluster.local.', 'ext.testns.svc.cluster.local.\t5\tIN\tCNAME\tsvc1.testns.svc.cluster.local.'] },
    ],
  },
  {
    what: 'A through an ExternalName in the zone: the target’s records owned by the target as spelled',
    type: RRType.A,
    asks: [
      { name: 'ext.TESTNS.SVC.CLUSTER.LOCAL.', reply: ['0 ext.TESTNS.SVC.CLUSTER.LOCAL.', 'ext.TESTNS.SVC.CLUSTER.LOCAL.\t5\tIN\tCNAME\tsvc1.testns.svc.cluster.local.', 'svc1.testns.svc.cluster.local.\t5\tIN\tA\t10.0.0.1'] },
    ],
  },
  {
    what: 'PTR: the target in the first forward zone as configured',
    type: RRType.PTR,
    asks: [
      { name: '1.0.0.10.In-Addr.ARPA.', reply: ['0 1.0.0.10.In-Addr.ARPA.', '1.0.0.10.In-Addr.ARPA.\t5\tIN\tPTR\tsvc1.testns.svc.cluster.local.'] },
      { name: '4.0.0.172.IN-ADDR.ARPA.', reply: ['0 4.0.0.172.IN-ADDR.ARPA.', '4.0.0.172.IN-ADDR.ARPA.\t5\tIN\tPTR\t172-0-0-4.hdls1.testns.svc.cluster.local.'] },
    ],
  },
  {
    what: 'SOA of the apex',
    type: RRType.SOA,
    asks: [
      { name: 'Cluster.local.', reply: ['0 Cluster.local.', 'Cluster.local.\t5\tIN\tSOA\tns.dns.Cluster.local. hostmaster.Cluster.local. SERIAL 7200 1800 86400 5'] },
      { name: 'cluster.LOCAL.', reply: ['0 cluster.LOCAL.', 'cluster.LOCAL.\t5\tIN\tSOA\tns.dns.cluster.LOCAL. hostmaster.cluster.LOCAL. SERIAL 7200 1800 86400 5'] },
    ],
  },
  {
    what: 'NS of the apex with no Service in front: ns.dns in the question’s spelling of the zone',
    type: RRType.NS,
    asks: [{ name: 'Cluster.LOCAL.', reply: ['0 Cluster.LOCAL.', 'Cluster.LOCAL.\t5\tIN\tNS\tns.dns.Cluster.LOCAL.', 'ns.dns.Cluster.LOCAL.\t5\tIN\tA\t127.0.0.1'] }],
  },
  {
    what: 'NS of the apex behind the kube-dns Service: its name with the question’s spelling of the zone',
    type: RRType.NS,
    localIP: '172.0.0.53',
    asks: [{ name: 'CLUSTER.local.', reply: ['0 CLUSTER.local.', 'CLUSTER.local.\t5\tIN\tNS\tkube-dns.kube-system.svc.CLUSTER.local.', 'kube-dns.kube-system.svc.CLUSTER.local.\t5\tIN\tA\t10.0.0.10'] }],
  },
  {
    what: 'A of ns.dns',
    type: RRType.A,
    asks: [{ name: 'NS.DNS.cluster.Local.', reply: ['0 NS.DNS.cluster.Local.', 'NS.DNS.cluster.Local.\t5\tIN\tA\t127.0.0.1'] }],
  },
  {
    what: 'NODATA: the SOA in the question’s spelling of the zone',
    type: RRType.AAAA,
    asks: [
      { name: 'svc1.testns.svc.cluster.local.', reply: ['0 svc1.testns.svc.cluster.local.', 'cluster.local.\t5\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5'] },
      { name: 'Svc1.Testns.Svc.Cluster.Local.', reply: ['0 Svc1.Testns.Svc.Cluster.Local.', 'Cluster.Local.\t5\tIN\tSOA\tns.dns.Cluster.Local. hostmaster.Cluster.Local. SERIAL 7200 1800 86400 5'] },
    ],
  },
  {
    what: 'TXT dns-version',
    type: RRType.TXT,
    asks: [{ name: 'DNS-Version.Cluster.Local.', reply: ['0 DNS-Version.Cluster.Local.', 'DNS-Version.Cluster.Local.\t28800\tIN\tTXT\t"1.1.0"'] }],
  },
  {
    what: 'A of a pod',
    type: RRType.A,
    asks: [{ name: '172-0-0-9.TestNS.POD.cluster.local.', reply: ['0 172-0-0-9.TestNS.POD.cluster.local.', '172-0-0-9.TestNS.POD.cluster.local.\t5\tIN\tA\t172.0.0.9'] }],
  },
];

for (const row of rows) {
  test(`spelling: ${row.what}`, async () => {
    const p = plugin(row.localIP ?? '127.0.0.1');
    for (const a of row.asks) assert.deepEqual(await ask(p, a.name, row.type), a.reply, a.name);
    // And once more in the first spelling, after the others.
    const first = row.asks[0];
    if (first) assert.deepEqual(await ask(p, first.name, row.type), first.reply, `${first.name} again`);
  });
}
