// k8s_external inside a running kdns, asked with the real dig: a cluster of manifests (watched),
// the kubernetes plugin beside it, and a `file` zone after them that resolves a load
// balancer's hostname the way the rest of a real chain (forward) would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig, type DigRecord } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const CLUSTER = `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.10
  externalIPs: [192.0.2.1]
  ports: [{name: https, protocol: TCP, port: 443}]
status:
  loadBalancer:
    ingress: [{ip: 198.51.100.7}, {ip: "2001:db8::7"}]
---
apiVersion: v1
kind: Service
metadata: {name: cloud, namespace: shop}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.11
  ports: [{name: http, protocol: TCP, port: 80}]
status:
  loadBalancer:
    ingress: [{hostname: lb-1.example.net}]
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec:
  clusterIP: None
  ports: [{name: pg, protocol: TCP, port: 5432}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: db-1, namespace: shop, labels: {kubernetes.io/service-name: db}}
addressType: IPv4
endpoints:
  - {addresses: [10.244.0.5], hostname: db-0}
ports: [{name: pg, protocol: TCP, port: 5432}]
`;

const ZONE = `$ORIGIN example.net.
@ 300 IN SOA ns hostmaster 1 3600 600 86400 60
@ 300 IN NS ns
ns 300 IN A 192.0.2.53
lb-1 300 IN A 203.0.113.9
`;

const line = (r: DigRecord): string => `${r.name} ${r.ttl} ${r.type} ${r.data}`;

describe('k8s_external end to end', () => {
  let s: TestServer;
  let clusterDir: string;
  before(async () => {
    clusterDir = mkdtempSync(join(tmpdir(), 'kdns-k8sext-'));
    writeFileSync(join(clusterDir, 'cluster.yaml'), CLUSTER);
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    kubernetes cluster.local
    k8s_external example.com 113.0.203.in-addr.arpa 100.51.198.in-addr.arpa {
        headless
        ttl 30
    }
    file db.example.net example.net
}
`,
      { clusterDir, files: { 'db.example.net': ZONE } },
    );
  });
  after(() => s.stop());

  const SOA = 'example.com. 30 SOA ns1.dns.example.com. hostmaster.dns.example.com. SERIAL 7200 1800 86400 30';
  const cases: Array<{ q: [string, string]; status: string; answer: string[]; authority?: string[]; additional?: string[] }> = [
    { q: ['web.shop.example.com', 'A'], status: 'NOERROR', answer: ['web.shop.example.com. 30 A 192.0.2.1', 'web.shop.example.com. 30 A 198.51.100.7'] },
    { q: ['web.shop.example.com', 'AAAA'], status: 'NOERROR', answer: ['web.shop.example.com. 30 AAAA 2001:db8::7'] },
    {
      q: ['_https._tcp.web.shop.example.com', 'SRV'],
      status: 'NOERROR',
      answer: ['_https._tcp.web.shop.example.com. 30 SRV 0 33 443 web.shop.example.com.'],
      additional: ['web.shop.example.com. 30 A 192.0.2.1', 'web.shop.example.com. 30 A 198.51.100.7', 'web.shop.example.com. 30 AAAA 2001:db8::7'],
    },
    { q: ['cloud.shop.example.com', 'A'], status: 'NOERROR', answer: ['cloud.shop.example.com. 30 CNAME lb-1.example.net.', 'lb-1.example.net. 300 A 203.0.113.9'] },
    { q: ['db.shop.example.com', 'A'], status: 'NOERROR', answer: ['db.shop.example.com. 30 A 10.244.0.5'] },
    { q: ['_pg._tcp.db.shop.example.com', 'SRV'], status: 'NOERROR', answer: ['_pg._tcp.db.shop.example.com. 30 SRV 0 100 5432 db-0.db.shop.example.com.'], additional: ['db-0.db.shop.example.com. 30 A 10.244.0.5'] },
    { q: ['7.100.51.198.in-addr.arpa', 'PTR'], status: 'NOERROR', answer: ['7.100.51.198.in-addr.arpa. 30 PTR web.shop.example.com.'] },
    { q: ['nope.shop.example.com', 'A'], status: 'NXDOMAIN', answer: [], authority: [SOA] },
    { q: ['web.shop.example.com', 'TXT'], status: 'NOERROR', answer: [], authority: [SOA] },
    { q: ['example.com', 'SOA'], status: 'NOERROR', answer: [SOA] },
    { q: ['example.com', 'NS'], status: 'NOERROR', answer: ['example.com. 30 NS ns1.dns.example.com.'], additional: ['ns1.dns.example.com. 30 A 127.0.0.1'] },
    { q: ['ns1.dns.example.com', 'A'], status: 'NOERROR', answer: ['ns1.dns.example.com. 30 A 127.0.0.1'] },
    // The cluster zone is the kubernetes plugin's, unchanged.
    { q: ['web.shop.svc.cluster.local', 'A'], status: 'NOERROR', answer: ['web.shop.svc.cluster.local. 5 A 10.96.0.10'] },
  ];
  for (const c of cases) {
    test(`${c.q[0]} ${c.q[1]}`, async () => {
      const r = await dig(c.q[0], c.q[1], { port: s.port, args: ['+norec'] });
      const soaless = (rs: DigRecord[]): string[] => rs.map(line).map((l) => l.replace(/(hostmaster\.\S+) \d+/, '$1 SERIAL')).sort();
      assert.equal(r.status, c.status);
      assert.ok(r.flags.includes('aa'), 'authoritative');
      assert.deepEqual(soaless(r.answer), c.answer);
      assert.deepEqual(soaless(r.authority), c.authority ?? []);
      assert.deepEqual(soaless(r.additional), c.additional ?? []);
    });
  }

  test('a service given an external address later is answered once the store has it', async () => {
    const before = await dig('late.shop.example.com', 'A', { port: s.port });
    assert.equal(before.status, 'NXDOMAIN');
    writeFileSync(
      join(clusterDir, 'late.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: {name: late, namespace: shop}\nspec:\n  clusterIP: 10.96.0.12\n  externalIPs: [192.0.2.99]\n  ports: [{port: 80}]\n',
    );
    const r = await waitFor(async () => {
      const got = await dig('late.shop.example.com', 'A', { port: s.port });
      return got.status === 'NOERROR' ? got : undefined;
    }, 10_000, 100);
    assert.deepEqual(r.answer.map(line), ['late.shop.example.com. 30 A 192.0.2.99']);
  });
});
