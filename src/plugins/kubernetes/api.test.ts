// `kdns serve` with `kubernetes { endpoint URL }` against an HTTP server speaking the Kubernetes
// list/watch protocol: not ready (and SERVFAIL where it would say NXDOMAIN) until the first
// sync, then answers that follow watch events.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { answers, dig } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { FakeApiServer } from '../../../test/util/fakeapi.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
type Item = Record<string, unknown> & { metadata: { name: string; namespace?: string } };
const fixture = (file: string): Item[] => (JSON.parse(readFileSync(join(ROOT, 'src/lib/cluster/testdata/api', file), 'utf8')) as { items: Item[] }).items;

let api: FakeApiServer;
let srv: TestServer;

before(async () => {
  api = new FakeApiServer();
  api.seed('/api/v1/namespaces', fixture('namespaces.json'));
  api.seed('/api/v1/services', fixture('services.json'));
  api.seed('/apis/discovery.k8s.io/v1/endpointslices', fixture('endpointslices.json'));
  api.holdLists();
  const url = await api.listen();
  srv = await startTestServer(`cluster.local:{PORT} {\n  bind 127.0.0.1\n  kubernetes {\n    endpoint ${url}\n    startup_timeout 100ms\n  }\n}\n`);
});

after(async () => {
  await srv?.stop();
  await api?.close();
});

const q = async (name: string, type = 'A'): Promise<string> => {
  const r = await dig(name, type, { port: srv.port });
  return [r.status, ...answers(r)].join(' ');
};

const readiness = (): true | string => srv.server.readiness().find((r) => r.plugin === 'kubernetes')?.status ?? 'absent';

test('before the first sync: not ready, unknown names are SERVFAIL', async () => {
  assert.match(String(readiness()), /has not synced/);
  assert.equal(await q('cart.shop.svc.cluster.local'), 'SERVFAIL');
  assert.ok(srv.logs.some((l) => l.includes('starting server with unsynced Kubernetes API')), srv.logs.join('\n'));
});

test('after the first sync: ready and answering', async () => {
  api.releaseLists();
  await waitFor(() => readiness() === true, 3000);
  const rows: Array<[string, string, string]> = [
    ['cart.shop.svc.cluster.local', 'A', 'NOERROR A 10.96.44.12'],
    ['cart.shop.svc.cluster.local', 'AAAA', 'NOERROR AAAA fd00:10:96::2c0c'],
    ['orders-db.shop.svc.cluster.local', 'A', 'NOERROR A 10.244.1.7'],
    ['orders-db-0.orders-db.shop.svc.cluster.local', 'A', 'NOERROR A 10.244.1.7'],
    ['orders-db-1.orders-db.shop.svc.cluster.local', 'A', 'NXDOMAIN'],
    ['payments.shop.svc.cluster.local', 'CNAME', 'NOERROR CNAME api.payments.example.'],
    ['_dns._udp.kube-dns.kube-system.svc.cluster.local', 'SRV', 'NOERROR SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.'],
    ['nope.shop.svc.cluster.local', 'A', 'NXDOMAIN'],
  ];
  for (const [name, type, expected] of rows) assert.equal(await q(name, type), expected, `${name} ${type}`);
});

test('watch events change answers; a new namespace and service appear', async () => {
  api.add('/api/v1/namespaces', { metadata: { name: 'blog' } });
  api.add('/api/v1/services', { metadata: { name: 'web', namespace: 'blog' }, spec: { clusterIP: '10.96.50.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  await waitFor(async () => (await q('web.blog.svc.cluster.local')) === 'NOERROR A 10.96.50.1', 3000);
  api.remove('/api/v1/services', 'shop', 'cart');
  await waitFor(async () => (await q('cart.shop.svc.cluster.local')) === 'NXDOMAIN', 3000);
});

test('the programming-latency histogram counted the slices that carried a trigger time', async () => {
  const text = await srv.server.shared.metrics.metrics();
  assert.match(text, /coredns_kubernetes_dns_programming_duration_seconds_count\{service_kind="cluster_ip"\} 1/);
});
