// The `zonal` option: `<topology-zone>.pin|prefer._zone.<service>.<namespace>.svc.<zone>` for
// headless services, from the zone of each EndpointSlice endpoint. The cases of CoreDNS's
// zonal_test.go (pin, prefer, empty zone, unknown service, unknown word, ClusterIP service, TXT,
// SRV, the option off) and kdns's own (zones with dots, mixed case, no zone on the endpoint, the
// kept answer dropped when an endpoint moves zone), through the handler as sent on the wire.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage } from '../../lib/dns/codec.js';
import { rrToString } from '../../lib/dns/rr.js';
import { RRType } from '../../lib/dns/types.js';
import { createLogger } from '../../server/log.js';
import { finalizeReply } from '../../server/finalize.js';
import type { Reply } from '../../server/reply.js';
import { sliceToGroup } from '../../lib/cluster/convert.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { ClusterObject, EndpointSlice } from '../../lib/cluster/types.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes } from './config.js';
import { KubernetesPlugin } from './handler.js';
import { parseRequest } from './resolve.js';
import { testRequest } from '../../../test/util/request.js';

const slice = (endpoints: EndpointSlice['endpoints']): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'hdls-1', namespace: 'testns', labels: { 'kubernetes.io/service-name': 'hdls' } },
  addressType: 'IPv4',
  endpoints,
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
});

const HDLS_SLICE = slice([
  { addresses: ['172.0.0.1'], zone: 'us-west-2a' },
  { addresses: ['172.0.0.2'], zone: 'us-west-2b' },
  { addresses: ['172.0.0.3'], zone: 'us-west-2b' },
  { addresses: ['172.0.0.4'], zone: 'Corp.Example.com' },
  { addresses: ['172.0.0.5'] },
  { addresses: ['172.0.0.6'], zone: 'us-west-2a', conditions: { ready: false } },
]);

const objects: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'testns' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hdls', namespace: 'testns' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'clstr', namespace: 'testns' }, spec: { clusterIP: '10.0.0.10', ports: [{ name: 'http', port: 80 }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'testns' }, spec: { type: 'ExternalName', externalName: 'example.com' } },
  HDLS_SLICE,
];

function plugin(options: string, store = new ClusterStore({ endpointZones: true })): KubernetesPlugin {
  for (const o of objects) store.upsert(o);
  store.markSynced();
  const d = parseCorefile(`cluster.local {\nkubernetes {\n${options}\n}\n}\n`, { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
  if (!d) throw new Error('no directive');
  const cfg = parseKubernetes(d, ['cluster.local.'], '/Corefile', '/unused');
  return new KubernetesPlugin(cfg, { store, description: 'test store', start: async () => {}, release: async () => {} }, { log: createLogger(() => {}), localIPs: () => ['127.0.0.1'] });
}

async function ask(p: KubernetesPlugin, name: string, type: number): Promise<{ rcode: number; records: string[] }> {
  const req = testRequest(name, type);
  const reply = (await p.serve(req, () => undefined)) as Reply;
  const msg = decodeMessage(finalizeReply(req, reply));
  return { rcode: msg.rcode, records: [...msg.answers, ...msg.additional].map(rrToString) };
}

const a = (name: string, ip: string): string => `${name}\t5\tIN\tA\t${ip}`;
const Z = (zone: string, how: string, svc = 'hdls'): string => `${zone}.${how}._zone.${svc}.testns.svc.cluster.local.`;
const NOERROR = 0;
const NXDOMAIN = 3;

const rows: Array<{ what: string; name: string; type: number; rcode: number; records: string[]; options?: string }> = [
  { what: 'pin: the endpoints in the zone', name: Z('us-west-2a', 'pin'), type: RRType.A, rcode: NOERROR, records: [a(Z('us-west-2a', 'pin'), '172.0.0.1')] },
  { what: 'pin: another zone', name: Z('us-west-2b', 'pin'), type: RRType.A, rcode: NOERROR, records: [a(Z('us-west-2b', 'pin'), '172.0.0.2'), a(Z('us-west-2b', 'pin'), '172.0.0.3')] },
  { what: 'pin: a zone without endpoints is NODATA', name: Z('us-west-2c', 'pin'), type: RRType.A, rcode: NOERROR, records: [] },
  { what: 'prefer: the endpoints in the zone when it has some', name: Z('us-west-2a', 'prefer'), type: RRType.A, rcode: NOERROR, records: [a(Z('us-west-2a', 'prefer'), '172.0.0.1')] },
  {
    what: 'prefer: every endpoint when the zone has none (the one without a zone too)',
    name: Z('us-west-2c', 'prefer'),
    type: RRType.A,
    rcode: NOERROR,
    records: ['172.0.0.1', '172.0.0.2', '172.0.0.3', '172.0.0.4', '172.0.0.5'].map((ip) => a(Z('us-west-2c', 'prefer'), ip)),
  },
  { what: 'a zone name with dots, matched without regard to case', name: Z('corp.example.com', 'pin'), type: RRType.A, rcode: NOERROR, records: [a(Z('corp.example.com', 'pin'), '172.0.0.4')] },
  { what: 'a question in capitals answers in its spelling', name: 'US-WEST-2A.PIN._zone.hdls.testns.svc.cluster.local.', type: RRType.A, rcode: NOERROR, records: [a('US-WEST-2A.PIN._zone.hdls.testns.svc.cluster.local.', '172.0.0.1')] },
  { what: 'AAAA of a zone with IPv4 endpoints only is NODATA', name: Z('us-west-2a', 'pin'), type: RRType.AAAA, rcode: NOERROR, records: [] },
  { what: 'TXT of an empty pinned zone is NODATA', name: Z('us-west-2c', 'pin'), type: RRType.TXT, rcode: NOERROR, records: [] },
  { what: 'TXT of a preferred zone is NODATA', name: Z('us-west-2c', 'prefer'), type: RRType.TXT, rcode: NOERROR, records: [] },
  { what: 'MX of a pinned zone is NODATA', name: Z('us-west-2a', 'pin'), type: RRType.MX, rcode: NOERROR, records: [] },
  {
    what: 'SRV of a pinned zone: its endpoints, named under the service, with glue',
    name: Z('us-west-2b', 'pin'),
    type: RRType.SRV,
    rcode: NOERROR,
    records: [
      `${Z('us-west-2b', 'pin')}\t5\tIN\tSRV\t0 50 80 172-0-0-2.hdls.testns.svc.cluster.local.`,
      `${Z('us-west-2b', 'pin')}\t5\tIN\tSRV\t0 50 80 172-0-0-3.hdls.testns.svc.cluster.local.`,
      a('172-0-0-2.hdls.testns.svc.cluster.local.', '172.0.0.2'),
      a('172-0-0-3.hdls.testns.svc.cluster.local.', '172.0.0.3'),
    ],
  },
  { what: 'SRV of an empty pinned zone is NODATA', name: Z('us-west-2c', 'pin'), type: RRType.SRV, rcode: NOERROR, records: [] },
  { what: 'a service that does not exist is NXDOMAIN', name: Z('us-west-2a', 'pin', 'ghost'), type: RRType.A, rcode: NXDOMAIN, records: [] },
  { what: 'a ClusterIP service has no zone-scoped names', name: Z('us-west-2a', 'pin', 'clstr'), type: RRType.A, rcode: NXDOMAIN, records: [] },
  { what: 'an ExternalName service has no zone-scoped names', name: Z('us-west-2a', 'pin', 'ext'), type: RRType.A, rcode: NXDOMAIN, records: [] },
  { what: 'a word other than pin or prefer is NXDOMAIN', name: Z('us-west-2a', 'florp'), type: RRType.A, rcode: NXDOMAIN, records: [] },
  { what: 'without the zone label it is NXDOMAIN', name: 'pin._zone.hdls.testns.svc.cluster.local.', type: RRType.A, rcode: NXDOMAIN, records: [] },
  { what: 'without zonal the name is NXDOMAIN, as before the option', name: Z('us-west-2a', 'pin'), type: RRType.A, rcode: NXDOMAIN, records: [], options: '' },
  { what: 'the plain service name still answers every endpoint', name: 'hdls.testns.svc.cluster.local.', type: RRType.A, rcode: NOERROR, records: ['172.0.0.1', '172.0.0.2', '172.0.0.3', '172.0.0.4', '172.0.0.5'].map((ip) => a('hdls.testns.svc.cluster.local.', ip)) },
];

for (const row of rows) {
  test(`zonal: ${row.what}`, async () => {
    const p = plugin(row.options ?? 'zonal');
    // Twice: the first answer is resolved, the second replayed from the kept bytes.
    for (let i = 0; i < 2; i++) assert.deepEqual(await ask(p, row.name, row.type), { rcode: row.rcode, records: row.records });
  });
}

test('zonal: an endpoint that moves zone leaves the kept answer of its old zone', async () => {
  const store = new ClusterStore({ endpointZones: true });
  const p = plugin('zonal', store);
  assert.deepEqual((await ask(p, Z('us-west-2a', 'pin'), RRType.A)).records, [a(Z('us-west-2a', 'pin'), '172.0.0.1')]);
  store.upsert(slice([{ addresses: ['172.0.0.1'], zone: 'us-west-2b' }]));
  assert.deepEqual(await ask(p, Z('us-west-2a', 'pin'), RRType.A), { rcode: NOERROR, records: [] });
  assert.deepEqual((await ask(p, Z('us-west-2b', 'pin'), RRType.A)).records, [a(Z('us-west-2b', 'pin'), '172.0.0.1')]);
});

test('zonal: a store that keeps no zones matches no zone (pin NODATA, prefer everything)', async () => {
  const p = plugin('zonal', new ClusterStore());
  assert.deepEqual(await ask(p, Z('us-west-2a', 'pin'), RRType.A), { rcode: NOERROR, records: [] });
  assert.equal((await ask(p, Z('us-west-2a', 'prefer'), RRType.A)).records.length, 5);
});

const convertRows: Array<{ what: string; keep: boolean; zone: string | undefined; want: string | undefined }> = [
  { what: 'kept, lower-cased', keep: true, zone: 'US-West-2A', want: 'us-west-2a' },
  { what: 'an endpoint without a zone has none', keep: true, zone: undefined, want: undefined },
  { what: 'an empty zone is none', keep: true, zone: '', want: undefined },
  { what: 'not kept unless asked for', keep: false, zone: 'us-west-2a', want: undefined },
];

for (const row of convertRows) {
  test(`EndpointSlice zone → address: ${row.what}`, () => {
    const group = sliceToGroup(slice([{ addresses: ['10.0.0.1'], ...(row.zone !== undefined ? { zone: row.zone } : {}) }]), undefined, row.keep);
    const address = group.addresses[0];
    assert.equal(address?.zone, row.want);
    // No field at all when there is no zone to keep: the address is no bigger than without zonal.
    assert.equal(address !== undefined && 'zone' in address, row.want !== undefined);
  });
}

const parseRows: Array<{ name: string; zonal: boolean; multicluster: boolean; want: string }> = [
  // CoreDNS's parse_test.go rows for the zone-scoped shape.
  { name: 'us-west-2a.pin._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: 'us-west-2a pin webs.mynamespace' },
  { name: 'us-west-2a.prefer._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: 'us-west-2a prefer webs.mynamespace' },
  { name: 'corp.example.com.pin._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: 'corp.example.com pin webs.mynamespace' },
  { name: 'us-west-2a.pin._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: false, multicluster: false, want: 'invalid' },
  { name: 'us-west-2a.pin._zone.webs.mynamespace.pod.inter.webs.tests.', zonal: true, multicluster: false, want: 'invalid' },
  { name: 'us-west-2a.florp._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: 'invalid' },
  { name: 'us-west-2a.pin._zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: true, want: 'invalid' },
  { name: 'us-west-2a.pin.zone.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: 'invalid' },
  // Two labels are still a port and a protocol.
  { name: '_zone.pin.webs.mynamespace.svc.inter.webs.tests.', zonal: true, multicluster: false, want: ' pin webs.mynamespace port=zone' },
];

for (const row of parseRows) {
  test(`parse ${row.name}${row.zonal ? ' zonal' : ''}${row.multicluster ? ' multicluster' : ''} → ${row.want}`, () => {
    const r = parseRequest(row.name, 'inter.webs.tests.', row.multicluster, row.zonal);
    const got = r === 'invalid' ? r : `${r.topologyZone} ${r.topologyZone !== '' ? (r.preferZone ? 'prefer' : 'pin') : r.protocol} ${r.service}.${r.namespace}${r.port !== '' ? ` port=${r.port}` : ''}`;
    assert.equal(got, row.want);
  });
}
