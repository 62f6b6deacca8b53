// `kubernetes { multicluster clusterset.local }` in a running kdns, asked with the real dig: the
// clusterset read from an HTTP server speaking the Kubernetes list/watch protocol (ServiceImports
// of multicluster.x-k8s.io and MCS EndpointSlices), then from a folder of manifests.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig, type DigRecord } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { CORE_RESOURCES, FakeApiServer } from '../../../test/util/fakeapi.js';

const IMPORTS = '/apis/multicluster.x-k8s.io/v1alpha1/serviceimports';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';

const mcsSlice = (name: string, service: string, cluster: string, ips: Array<[string, string?]>): Record<string, unknown> & { metadata: { name: string; namespace: string; labels: Record<string, string> } } => ({
  metadata: { name, namespace: 'shop', labels: { 'multicluster.kubernetes.io/service-name': service, 'multicluster.kubernetes.io/source-cluster': cluster } },
  addressType: 'IPv4',
  endpoints: ips.map(([ip, hostname]) => ({ addresses: [ip], ...(hostname ? { hostname } : {}) })),
  ports: [{ name: 'pg', protocol: 'TCP', port: 5432 }],
});

const line = (r: DigRecord): string => `${r.name} ${r.ttl} ${r.type} ${r.data}`;

async function ask(port: number, name: string, type: string): Promise<string[]> {
  const r = await dig(name, type, { port });
  return [r.status, ...[...r.answer, ...r.additional].map(line).sort()];
}

describe('multicluster end to end, from the API', () => {
  let api: FakeApiServer;
  let srv: TestServer;
  before(async () => {
    api = new FakeApiServer([...CORE_RESOURCES, { path: IMPORTS, kind: 'ServiceImport', apiVersion: 'multicluster.x-k8s.io/v1alpha1' }]);
    api.seed('/api/v1/namespaces', [{ metadata: { name: 'shop' } }]);
    api.seed('/api/v1/services', [{ metadata: { name: 'cart', namespace: 'shop' }, spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } }]);
    api.seed(IMPORTS, [
      { metadata: { name: 'cart', namespace: 'shop' }, spec: { type: 'ClusterSetIP', ips: ['10.112.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
      { metadata: { name: 'db', namespace: 'shop' }, spec: { type: 'Headless', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] } },
    ]);
    api.seed(SLICES, [mcsSlice('db-east', 'db', 'east', [['10.1.0.5', 'db-0']]), mcsSlice('db-west', 'db', 'west', [['10.2.0.5', 'db-0']])]);
    const url = await api.listen();
    srv = await startTestServer(`.:{PORT} {
    bind 127.0.0.1
    kubernetes cluster.local clusterset.local {
        endpoint ${url}
        multicluster clusterset.local
    }
}
`);
    await waitFor(() => srv.server.readiness().find((r) => r.plugin === 'kubernetes')?.status === true, 5000);
  });
  after(async () => {
    await srv?.stop();
    await api?.close();
  });

  test('ServiceImports and their slices answer under clusterset.local; Services under cluster.local', async () => {
    const rows: Array<[string, string, string[]]> = [
      ['cart.shop.svc.clusterset.local', 'A', ['NOERROR', 'cart.shop.svc.clusterset.local. 5 A 10.112.0.20']],
      ['cart.shop.svc.cluster.local', 'A', ['NOERROR', 'cart.shop.svc.cluster.local. 5 A 10.96.0.20']],
      ['db.shop.svc.clusterset.local', 'A', ['NOERROR', 'db.shop.svc.clusterset.local. 5 A 10.1.0.5', 'db.shop.svc.clusterset.local. 5 A 10.2.0.5']],
      ['db-0.west.db.shop.svc.clusterset.local', 'A', ['NOERROR', 'db-0.west.db.shop.svc.clusterset.local. 5 A 10.2.0.5']],
      [
        '_pg._tcp.db.shop.svc.clusterset.local',
        'SRV',
        [
          'NOERROR',
          '_pg._tcp.db.shop.svc.clusterset.local. 5 SRV 0 50 5432 db-0.east.db.shop.svc.clusterset.local.',
          '_pg._tcp.db.shop.svc.clusterset.local. 5 SRV 0 50 5432 db-0.west.db.shop.svc.clusterset.local.',
          'db-0.east.db.shop.svc.clusterset.local. 5 A 10.1.0.5',
          'db-0.west.db.shop.svc.clusterset.local. 5 A 10.2.0.5',
        ],
      ],
      ['db-0.db.shop.svc.clusterset.local', 'A', ['NXDOMAIN']],
      ['db.shop.svc.cluster.local', 'A', ['NXDOMAIN']],
    ];
    for (const [name, type, want] of rows) assert.deepEqual(await ask(srv.port, name, type), want, `${name} ${type}`);
  });

  test('a ServiceImport watched into existence, and one removed', async () => {
    api.add(IMPORTS, { metadata: { name: 'web', namespace: 'shop' }, spec: { type: 'ClusterSetIP', ips: ['10.112.0.30'], ports: [{ port: 80, protocol: 'TCP' }] } });
    await waitFor(async () => (await ask(srv.port, 'web.shop.svc.clusterset.local', 'A')).join() === 'NOERROR,web.shop.svc.clusterset.local. 5 A 10.112.0.30', 5000);
    api.remove(IMPORTS, 'shop', 'cart');
    await waitFor(async () => (await ask(srv.port, 'cart.shop.svc.clusterset.local', 'A'))[0] === 'NXDOMAIN', 5000);
  });
});

describe('multicluster end to end, from manifests', () => {
  let srv: TestServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-mcs-'));
    writeFileSync(
      join(dir, 'clusterset.yaml'),
      `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: cart, namespace: shop}
spec:
  type: ClusterSetIP
  ips: [10.112.0.20]
  ports: [{name: http, protocol: TCP, port: 80}]
`,
    );
    srv = await startTestServer(`clusterset.local:{PORT} {
    bind 127.0.0.1
    kubernetes clusterset.local {
        manifests ${dir}
        multicluster clusterset.local
    }
}
`);
  });
  after(() => srv?.stop());

  test('a ServiceImport from a file', async () => {
    assert.deepEqual(await ask(srv.port, 'cart.shop.svc.clusterset.local', 'A'), ['NOERROR', 'cart.shop.svc.clusterset.local. 5 A 10.112.0.20']);
    assert.deepEqual(await ask(srv.port, '_http._tcp.cart.shop.svc.clusterset.local', 'SRV'), [
      'NOERROR',
      '_http._tcp.cart.shop.svc.clusterset.local. 5 SRV 0 100 80 cart.shop.svc.clusterset.local.',
      'cart.shop.svc.clusterset.local. 5 A 10.112.0.20',
    ]);
  });
});
