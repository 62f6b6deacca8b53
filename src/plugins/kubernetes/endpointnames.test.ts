// The names of endpoints without a hostname: the dashed IP, one label that begins and ends with
// a letter or digit. CoreDNS's table (hostname, pod name, IPv4, full and `::`-ending IPv6) plus
// the edges (`::` at the start, `::` alone, IPv4-mapped), then the same names through the
// handler: A/AAAA of the endpoint name, SRV targets and their glue, PTR, each as sent on the wire.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage } from '../../lib/dns/codec.js';
import { rrToString } from '../../lib/dns/rr.js';
import { RRType } from '../../lib/dns/types.js';
import { createLogger } from '../../server/log.js';
import { finalizeReply } from '../../server/finalize.js';
import type { Reply } from '../../server/reply.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { EndpointAddressInfo } from '../../lib/cluster/records.js';
import type { ClusterObject } from '../../lib/cluster/types.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes } from './config.js';
import { KubernetesPlugin } from './handler.js';
import { dashedIP, endpointHostname } from './resolve.js';
import { testRequest } from '../../../test/util/request.js';

const labelRows: Array<{ ip: string; hostname: string; pod: string; podNames: boolean; want: string }> = [
  // CoreDNS's TestEndpointHostname rows.
  { ip: '10.11.12.13', hostname: '', pod: '', podNames: false, want: '10-11-12-13' },
  { ip: '10.11.12.13', hostname: 'epname', pod: '', podNames: false, want: 'epname' },
  { ip: '10.11.12.13', hostname: '', pod: 'hello-abcde', podNames: false, want: '10-11-12-13' },
  { ip: '10.11.12.13', hostname: 'epname', pod: 'hello-abcde', podNames: false, want: 'epname' },
  { ip: '10.11.12.13', hostname: 'epname', pod: 'hello-abcde', podNames: true, want: 'epname' },
  { ip: '10.11.12.13', hostname: '', pod: 'hello-abcde', podNames: true, want: 'hello-abcde' },
  { ip: '2001:db8:3333:4444:5555:6666:7777:8888', hostname: '', pod: '', podNames: false, want: '2001-db8-3333-4444-5555-6666-7777-8888' },
  { ip: '2001:db8:3333:4444:5555:6666::', hostname: '', pod: '', podNames: false, want: '2001-db8-3333-4444-5555-6666--0' },
  // The edges.
  { ip: '2001:db8::', hostname: '', pod: '', podNames: false, want: '2001-db8--0' },
  { ip: 'fd00:10:244::5', hostname: '', pod: '', podNames: false, want: 'fd00-10-244--5' },
  { ip: '::5', hostname: '', pod: '', podNames: false, want: '0--5' },
  { ip: '::', hostname: '', pod: '', podNames: false, want: '0--0' },
  { ip: '::ffff:10.1.2.3', hostname: '', pod: '', podNames: false, want: '0--ffff-10-1-2-3' },
  { ip: '2001:db8::', hostname: 'web-0', pod: '', podNames: false, want: 'web-0' },
  { ip: '2001:db8::', hostname: '', pod: 'web-7d9f-abc', podNames: true, want: 'web-7d9f-abc' },
];

for (const row of labelRows) {
  test(`endpoint name: ${row.ip} hostname=${JSON.stringify(row.hostname)} pod=${JSON.stringify(row.pod)}${row.podNames ? ' endpoint_pod_names' : ''} → ${row.want}`, () => {
    const addr: EndpointAddressInfo = { ip: row.ip, hostname: row.hostname, targetRefName: row.pod, nodeName: '', ready: true };
    assert.equal(endpointHostname(addr, row.podNames), row.want);
  });
}

test('dashedIP: every label it makes begins and ends with a letter or digit', () => {
  const samples = ['::', '::1', '1::', '1::1', 'fe80::', '::ffff:1.2.3.4', '10.0.0.1', 'fd00:0:0:0:0:0:0:0'];
  const bad = samples.filter((ip) => !/^[0-9a-z](?:[0-9a-z-]*[0-9a-z])?$/.test(dashedIP(ip)));
  assert.deepEqual(bad, []);
});

// ---- through the handler -------------------------------------------------------------------

const objects: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'edge6', namespace: 'demo' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'edge6-1', namespace: 'demo', labels: { 'kubernetes.io/service-name': 'edge6' } },
    addressType: 'IPv6',
    endpoints: [{ addresses: ['2001:db8::'] }, { addresses: ['::5'] }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  },
];

function plugin(): KubernetesPlugin {
  const store = new ClusterStore();
  for (const o of objects) store.upsert(o);
  store.markSynced();
  const d = parseCorefile('cluster.local ip6.arpa {\nkubernetes\n}\n', { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
  if (!d) throw new Error('no directive');
  const cfg = parseKubernetes(d, ['cluster.local.', 'ip6.arpa.'], '/Corefile', '/unused');
  return new KubernetesPlugin(cfg, { store, description: 'test store', start: async () => {}, release: async () => {} }, { log: createLogger(() => {}), localIPs: () => ['127.0.0.1'] });
}

async function ask(p: KubernetesPlugin, name: string, type: number): Promise<{ rcode: number; records: string[] }> {
  const req = testRequest(name, type);
  const reply = (await p.serve(req, () => undefined)) as Reply;
  const msg = decodeMessage(finalizeReply(req, reply));
  return { rcode: msg.rcode, records: [...msg.answers, ...msg.additional].map(rrToString) };
}

const REV_2001_DB8 = '0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.';
const REV_5 = '5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.';

const wireRows: Array<{ name: string; type: number; rcode: number; records: string[] }> = [
  { name: '2001-db8--0.edge6.demo.svc.cluster.local.', type: RRType.AAAA, rcode: 0, records: ['2001-db8--0.edge6.demo.svc.cluster.local.\t5\tIN\tAAAA\t2001:db8::'] },
  { name: '0--5.edge6.demo.svc.cluster.local.', type: RRType.AAAA, rcode: 0, records: ['0--5.edge6.demo.svc.cluster.local.\t5\tIN\tAAAA\t::5'] },
  // The hyphen-ended form is no name of the endpoint.
  { name: '2001-db8--.edge6.demo.svc.cluster.local.', type: RRType.AAAA, rcode: 3, records: [] },
  {
    name: '_http._tcp.edge6.demo.svc.cluster.local.',
    type: RRType.SRV,
    rcode: 0,
    records: [
      '_http._tcp.edge6.demo.svc.cluster.local.\t5\tIN\tSRV\t0 50 80 2001-db8--0.edge6.demo.svc.cluster.local.',
      '_http._tcp.edge6.demo.svc.cluster.local.\t5\tIN\tSRV\t0 50 80 0--5.edge6.demo.svc.cluster.local.',
      '2001-db8--0.edge6.demo.svc.cluster.local.\t5\tIN\tAAAA\t2001:db8::',
      '0--5.edge6.demo.svc.cluster.local.\t5\tIN\tAAAA\t::5',
    ],
  },
  { name: REV_2001_DB8, type: RRType.PTR, rcode: 0, records: [`${REV_2001_DB8}\t5\tIN\tPTR\t2001-db8--0.edge6.demo.svc.cluster.local.`] },
  { name: REV_5, type: RRType.PTR, rcode: 0, records: [`${REV_5}\t5\tIN\tPTR\t0--5.edge6.demo.svc.cluster.local.`] },
];

for (const row of wireRows) {
  test(`endpoint name on the wire: ${row.name} ${row.type}`, async () => {
    const p = plugin();
    // Twice: the first answer is resolved, the second replayed from the kept bytes.
    for (let i = 0; i < 2; i++) assert.deepEqual(await ask(p, row.name, row.type), { rcode: row.rcode, records: row.records });
  });
}
