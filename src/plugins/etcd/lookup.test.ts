// CoreDNS's etcd tables (lookup_test.go, cname_test.go, group_test.go, other_test.go,
// multi_test.go) against a real etcd started by the test: the same SkyDNS services written
// with etcdctl, the same questions, the whole expected reply. SOA serials show as SERIAL.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { typeFromName } from '../../lib/dns/rr.js';
import type { Reply } from '../../server/reply.js';
import { edns, testRequest } from '../../../test/util/request.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { replyShape, type ReplyShape } from '../../../test/util/shape.js';
import { startEtcd, type TestEtcd } from '../../../test/util/etcd.js';
import { missing } from '../../../test/util/upstream.js';
import { EtcdPlugin } from './handler.js';
import { pathOf } from './msg.js';
import { parseEtcd } from './setup.js';

type Service = Record<string, string | number | boolean>;

const SERVICES: Array<[string, Service]> = [
  // lookup_test.go
  ['a.server1.dev.region1.skydns.test.', { host: 'dev.server1', port: 8080 }],
  ['a.server1.prod.region1.skydns.test.', { host: '10.0.0.1', port: 8080 }],
  ['b.server1.prod.region1.skydns.test.', { host: '10.0.0.2', port: 8080 }],
  ['b.server6.prod.region1.skydns.test.', { host: '::1', port: 8080 }],
  ['a.txt.server1.prod.region1.skydns.test.', { text: 'sometext' }],
  ['b.txt.server1.prod.region1.skydns.test.', { text: 'moretext' }],
  ['cname.prod.region1.skydns.test.', { host: 'unresolvable.skydns.test' }],
  ['priority.skydns.test.', { host: 'priority.server1', priority: 333, port: 8080 }],
  ['a.sub.region1.skydns.test.', { host: 'sub.server1', port: 0 }],
  ['b.sub.region1.skydns.test.', { host: 'sub.server2', port: 80 }],
  ['c.sub.region1.skydns.test.', { host: '10.0.0.1', port: 8080 }],
  ['a.targetstrip.skydns.test.', { host: '10.0.0.1', port: 8080, targetstrip: 1 }],
  ['b.cname.skydns.test.', { host: 'a.cname.skydns.test' }],
  ['a.cname.skydns.test.', { host: 'b.cname.skydns.test' }],
  ['a.ns.dns.skydns.test.', { host: '10.0.0.2' }],
  ['b.ns.dns.skydns.test.', { host: '10.0.0.3' }],
  ['ns1.c.ns.dns.skydns.test.', { host: '10.0.0.4', targetstrip: 1 }],
  ['ns2.c.ns.dns.skydns.test.', { host: '10.0.0.5', targetstrip: 1 }],
  ['x.skydns_zonea.test.', { host: '10.0.0.2' }],
  ['y.skydns_zonea.test.', { host: '10.0.0.3' }],
  ['x.skydns_zoneb.test.', { host: '10.0.0.2' }],
  ['y.skydns_zoneb.test.', { host: '10.0.0.3' }],
  ['apex.dns.skydns_zoneb.test.', { host: '10.0.0.4' }],
  ['x.skydns_zonec.test.', { host: '10.0.0.2' }],
  ['y.skydns_zonec.test.', { host: '10.0.0.3' }],
  ['a1.apex.dns.skydns_zonec.test.', { host: '10.0.0.4' }],
  ['a2.apex.dns.skydns_zonec.test.', { host: '10.0.0.5' }],
  ['x.skydns_zoned.test.', { host: '10.0.0.2' }],
  ['y.skydns_zoned.test.', { host: '10.0.0.3' }],
  ['a1.apex.dns.skydns_zoned.test.', { host: '10.0.0.4' }],
  ['a2.apex.dns.skydns_zoned.test.', { host: '10.0.0.5' }],
  ['a3.apex.dns.skydns_zoned.test.', { host: '2003::8:1' }],
  ['a4.apex.dns.skydns_zoned.test.', { host: '2003::8:2' }],
  ['1.0.0.10.in-addr.arpa.', { host: 'reverse.example.com' }],
  // cname_test.go (its a.server1.dev.region1 entry is renamed cnamesrv.region1 so both tables fit one etcd)
  ['cnamesrv.region1.skydns.test.', { host: 'cname1.region2.skydns.test' }],
  ['cname1.region2.skydns.test.', { host: 'cname2.region2.skydns.test' }],
  ['cname2.region2.skydns.test.', { host: 'cname3.region2.skydns.test' }],
  ['cname3.region2.skydns.test.', { host: 'cname4.region2.skydns.test' }],
  ['cname4.region2.skydns.test.', { host: 'cname5.region2.skydns.test' }],
  ['cname5.region2.skydns.test.', { host: 'cname6.region2.skydns.test' }],
  ['cname6.region2.skydns.test.', { host: 'endpoint.region2.skydns.test' }],
  ['endpoint.region2.skydns.test.', { host: '10.240.0.1' }],
  ['region2.skydns.test.', { host: 'mainendpoint.region2.skydns.test' }],
  ['cname3.region3.skydns.test.', { host: 'cname2.region3.skydns.test' }],
  ['cname2.region3.skydns.test.', { host: 'cname1.region3.skydns.test' }],
  ['cname1.region3.skydns.test.', { host: 'endpoint.region3.skydns.test' }],
  ['endpoint.region3.skydns.test.', { host: '', text: 'SOME-RECORD-TEXT' }],
  // group_test.go
  ['a.dom.skydns.test.', { host: '127.0.0.1', group: 'g1' }],
  ['b.sub.dom.skydns.test.', { host: '127.0.0.2', group: 'g1' }],
  ['a.dom2.skydns.test.', { host: '127.0.0.1', group: 'g1' }],
  ['b.sub.dom2.skydns.test.', { host: '127.0.0.2', group: '' }],
  ['a.dom1.skydns.test.', { host: '127.0.0.1', group: 'g1' }],
  ['b.sub.dom1.skydns.test.', { host: '127.0.0.2', group: 'g2' }],
  ['a.dom3.skydns.test.', { text: 'foo', group: 'g1' }],
  ['b.sub.dom3.skydns.test.', { text: 'bar', group: 'g1' }],
  // other_test.go
  ['a.mail.skydns.test.', { host: 'mx.skydns.test', priority: 50, mail: true }],
  ['b.mail.skydns.test.', { host: 'mx.miek.nl', priority: 50, mail: true }],
  ['a.mx.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 30, mail: true }],
  ['a.mx2.skydns.test.', { host: 'a.ipaddr.skydns.test', mail: true }],
  ['b.mx2.skydns.test.', { host: 'b.ipaddr.skydns.test', mail: true }],
  ['a.mx3.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 20, mail: true }],
  ['b.mx3.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 30, mail: true }],
  ['a.ipaddr.skydns.test.', { host: '172.16.1.1' }],
  ['b.ipaddr.skydns.test.', { host: '172.16.1.2' }],
  ['a1.txt.skydns.test.', { text: 'abc' }],
  ['a2.txt.skydns.test.', { text: 'abc abc' }],
  ['large400.skydns.test.', { text: '0'.repeat(400) }],
  ['large600.skydns.test.', { text: '0'.repeat(600) }],
  ['http.multiport.http.skydns.test.', { host: '10.11.11.10', port: 80 }],
  ['https.multiport.http.skydns.test.', { host: '10.11.11.10', port: 443 }],
  // multi_test.go
  ['a.server1.dev.region1.miek.nl.', { host: 'dev.server1', port: 8080 }],
  ['a.server1.dev.region1.example.org.', { host: 'dev.server1', port: 8080 }],
];

type Shape = ReplyShape;

const NEXT = 'went to the next plugin';
const soa = (zone: string): string => `${zone} 30 IN SOA ns.dns.${zone} hostmaster.${zone} SERIAL 7200 1800 86400 30`;
const T = 'skydns.test.';
const ok = (answer: string[], additional: string[] = []): Shape => ({ rcode: 'NOERROR', answer, authority: [], additional });
const nodata = (zone = T): Shape => ({ rcode: 'NOERROR', answer: [], authority: [soa(zone)], additional: [] });
const nx = (zone = T): Shape => ({ rcode: 'NXDOMAIN', answer: [], authority: [soa(zone)], additional: [] });
const r300 = (name: string, rest: string): string => `${name} 300 IN ${rest}`;

const CNAME_GLUE = [
  r300('cname1.region2.skydns.test.', 'CNAME cname2.region2.skydns.test.'),
  r300('cname2.region2.skydns.test.', 'CNAME cname3.region2.skydns.test.'),
  r300('cname3.region2.skydns.test.', 'CNAME cname4.region2.skydns.test.'),
  r300('cname4.region2.skydns.test.', 'CNAME cname5.region2.skydns.test.'),
  r300('cname5.region2.skydns.test.', 'CNAME cname6.region2.skydns.test.'),
  r300('cname6.region2.skydns.test.', 'CNAME endpoint.region2.skydns.test.'),
  r300('endpoint.region2.skydns.test.', 'A 10.240.0.1'),
];

const LOOKUP: Array<[string, string, Shape | typeof NEXT]> = [
  // lookup_test.go
  ['a.server1.dev.region1.skydns.test.', 'SRV', ok([r300('a.server1.dev.region1.skydns.test.', 'SRV 10 100 8080 dev.server1.')])],
  ['a.SERVer1.dEv.region1.skydns.tEst.', 'SRV', ok([r300('a.SERVer1.dEv.region1.skydns.tEst.', 'SRV 10 100 8080 dev.server1.')])],
  ['doesnotexist.skydns.test.', 'A', nx()],
  ['a.server1.prod.region1.skydns.test.', 'A', ok([r300('a.server1.prod.region1.skydns.test.', 'A 10.0.0.1')])],
  ['a.server1.prod.region1.skydns.test.', 'SRV', ok([r300('a.server1.prod.region1.skydns.test.', 'SRV 10 100 8080 a.server1.prod.region1.skydns.test.')], [r300('a.server1.prod.region1.skydns.test.', 'A 10.0.0.1')])],
  ['b.server6.prod.region1.skydns.test.', 'AAAA', ok([r300('b.server6.prod.region1.skydns.test.', 'AAAA ::1')])],
  ['server1.prod.region1.skydns.test.', 'A', ok([r300('server1.prod.region1.skydns.test.', 'A 10.0.0.1'), r300('server1.prod.region1.skydns.test.', 'A 10.0.0.2')])],
  ['priority.skydns.test.', 'SRV', ok([r300('priority.skydns.test.', 'SRV 333 100 8080 priority.server1.')])],
  [
    'sub.region1.skydns.test.',
    'SRV',
    ok(['SRV 10 33 0 sub.server1.', 'SRV 10 33 80 sub.server2.', 'SRV 10 33 8080 c.sub.region1.skydns.test.'].map((x) => r300('sub.region1.skydns.test.', x)), [r300('c.sub.region1.skydns.test.', 'A 10.0.0.1')]),
  ],
  ['targetstrip.skydns.test.', 'SRV', ok([r300('targetstrip.skydns.test.', 'SRV 10 100 8080 targetstrip.skydns.test.')], [r300('targetstrip.skydns.test.', 'A 10.0.0.1')])],
  ['cname.prod.region1.skydns.test.', 'A', nodata()],
  ['txt.server1.prod.region1.skydns.test.', 'TXT', ok([r300('txt.server1.prod.region1.skydns.test.', 'TXT "moretext"'), r300('txt.server1.prod.region1.skydns.test.', 'TXT "sometext"')])],
  ['a.cname.skydns.test.', 'A', nodata()],
  ['a.server1.dev.region1.skydns.test.', 'TXT', nodata()],
  ['a.server1.dev.region1.skydns.test.', 'HINFO', nodata()],
  ['a.server1.nonexistent.region1.skydns.test.', 'HINFO', nx()],
  ['skydns.test.', 'SOA', ok([soa(T)])],
  [
    'skydns.test.',
    'NS',
    ok(
      ['NS a.ns.dns.skydns.test.', 'NS b.ns.dns.skydns.test.', 'NS c.ns.dns.skydns.test.'].map((x) => r300(T, x)),
      [r300('a.ns.dns.skydns.test.', 'A 10.0.0.2'), r300('b.ns.dns.skydns.test.', 'A 10.0.0.3'), r300('c.ns.dns.skydns.test.', 'A 10.0.0.4'), r300('c.ns.dns.skydns.test.', 'A 10.0.0.5')],
    ),
  ],
  ['a.skydns.test.', 'NS', nx()],
  ['ns.dns.skydns.test.', 'A', ok(['A 10.0.0.2', 'A 10.0.0.3', 'A 10.0.0.4', 'A 10.0.0.5'].map((x) => r300('ns.dns.skydns.test.', x)))],
  ['skydns_extra.test.', 'SOA', ok([soa('skydns_extra.test.')])],
  ['skydns_zonea.test.', 'A', ok([r300('skydns_zonea.test.', 'A 10.0.0.2'), r300('skydns_zonea.test.', 'A 10.0.0.3')])],
  ['skydns_zoneb.test.', 'A', ok([r300('skydns_zoneb.test.', 'A 10.0.0.4')])],
  ['skydns_zonec.test.', 'A', ok([r300('skydns_zonec.test.', 'A 10.0.0.4'), r300('skydns_zonec.test.', 'A 10.0.0.5')])],
  ['skydns_zoned.test.', 'A', ok([r300('skydns_zoned.test.', 'A 10.0.0.4'), r300('skydns_zoned.test.', 'A 10.0.0.5')])],
  ['skydns_zoned.test.', 'AAAA', ok([r300('skydns_zoned.test.', 'AAAA 2003::8:1'), r300('skydns_zoned.test.', 'AAAA 2003::8:2')])],
  ['1.0.0.10.in-addr.arpa.', 'PTR', ok([r300('1.0.0.10.in-addr.arpa.', 'PTR reverse.example.com.')])],
  // cname_test.go
  [
    'cnamesrv.region1.skydns.test.',
    'SRV',
    ok(
      [r300('cnamesrv.region1.skydns.test.', 'SRV 10 100 0 cname1.region2.skydns.test.')],
      CNAME_GLUE,
    ),
  ],
  ['region2.skydns.test.', 'CNAME', ok([r300('region2.skydns.test.', 'CNAME mainendpoint.region2.skydns.test.')])],
  ['endpoint.region3.skydns.test.', 'CNAME', nodata()],
  [
    'cname3.region3.skydns.test.',
    'TXT',
    ok([
      r300('cname1.region3.skydns.test.', 'CNAME endpoint.region3.skydns.test.'),
      r300('cname2.region3.skydns.test.', 'CNAME cname1.region3.skydns.test.'),
      r300('cname3.region3.skydns.test.', 'CNAME cname2.region3.skydns.test.'),
      r300('endpoint.region3.skydns.test.', 'TXT "SOME-RECORD-TEXT"'),
    ]),
  ],
  // group_test.go
  ['dom.skydns.test.', 'A', ok([r300('dom.skydns.test.', 'A 127.0.0.1'), r300('dom.skydns.test.', 'A 127.0.0.2')])],
  ['dom2.skydns.test.', 'A', ok([r300('dom2.skydns.test.', 'A 127.0.0.1'), r300('dom2.skydns.test.', 'A 127.0.0.2')])],
  ['dom1.skydns.test.', 'A', ok([r300('dom1.skydns.test.', 'A 127.0.0.1')])],
  ['dom3.skydns.test.', 'TXT', ok([r300('dom3.skydns.test.', 'TXT "bar"'), r300('dom3.skydns.test.', 'TXT "foo"')])],
  // other_test.go
  ['a.server1.dev.region1.skydns.test.', 'MX', nodata()],
  ['a.mail.skydns.test.', 'MX', ok([r300('a.mail.skydns.test.', 'MX 50 mx.skydns.test.')], [r300('a.ipaddr.skydns.test.', 'A 172.16.1.1'), r300('mx.skydns.test.', 'CNAME a.ipaddr.skydns.test.')])],
  ['mx2.skydns.test.', 'MX', ok([r300('mx2.skydns.test.', 'MX 10 a.ipaddr.skydns.test.'), r300('mx2.skydns.test.', 'MX 10 b.ipaddr.skydns.test.')], [r300('a.ipaddr.skydns.test.', 'A 172.16.1.1'), r300('b.ipaddr.skydns.test.', 'A 172.16.1.2')])],
  ['mx3.skydns.test.', 'MX', ok([r300('mx3.skydns.test.', 'MX 20 a.ipaddr.skydns.test.'), r300('mx3.skydns.test.', 'MX 30 a.ipaddr.skydns.test.')], [r300('a.ipaddr.skydns.test.', 'A 172.16.1.1')])],
  ['a1.txt.skydns.test.', 'TXT', ok([r300('a1.txt.skydns.test.', 'TXT "abc"')])],
  ['a2.txt.skydns.test.', 'TXT', ok([r300('a2.txt.skydns.test.', 'TXT "abc abc"')])],
  ['large400.skydns.test.', 'TXT', ok([r300('large400.skydns.test.', `TXT "${'0'.repeat(255)}" "${'0'.repeat(145)}"`)])],
  ['multiport.http.skydns.test.', 'A', ok([r300('multiport.http.skydns.test.', 'A 10.11.11.10')])],
  // multi_test.go (zones skydns.test and miek.nl; example.org is not ours)
  ['a.server1.dev.region1.miek.nl.', 'SRV', ok([r300('a.server1.dev.region1.miek.nl.', 'SRV 10 100 8080 dev.server1.')])],
  ['a.server1.dev.region1.example.org.', 'SRV', NEXT],
];

// Wildcards (lookup_test.go): the services below region1, and those below prod.
const REGION1 = [
  ['SRV 10 X 0 sub.server1.', 'SRV 10 X 80 sub.server2.', 'SRV 10 X 8080 c.sub.region1.skydns.test.', 'SRV 10 X 8080 dev.server1.'],
  ['SRV 10 X 0 unresolvable.skydns.test.', 'SRV 10 X 8080 a.server1.prod.region1.skydns.test.', 'SRV 10 X 8080 b.server1.prod.region1.skydns.test.', 'SRV 10 X 8080 b.server6.prod.region1.skydns.test.'],
];
const PROD_GLUE = [r300('a.server1.prod.region1.skydns.test.', 'A 10.0.0.1'), r300('b.server1.prod.region1.skydns.test.', 'A 10.0.0.2'), r300('b.server6.prod.region1.skydns.test.', 'AAAA ::1')];


async function ask(p: EtcdPlugin, name: string, type: string): Promise<Shape | typeof NEXT> {
  const req = testRequest(name, typeFromName(type) as number, { edns: edns(4096) });
  const reply = (await p.serve(req, () => undefined)) as Reply | undefined;
  if (reply === undefined) return NEXT;
  const { aa, ...shape } = replyShape(req, reply);
  assert.equal(aa, true, 'authoritative');
  return shape;
}

describe('etcd: CoreDNS lookup, cname, group, other and multi tables against a real etcd', { skip: missing('etcd', 'etcd-server') }, () => {
  let etcd: TestEtcd;
  let p: EtcdPlugin;
  before(async () => {
    etcd = await startEtcd();
    for (const [name, service] of SERVICES) await etcd.put(pathOf(name, 'skydns'), JSON.stringify(service));
    const zones = 'skydns.test skydns_extra.test skydns_zonea.test skydns_zoneb.test skydns_zonec.test skydns_zoned.test in-addr.arpa miek.nl';
    p = EtcdPlugin.connect(parseEtcd(directiveIn(`etcd ${zones} {\n path /skydns\n endpoint ${etcd.endpoint}\n}`), ['.'], '/Corefile'));
  });
  after(async () => {
    p?.stop();
    await etcd?.stop();
  });

  for (const [name, type, want] of LOOKUP) {
    test(`${name} ${type}`, async () => assert.deepEqual(await ask(p, name, type), want));
  }

  test('*.region1.skydns.test. SRV: every service below region1 (9 here, so weight 11)', async () => {
    const srv = [...REGION1[0]!, ...REGION1[1]!, 'SRV 10 X 0 cname1.region2.skydns.test.'].map((x) => r300('*.region1.skydns.test.', x.replace('X', '11')));
    const glue = [...PROD_GLUE, r300('c.sub.region1.skydns.test.', 'A 10.0.0.1'), ...CNAME_GLUE];
    assert.deepEqual(await ask(p, '*.region1.skydns.test.', 'SRV'), ok(srv.sort(), glue.sort()));
  });

  for (const wildcard of ['prod.*.skydns.test.', 'prod.any.skydns.test.']) {
    test(`${wildcard} SRV: the wildcard stands for one label`, async () => {
      const want = REGION1[1]!.map((x) => r300(wildcard, x.replace('X', '25'))).sort();
      assert.deepEqual(await ask(p, wildcard, 'SRV'), ok(want, [...PROD_GLUE].sort()));
    });
  }
});
