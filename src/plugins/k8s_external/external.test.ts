// CoreDNS's k8s_external tables (external_test.go, apex_test.go) over the same cluster: one
// row per query, its whole expected reply. Serial numbers vary with the store and show as SERIAL.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { typeFromName } from '../../lib/dns/rr.js';
import * as rr from '../../lib/dns/rr.js';
import { createLogger } from '../../server/log.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { Next } from '../../server/plugin.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { ClusterObject } from '../../lib/cluster/types.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { replyShape, type ReplyShape } from '../../../test/util/shape.js';
import { testRequest } from '../../../test/util/request.js';
import { KubernetesPlugin, parseKubernetes, type SourceHandle } from '../kubernetes/index.js';
import { ExternalPlugin } from './handler.js';
import { parseExternal } from './setup.js';

const http = [{ name: 'http', protocol: 'TCP' as const, port: 80 }];
const CLUSTER: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'testns' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hidden' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc1', namespace: 'testns' }, spec: { clusterIP: '10.0.0.1', externalIPs: ['1.2.3.4'], ports: http } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc6', namespace: 'testns' }, spec: { clusterIP: '10.0.0.3', externalIPs: ['1:2::5'], ports: http } },
  // CoreDNS's fixture lists these addresses as ExternalIPs; a cluster has them as load-balancer ingress.
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc11', namespace: 'testns' }, spec: { type: 'LoadBalancer', clusterIP: '10.0.0.3', ports: http }, status: { loadBalancer: { ingress: [{ ip: '2.3.4.5' }] } } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc12', namespace: 'testns' }, spec: { type: 'LoadBalancer', clusterIP: '10.0.0.3', ports: http }, status: { loadBalancer: { ingress: [{ hostname: 'dummy.hostname' }] } } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-headless', namespace: 'testns' }, spec: { clusterIP: 'None', ports: http } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'svc-headless-abc', namespace: 'testns', labels: { 'kubernetes.io/service-name': 'svc-headless' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['1.2.3.4'], hostname: 'endpoint-svc-0', nodeName: 'test-node', targetRef: { kind: 'Pod', name: 'endpoint-svc-0' } },
      { addresses: ['1.2.3.5'], hostname: 'endpoint-svc-1', nodeName: 'test-node', targetRef: { kind: 'Pod', name: 'endpoint-svc-1' } },
    ],
    ports: http,
  },
  // Not in CoreDNS's fixture: a service outside `namespaces`, and one without ports.
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'other', namespace: 'hidden' }, spec: { clusterIP: '10.0.0.9', externalIPs: ['9.9.9.9'], ports: http } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'noports', namespace: 'testns' }, spec: { clusterIP: '10.0.0.8', externalIPs: ['8.8.4.4'] } },
];

function setup(externalBlock: string, kubernetesBlock = 'namespaces testns'): ExternalPlugin {
  const store = new ClusterStore();
  for (const o of CLUSTER) store.upsert(o);
  store.markSynced();
  const kcfg = parseKubernetes(directiveIn(`kubernetes cluster.local {\n${kubernetesBlock}\n}`), ['.'], '/Corefile', '/unused');
  const handle: SourceHandle = { store, description: 'test store', start: async () => {}, release: async () => {} };
  const k = new KubernetesPlugin(kcfg, handle, { log: createLogger(() => {}), localIPs: () => ['127.0.0.1'] });
  return new ExternalPlugin(parseExternal(directiveIn(externalBlock), ['.']), () => k);
}

/** The next plugin: answers dummy.hostname (the load balancer's name) when `upstream` is set. */
function nextPlugin(upstream: boolean): Next {
  return (req) => {
    if (req.name !== 'dummy.hostname.' || !upstream) return undefined;
    const answers = req.qtype === typeFromName('A') ? [rr.a('dummy.hostname.', 300, '192.0.2.10')] : req.qtype === typeFromName('AAAA') ? [rr.aaaa('dummy.hostname.', 300, '2001:db8::10')] : [];
    return Reply.of({ ...responseFor(req, 0, true), answers });
  };
}

type Shape = ReplyShape;

const NEXT = 'went to the next plugin';

async function ask(p: ExternalPlugin, name: string, type: string, upstream = false): Promise<Shape | typeof NEXT> {
  const req = testRequest(name, typeFromName(type) as number);
  const reply = await p.serve(req, nextPlugin(upstream));
  if (reply === undefined) return NEXT;
  const { aa, ...shape } = replyShape(req, reply);
  assert.equal(aa, true, 'authoritative');
  return shape;
}

const SOA = 'example.com. 5 IN SOA ns1.dns.example.com. hostmaster.dns.example.com. SERIAL 7200 1800 86400 5';
const ok = (answer: string[], additional: string[] = []): Shape => ({ rcode: 'NOERROR', answer, authority: [], additional });
const nodata: Shape = { rcode: 'NOERROR', answer: [], authority: [SOA], additional: [] };
const nx: Shape = { rcode: 'NXDOMAIN', answer: [], authority: [SOA], additional: [] };

describe('k8s_external: CoreDNS external_test.go (zones example.com, in-addr.arpa; headless)', () => {
  const p = setup('k8s_external example.com in-addr.arpa {\nheadless\n}');
  const cases: Array<[string, string, Shape]> = [
    ['4.3.2.1.in-addr.arpa.', 'PTR', ok(['4.3.2.1.in-addr.arpa. 5 IN PTR svc1.testns.example.com.'])],
    ['svc1.testns.example.com.', 'PTR', nodata],
    ['not-existing.testns.example.com.', 'PTR', nx],
    ['svc1.testns.example.com.', 'A', ok(['svc1.testns.example.com. 5 IN A 1.2.3.4'])],
    ['svc1.testns.example.com.', 'SRV', ok(['svc1.testns.example.com. 5 IN SRV 0 100 80 svc1.testns.example.com.'], ['svc1.testns.example.com. 5 IN A 1.2.3.4'])],
    ['*._not-udp-or-tcp.svc1.testns.example.com.', 'SRV', nx],
    ['_http._tcp.svc1.testns.example.com.', 'SRV', ok(['_http._tcp.svc1.testns.example.com. 5 IN SRV 0 100 80 svc1.testns.example.com.'], ['svc1.testns.example.com. 5 IN A 1.2.3.4'])],
    ['svc1.testns.example.com.', 'AAAA', nodata],
    ['svc0.testns.example.com.', 'AAAA', nx],
    ['svc0.testns.example.com.', 'A', nx],
    ['svc0.svc-nons.example.com.', 'A', nx],
    ['svc6.testns.example.com.', 'AAAA', ok(['svc6.testns.example.com. 5 IN AAAA 1:2::5'])],
    ['_http._tcp.svc6.testns.example.com.', 'SRV', ok(['_http._tcp.svc6.testns.example.com. 5 IN SRV 0 100 80 svc6.testns.example.com.'], ['svc6.testns.example.com. 5 IN AAAA 1:2::5'])],
    ['svc6.testns.example.com.', 'SRV', ok(['svc6.testns.example.com. 5 IN SRV 0 100 80 svc6.testns.example.com.'], ['svc6.testns.example.com. 5 IN AAAA 1:2::5'])],
    ['testns.example.com.', 'A', nodata],
    ['testns.example.com.', 'SOA', nodata],
    ['svc11.testns.example.com.', 'A', ok(['svc11.testns.example.com. 5 IN A 2.3.4.5'])],
    ['_http._tcp.svc11.testns.example.com.', 'SRV', ok(['_http._tcp.svc11.testns.example.com. 5 IN SRV 0 100 80 svc11.testns.example.com.'], ['svc11.testns.example.com. 5 IN A 2.3.4.5'])],
    ['svc11.testns.example.com.', 'SRV', ok(['svc11.testns.example.com. 5 IN SRV 0 100 80 svc11.testns.example.com.'], ['svc11.testns.example.com. 5 IN A 2.3.4.5'])],
    ['svc12.testns.example.com.', 'A', ok(['svc12.testns.example.com. 5 IN CNAME dummy.hostname.'])],
    ['_http._tcp.svc12.testns.example.com.', 'SRV', ok(['_http._tcp.svc12.testns.example.com. 5 IN SRV 0 100 80 dummy.hostname.'])],
    ['svc12.testns.example.com.', 'SRV', ok(['svc12.testns.example.com. 5 IN SRV 0 100 80 dummy.hostname.'])],
    ['svc-headless.testns.example.com.', 'A', ok(['svc-headless.testns.example.com. 5 IN A 1.2.3.4', 'svc-headless.testns.example.com. 5 IN A 1.2.3.5'])],
    [
      'svc-headless.testns.example.com.',
      'SRV',
      ok(
        ['svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.', 'svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.'],
        ['endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4', 'endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5'],
      ),
    ],
    [
      '_http._tcp.svc-headless.testns.example.com.',
      'SRV',
      ok(
        ['_http._tcp.svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.', '_http._tcp.svc-headless.testns.example.com. 5 IN SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.'],
        ['endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4', 'endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5'],
      ),
    ],
    ['endpoint-svc-0.svc-headless.testns.example.com.', 'SRV', ok(['endpoint-svc-0.svc-headless.testns.example.com. 5 IN SRV 0 100 80 endpoint-svc-0.svc-headless.testns.example.com.'], ['endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4'])],
    ['endpoint-svc-1.svc-headless.testns.example.com.', 'SRV', ok(['endpoint-svc-1.svc-headless.testns.example.com. 5 IN SRV 0 100 80 endpoint-svc-1.svc-headless.testns.example.com.'], ['endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5'])],
    ['endpoint-svc-0.svc-headless.testns.example.com.', 'A', ok(['endpoint-svc-0.svc-headless.testns.example.com. 5 IN A 1.2.3.4'])],
    ['endpoint-svc-1.svc-headless.testns.example.com.', 'A', ok(['endpoint-svc-1.svc-headless.testns.example.com. 5 IN A 1.2.3.5'])],
    // Beyond CoreDNS's table:
    ['endpoint-svc-9.svc-headless.testns.example.com.', 'A', nx],
    ['other.hidden.example.com.', 'A', nx], // outside `namespaces testns`
    ['9.9.9.9.in-addr.arpa.', 'PTR', { ...nx, authority: ['in-addr.arpa. 5 IN SOA ns1.dns.in-addr.arpa. hostmaster.dns.in-addr.arpa. SERIAL 7200 1800 86400 5'] }],
    ['10.0.0.1.in-addr.arpa.', 'PTR', { ...nx, authority: ['in-addr.arpa. 5 IN SOA ns1.dns.in-addr.arpa. hostmaster.dns.in-addr.arpa. SERIAL 7200 1800 86400 5'] }], // a ClusterIP is not external
    ['svc1.testns.example.com.', 'MX', nodata],
    ['noports.testns.example.com.', 'A', ok(['noports.testns.example.com. 5 IN A 8.8.4.4'])],
    ['noports.testns.example.com.', 'SRV', nodata], // exists, but no port to name
    ['a.b.c.svc1.testns.example.com.', 'A', nx],
    ['SVC1.TestNS.example.com.', 'A', ok(['SVC1.TestNS.example.com. 5 IN A 1.2.3.4'])],
  ];
  for (const [name, type, want] of cases) {
    test(`${name} ${type}`, async () => assert.deepEqual(await ask(p, name, type), want));
  }
});

describe('k8s_external: CoreDNS apex_test.go (zone example.com)', () => {
  const p = setup('k8s_external example.com {\nheadless\n}');
  const cases: Array<[string, string, Shape]> = [
    ['example.com.', 'SOA', ok([SOA])],
    ['example.com.', 'NS', ok(['example.com. 5 IN NS ns1.dns.example.com.'], ['ns1.dns.example.com. 5 IN A 127.0.0.1'])],
    ['example.com.', 'SRV', nodata],
    ['dns.example.com.', 'SRV', nodata],
    ['dns.example.com.', 'NS', nodata],
    ['ns1.dns.example.com.', 'SRV', nodata],
    ['ns1.dns.example.com.', 'NS', nodata],
    ['ns1.dns.example.com.', 'AAAA', nodata],
    ['ns1.dns.example.com.', 'A', ok(['ns1.dns.example.com. 5 IN A 127.0.0.1'])],
    // Beyond CoreDNS's table: other names under the apex label do not exist.
    ['ns2.dns.example.com.', 'A', nx],
    ['a.ns1.dns.example.com.', 'A', nx],
  ];
  for (const [name, type, want] of cases) {
    test(`${name} ${type}`, async () => assert.deepEqual(await ask(p, name, type), want));
  }
});

describe('k8s_external: options', () => {
  test('apex and ttl rename the name server and set every TTL', async () => {
    const p = setup('k8s_external example.com {\napex testdns\nttl 60\n}');
    const soa = 'example.com. 60 IN SOA ns1.testdns.example.com. hostmaster.testdns.example.com. SERIAL 7200 1800 86400 60';
    assert.deepEqual(await ask(p, 'example.com.', 'SOA'), ok([soa]));
    assert.deepEqual(await ask(p, 'ns1.testdns.example.com.', 'A'), ok(['ns1.testdns.example.com. 60 IN A 127.0.0.1']));
    assert.deepEqual(await ask(p, 'svc1.testns.example.com.', 'A'), ok(['svc1.testns.example.com. 60 IN A 1.2.3.4']));
    assert.deepEqual(await ask(p, 'ns1.dns.example.com.', 'A'), { rcode: 'NXDOMAIN', answer: [], authority: [soa], additional: [] });
  });

  test('without headless, a headless service has no external name', async () => {
    const p = setup('k8s_external example.com');
    assert.deepEqual(await ask(p, 'svc-headless.testns.example.com.', 'A'), nx);
    assert.deepEqual(await ask(p, 'endpoint-svc-0.svc-headless.testns.example.com.', 'A'), nx);
  });

  test("a load balancer's hostname: CNAME plus the addresses the next plugin finds, in SRV glue too", async () => {
    const p = setup('k8s_external example.com');
    assert.deepEqual(await ask(p, 'svc12.testns.example.com.', 'A', true), ok(['dummy.hostname. 300 IN A 192.0.2.10', 'svc12.testns.example.com. 5 IN CNAME dummy.hostname.']));
    assert.deepEqual(await ask(p, 'svc12.testns.example.com.', 'AAAA', true), ok(['dummy.hostname. 300 IN AAAA 2001:db8::10', 'svc12.testns.example.com. 5 IN CNAME dummy.hostname.']));
    assert.deepEqual(
      await ask(p, 'svc12.testns.example.com.', 'SRV', true),
      ok(['svc12.testns.example.com. 5 IN SRV 0 100 80 dummy.hostname.'], ['dummy.hostname. 300 IN A 192.0.2.10', 'dummy.hostname. 300 IN AAAA 2001:db8::10']),
    );
  });

  test('fallthrough passes name errors on, and only name errors', async () => {
    const p = setup('k8s_external example.com {\nfallthrough\n}');
    assert.equal(await ask(p, 'svc0.testns.example.com.', 'A'), NEXT);
    assert.deepEqual(await ask(p, 'svc1.testns.example.com.', 'AAAA'), nodata);
    const only = setup('k8s_external example.com {\nfallthrough other.example.com\n}');
    assert.deepEqual(await ask(only, 'svc0.testns.example.com.', 'A'), nx);
    assert.equal(await ask(only, 'x.other.example.com.', 'A'), NEXT);
  });

  test('names outside the zones and other classes go to the next plugin', async () => {
    const p = setup('k8s_external example.com');
    assert.equal(await ask(p, 'svc1.testns.example.org.', 'A'), NEXT);
    const req = testRequest('svc1.testns.example.com.', 1, { qclass: 3 });
    assert.equal(await p.serve(req, () => undefined), undefined);
  });
});
