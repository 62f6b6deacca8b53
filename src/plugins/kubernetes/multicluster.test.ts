// The `multicluster` option: CoreDNS's TestMultiClusterServeDNS tables (handler_test.go: the
// cases common to both zone kinds, then the multicluster ones) over the same ServiceImports and
// MCS EndpointSlices, with cluster.local as the multicluster zone. One row per query.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { typeFromName } from '../../lib/dns/rr.js';
import { createLogger } from '../../server/log.js';
import { Reply } from '../../server/reply.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { ClusterObject, EndpointSlice, ServiceImport, ServicePort } from '../../lib/cluster/types.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { replyShape, type ReplyShape } from '../../../test/util/shape.js';
import { edns, testRequest } from '../../../test/util/request.js';
import { parseKubernetes } from './config.js';
import { KubernetesPlugin } from './handler.js';
import type { SourceHandle } from './sources.js';

const http: ServicePort[] = [{ name: 'http', protocol: 'TCP', port: 80 }];

function serviceImport(name: string, namespace: string, type: 'ClusterSetIP' | 'Headless', ips: string[] = [], ports?: ServicePort[]): ServiceImport {
  return { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name, namespace }, spec: { type, ips, ...(ports ? { ports } : {}) } };
}

function mcsSlice(service: string, namespace: string, cluster: string, endpoints: Array<{ ip: string; hostname?: string; ready?: boolean }>, ports?: ServicePort[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-${cluster}`, namespace, labels: { 'multicluster.kubernetes.io/service-name': service, 'multicluster.kubernetes.io/source-cluster': cluster } },
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], ...(e.hostname ? { hostname: e.hostname } : {}), ...(e.ready === undefined ? {} : { conditions: { ready: e.ready } }) })),
    ...(ports ? { ports } : {}),
  };
}

const ns = (name: string): ClusterObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

const CLUSTERSET: ClusterObject[] = [
  ns('testns'),
  ns('kube-system'),
  ns('unexposedns'),
  serviceImport('kubedns', 'kube-system', 'ClusterSetIP', ['10.0.0.10'], [{ name: 'dns', protocol: 'UDP', port: 53 }]),
  serviceImport('svc1', 'testns', 'ClusterSetIP', ['10.0.0.1'], http),
  serviceImport('svcempty', 'testns', 'ClusterSetIP', ['10.0.0.1'], http),
  serviceImport('svc6', 'testns', 'ClusterSetIP', ['1234:abcd::1'], http),
  serviceImport('hdls1', 'testns', 'Headless'),
  serviceImport('hdlsprtls', 'testns', 'Headless'),
  serviceImport('svc1', 'unexposedns', 'ClusterSetIP', ['10.0.0.2'], http),
  serviceImport('svc-dual-stack', 'testns', 'ClusterSetIP', ['10.0.0.3', '10::3'], http),
  mcsSlice('kubedns', 'kube-system', 'cluster1', [{ ip: '172.0.0.100' }], [{ name: 'dns', protocol: 'UDP', port: 53 }]),
  mcsSlice('svc1', 'testns', 'cluster1', [{ ip: '172.0.0.1', hostname: 'ep1a' }], http),
  mcsSlice('svcempty', 'testns', 'cluster1', [], http),
  mcsSlice(
    'hdls1',
    'testns',
    'cluster1',
    [{ ip: '172.0.0.2' }, { ip: '172.0.0.3' }, { ip: '172.0.0.4', hostname: 'dup-name' }, { ip: '172.0.0.5', hostname: 'dup-name' }, { ip: '5678:abcd::1' }, { ip: '5678:abcd::2' }],
    http,
  ),
  mcsSlice('hdlsprtls', 'testns', 'cluster1', [{ ip: '172.0.0.20' }]),
];

/** Beyond CoreDNS's fixture: a second cluster with a not-ready endpoint, and a local Service. */
const MORE: ClusterObject[] = [
  mcsSlice('hdls1', 'testns', 'cluster2', [{ ip: '172.0.1.2', hostname: 'db-0' }, { ip: '172.0.1.3', ready: false }], http),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'local-only', namespace: 'testns' }, spec: { clusterIP: '10.96.0.50', ports: http } },
];

function plugin(body: string, objects: readonly ClusterObject[] = [...CLUSTERSET, ...MORE]): KubernetesPlugin {
  const store = new ClusterStore();
  for (const o of objects) store.upsert(o);
  store.markSynced();
  const cfg = parseKubernetes(directiveIn(`kubernetes cluster.local clusterset.local {\n${body}\n}`), ['.'], '/Corefile', '/unused');
  const handle: SourceHandle = { store, description: 'test store', start: async () => {}, release: async () => {} };
  return new KubernetesPlugin(cfg, handle, { log: createLogger(() => {}), localIPs: () => ['127.0.0.1'] });
}

type Shape = ReplyShape;

async function ask(p: KubernetesPlugin, name: string, type: string): Promise<Shape> {
  // EDNS with room for every record: these rows check content, not truncation.
  const req = testRequest(name, typeFromName(type) as number, { edns: edns(4096) });
  const { aa: _aa, ...shape } = replyShape(req, (await p.serve(req, () => undefined)) as Reply);
  return shape;
}

const SOA = 'cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5';
const ok = (answer: string[], additional: string[] = []): Shape => ({ rcode: 'NOERROR', answer, authority: [], additional });
const nodata: Shape = { rcode: 'NOERROR', answer: [], authority: [SOA], additional: [] };
const nx: Shape = { rcode: 'NXDOMAIN', answer: [], authority: [SOA], additional: [] };
const CL = 'testns.svc.cluster.local.';

const COMMON: Array<[string, string, Shape]> = [
  [`svc1.${CL}`, 'A', ok([`svc1.${CL} 5 IN A 10.0.0.1`])],
  [`svcempty.${CL}`, 'A', ok([`svcempty.${CL} 5 IN A 10.0.0.1`])],
  [`svc1.${CL}`, 'SRV', ok([`svc1.${CL} 5 IN SRV 0 100 80 svc1.${CL}`], [`svc1.${CL} 5 IN A 10.0.0.1`])],
  [`svcempty.${CL}`, 'SRV', ok([`svcempty.${CL} 5 IN SRV 0 100 80 svcempty.${CL}`], [`svcempty.${CL} 5 IN A 10.0.0.1`])],
  [`svc6.${CL}`, 'SRV', ok([`svc6.${CL} 5 IN SRV 0 100 80 svc6.${CL}`], [`svc6.${CL} 5 IN AAAA 1234:abcd::1`])],
  [`_http._tcp.svc1.${CL}`, 'SRV', ok([`_http._tcp.svc1.${CL} 5 IN SRV 0 100 80 svc1.${CL}`], [`svc1.${CL} 5 IN A 10.0.0.1`])],
  [`_http._tcp.svcempty.${CL}`, 'SRV', ok([`_http._tcp.svcempty.${CL} 5 IN SRV 0 100 80 svcempty.${CL}`], [`svcempty.${CL} 5 IN A 10.0.0.1`])],
  [`hdlsprtls.${CL}`, 'A', ok([`hdlsprtls.${CL} 5 IN A 172.0.0.20`])],
  [`svc1.${CL}`, 'AAAA', nodata],
  [`svc0.${CL}`, 'AAAA', nx],
  [`svc0.${CL}`, 'A', nx],
  ['svc0.svc-nons.svc.cluster.local.', 'A', nx],
  ['dns-version.cluster.local.', 'TXT', ok(['dns-version.cluster.local. 28800 IN TXT "1.1.0"'])],
  [`svc1.${CL}`, 'TXT', nodata],
  ['svc0.svc-nons.svc.cluster.local.', 'TXT', nx],
  [`bogusendpoint.hdls1.${CL}`, 'A', nx],
  [`bogusendpoint.svc0.${CL}`, 'A', nx],
  [`svc6.${CL}`, 'AAAA', ok([`svc6.${CL} 5 IN AAAA 1234:abcd::1`])],
  [`_http._tcp.svc6.${CL}`, 'SRV', ok([`_http._tcp.svc6.${CL} 5 IN SRV 0 100 80 svc6.${CL}`], [`svc6.${CL} 5 IN AAAA 1234:abcd::1`])],
  ['svc.cluster.local.', 'A', nodata],
  ['pod.cluster.local.', 'A', nodata],
  [CL, 'A', nodata],
  ['svc.cluster.local.', 'NS', nodata],
  [CL, 'NS', nodata],
  ['foo.cluster.local.', 'NS', nx],
  ['foo.svc.cluster.local.', 'NS', nx],
  [`svc-dual-stack.${CL}`, 'A', ok([`svc-dual-stack.${CL} 5 IN A 10.0.0.3`])],
  [`svc-dual-stack.${CL}`, 'AAAA', ok([`svc-dual-stack.${CL} 5 IN AAAA 10::3`])],
  [`svc-dual-stack.${CL}`, 'SRV', ok([`svc-dual-stack.${CL} 5 IN SRV 0 50 80 svc-dual-stack.${CL}`], [`svc-dual-stack.${CL} 5 IN A 10.0.0.3`, `svc-dual-stack.${CL} 5 IN AAAA 10::3`])],
  [`svc1.${CL}`, 'SOA', nodata],
  [`endpoint.external.${CL}`, 'CNAME', nx],
  [`subdomain.subdomain.external.${CL}`, 'CNAME', nx],
];

const H = `hdls1.${CL}`;
const MULTICLUSTER: Array<[string, string, Shape]> = [
  [
    `_http._tcp.${H}`,
    'SRV',
    ok(
      [`172-0-0-2`, `172-0-0-3`, `5678-abcd--1`, `5678-abcd--2`, `dup-name`].map((h) => `_http._tcp.${H} 5 IN SRV 0 16 80 ${h}.cluster1.${H}`),
      [
        `172-0-0-2.cluster1.${H} 5 IN A 172.0.0.2`,
        `172-0-0-3.cluster1.${H} 5 IN A 172.0.0.3`,
        `5678-abcd--1.cluster1.${H} 5 IN AAAA 5678:abcd::1`,
        `5678-abcd--2.cluster1.${H} 5 IN AAAA 5678:abcd::2`,
        `dup-name.cluster1.${H} 5 IN A 172.0.0.4`,
        `dup-name.cluster1.${H} 5 IN A 172.0.0.5`,
      ],
    ),
  ],
  [H, 'A', ok([`${H} 5 IN A 172.0.0.2`, `${H} 5 IN A 172.0.0.3`, `${H} 5 IN A 172.0.0.4`, `${H} 5 IN A 172.0.0.5`])],
  [`5678-abcd--2.cluster1.${H}`, 'AAAA', ok([`5678-abcd--2.cluster1.${H} 5 IN AAAA 5678:abcd::2`])],
  [`5678-abcd--1.cluster1.${H}`, 'AAAA', ok([`5678-abcd--1.cluster1.${H} 5 IN AAAA 5678:abcd::1`])],
  [`172-0-0-20.cluster1.hdlsprtls.${CL}`, 'A', ok([`172-0-0-20.cluster1.hdlsprtls.${CL} 5 IN A 172.0.0.20`])],
  [`5678-abcd--1.${H}`, 'AAAA', nx], // an endpoint name needs its cluster
  [`172-0-0-2.cluster1.${H}`, 'A', ok([`172-0-0-2.cluster1.${H} 5 IN A 172.0.0.2`])],
  [`172-0-0-3.cluster1.${H}`, 'A', ok([`172-0-0-3.cluster1.${H} 5 IN A 172.0.0.3`])],
  [`dup-name.cluster1.${H}`, 'A', ok([`dup-name.cluster1.${H} 5 IN A 172.0.0.4`, `dup-name.cluster1.${H} 5 IN A 172.0.0.5`])],
];

describe('kubernetes multicluster: CoreDNS TestMultiClusterServeDNS (multicluster zone cluster.local)', () => {
  const p = plugin('multicluster cluster.local\nnamespaces testns', CLUSTERSET);
  for (const [name, type, want] of [...COMMON, ...MULTICLUSTER]) {
    test(`${name} ${type}`, async () => assert.deepEqual(await ask(p, name, type), want));
  }
});

describe('kubernetes multicluster: beyond CoreDNS tables', () => {
  const p = plugin('multicluster clusterset.local\nnamespaces testns');
  const SET = 'testns.svc.clusterset.local.';
  const SOASET = 'clusterset.local. 5 IN SOA ns.dns.clusterset.local. hostmaster.clusterset.local. SERIAL 7200 1800 86400 5';
  const cases: Array<[string, string, Shape]> = [
    // A headless import answers with the ready endpoints of every cluster.
    [`hdls1.${SET}`, 'A', ok(['172.0.0.2', '172.0.0.3', '172.0.0.4', '172.0.0.5', '172.0.1.2'].map((ip) => `hdls1.${SET} 5 IN A ${ip}`))],
    [
      `_http._tcp.hdls1.${SET}`,
      'SRV',
      // 7 entries (dup-name twice), so weight floor(100/7) = 14; one SRV per name.
      ok(
        ['172-0-0-2.cluster1', '172-0-0-3.cluster1', '5678-abcd--1.cluster1', '5678-abcd--2.cluster1', 'db-0.cluster2', 'dup-name.cluster1'].map((t) => `_http._tcp.hdls1.${SET} 5 IN SRV 0 14 80 ${t}.hdls1.${SET}`),
        [
          `172-0-0-2.cluster1.hdls1.${SET} 5 IN A 172.0.0.2`,
          `172-0-0-3.cluster1.hdls1.${SET} 5 IN A 172.0.0.3`,
          `5678-abcd--1.cluster1.hdls1.${SET} 5 IN AAAA 5678:abcd::1`,
          `5678-abcd--2.cluster1.hdls1.${SET} 5 IN AAAA 5678:abcd::2`,
          `db-0.cluster2.hdls1.${SET} 5 IN A 172.0.1.2`,
          `dup-name.cluster1.hdls1.${SET} 5 IN A 172.0.0.4`,
          `dup-name.cluster1.hdls1.${SET} 5 IN A 172.0.0.5`,
        ],
      ),
    ],
    [`db-0.cluster2.hdls1.${SET}`, 'A', ok([`db-0.cluster2.hdls1.${SET} 5 IN A 172.0.1.2`])],
    [`db-0.cluster1.hdls1.${SET}`, 'A', { ...nx, authority: [SOASET] }],
    [`172-0-1-3.cluster2.hdls1.${SET}`, 'A', { ...nx, authority: [SOASET] }], // not ready
    [`_http._tcp.svc1.${SET}`, 'SRV', ok([`_http._tcp.svc1.${SET} 5 IN SRV 0 100 80 svc1.${SET}`], [`svc1.${SET} 5 IN A 10.0.0.1`])],
    // A local Service has no clusterset name, and an import has no cluster.local name.
    [`local-only.${SET}`, 'A', { ...nx, authority: [SOASET] }],
    ['local-only.testns.svc.cluster.local.', 'A', ok(['local-only.testns.svc.cluster.local. 5 IN A 10.96.0.50'])],
    ['svc1.testns.svc.cluster.local.', 'A', nx],
    [`svc1.unexposedns.svc.clusterset.local.`, 'A', { ...nx, authority: [SOASET] }],
  ];
  for (const [name, type, want] of cases) {
    test(`${name} ${type}`, async () => assert.deepEqual(await ask(p, name, type), want));
  }

  test('ignore empty_service: an import without ready endpoints does not exist', async () => {
    const q = plugin('multicluster clusterset.local\nignore empty_service');
    assert.equal((await ask(q, `svcempty.${SET}`, 'A')).rcode, 'NXDOMAIN');
    assert.equal((await ask(q, `svc1.${SET}`, 'A')).rcode, 'NOERROR');
  });

  test('an import or MCS slice that changes drops the kept answer', async () => {
    const store = new ClusterStore();
    for (const o of CLUSTERSET) store.upsert(o);
    store.markSynced();
    const cfg = parseKubernetes(directiveIn('kubernetes cluster.local clusterset.local {\nmulticluster clusterset.local\n}'), ['.'], '/Corefile', '/unused');
    const q = new KubernetesPlugin(cfg, { store, description: 't', start: async () => {}, release: async () => {} }, { log: createLogger(() => {}), localIPs: () => [] });
    assert.deepEqual((await ask(q, `svc1.${SET}`, 'A')).answer, [`svc1.${SET} 5 IN A 10.0.0.1`]);
    store.upsert(serviceImport('svc1', 'testns', 'ClusterSetIP', ['10.0.0.99'], http));
    assert.deepEqual((await ask(q, `svc1.${SET}`, 'A')).answer, [`svc1.${SET} 5 IN A 10.0.0.99`]);
    store.upsert(mcsSlice('hdls1', 'testns', 'cluster2', [{ ip: '172.0.1.9', hostname: 'db-0' }], http));
    assert.deepEqual((await ask(q, `db-0.cluster2.hdls1.${SET}`, 'A')).answer, [`db-0.cluster2.hdls1.${SET} 5 IN A 172.0.1.9`]);
    store.remove('ServiceImport', 'testns', 'svc1');
    assert.equal((await ask(q, `svc1.${SET}`, 'A')).rcode, 'NXDOMAIN');
  });
});
