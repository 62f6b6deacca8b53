import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as R from './rr.js';
import type { ResourceRecord } from './types.js';

describe('record constructors and rrToString', () => {
  const cases: Array<{ rr: ResourceRecord; want: ResourceRecord; text: string }> = [
    {
      rr: R.a('web.ns.svc.cluster.local.', 5, '10.0.0.1'),
      want: { name: 'web.ns.svc.cluster.local.', type: 1, class: 1, ttl: 5, data: { address: '10.0.0.1' } },
      text: 'web.ns.svc.cluster.local.\t5\tIN\tA\t10.0.0.1',
    },
    {
      rr: R.aaaa('web.example.', 30, 'fd00::1'),
      want: { name: 'web.example.', type: 28, class: 1, ttl: 30, data: { address: 'fd00::1' } },
      text: 'web.example.\t30\tIN\tAAAA\tfd00::1',
    },
    {
      rr: R.cname('www.example.', 30, 'web.example.'),
      want: { name: 'www.example.', type: 5, class: 1, ttl: 30, data: { target: 'web.example.' } },
      text: 'www.example.\t30\tIN\tCNAME\tweb.example.',
    },
    {
      rr: R.ns('example.', 30, 'ns.example.'),
      want: { name: 'example.', type: 2, class: 1, ttl: 30, data: { target: 'ns.example.' } },
      text: 'example.\t30\tIN\tNS\tns.example.',
    },
    {
      rr: R.ptr('1.0.0.10.in-addr.arpa.', 30, 'web.example.'),
      want: { name: '1.0.0.10.in-addr.arpa.', type: 12, class: 1, ttl: 30, data: { target: 'web.example.' } },
      text: '1.0.0.10.in-addr.arpa.\t30\tIN\tPTR\tweb.example.',
    },
    {
      rr: R.dname('old.example.', 30, 'new.example.'),
      want: { name: 'old.example.', type: 39, class: 1, ttl: 30, data: { target: 'new.example.' } },
      text: 'old.example.\t30\tIN\tDNAME\tnew.example.',
    },
    {
      rr: R.mx('example.', 30, 10, 'mx.example.'),
      want: { name: 'example.', type: 15, class: 1, ttl: 30, data: { preference: 10, exchange: 'mx.example.' } },
      text: 'example.\t30\tIN\tMX\t10 mx.example.',
    },
    {
      rr: R.txt('t.example.', 30, ['plain', 'say "hi"', 'back\\slash', '\x00\xff', '']),
      want: { name: 't.example.', type: 16, class: 1, ttl: 30, data: { strings: ['plain', 'say "hi"', 'back\\slash', '\x00\xff', ''] } },
      text: 't.example.\t30\tIN\tTXT\t"plain" "say \\"hi\\"" "back\\\\slash" "\\000\\255" ""',
    },
    {
      rr: R.srv('_dns._udp.kube-dns.kube-system.svc.cluster.local.', 30, 0, 100, 53, 'kube-dns.kube-system.svc.cluster.local.'),
      want: {
        name: '_dns._udp.kube-dns.kube-system.svc.cluster.local.',
        type: 33,
        class: 1,
        ttl: 30,
        data: { priority: 0, weight: 100, port: 53, target: 'kube-dns.kube-system.svc.cluster.local.' },
      },
      text: '_dns._udp.kube-dns.kube-system.svc.cluster.local.\t30\tIN\tSRV\t0 100 53 kube-dns.kube-system.svc.cluster.local.',
    },
    {
      rr: R.soa('cluster.local.', 5, { mname: 'ns.dns.cluster.local.', rname: 'hostmaster.cluster.local.', serial: 1700000000, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 }),
      want: {
        name: 'cluster.local.',
        type: 6,
        class: 1,
        ttl: 5,
        data: { mname: 'ns.dns.cluster.local.', rname: 'hostmaster.cluster.local.', serial: 1700000000, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 },
      },
      text: 'cluster.local.\t5\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. 1700000000 7200 1800 86400 5',
    },
    {
      rr: R.hinfo('h.example.', 30, 'x86_64', 'Linux'),
      want: { name: 'h.example.', type: 13, class: 1, ttl: 30, data: { cpu: 'x86_64', os: 'Linux' } },
      text: 'h.example.\t30\tIN\tHINFO\t"x86_64" "Linux"',
    },
    {
      rr: R.opaque('x.example.', 65280, 30, Uint8Array.from([0x0a, 0x00, 0xff])),
      want: { name: 'x.example.', type: 65280, class: 1, ttl: 30, data: { raw: Uint8Array.from([0x0a, 0x00, 0xff]) } },
      text: 'x.example.\t30\tIN\tTYPE65280\t\\# 3 0A00FF',
    },
    {
      rr: R.opaque('x.example.', 99, 0, new Uint8Array(0), 3),
      want: { name: 'x.example.', type: 99, class: 3, ttl: 0, data: { raw: new Uint8Array(0) } },
      text: 'x.example.\t0\tCH\tSPF\t\\# 0',
    },
  ];
  for (const c of cases) {
    it(c.text.split('\t')[3], () => {
      assert.deepEqual(c.rr, c.want);
      assert.equal(R.rrToString(c.rr), c.text);
    });
  }
});

describe('mnemonics', () => {
  const types: Array<[number, string]> = [
    [1, 'A'],
    [28, 'AAAA'],
    [33, 'SRV'],
    [41, 'OPT'],
    [65, 'HTTPS'],
    [255, 'ANY'],
    [257, 'CAA'],
    [65280, 'TYPE65280'],
    [0, 'TYPE0'],
  ];
  for (const [n, s] of types) {
    it(`type ${n} ⇄ ${s}`, () => {
      assert.equal(R.typeName(n), s);
      assert.equal(R.typeFromName(s), n);
      assert.equal(R.typeFromName(s.toLowerCase()), n);
    });
  }
  const badTypes = ['NOPE', 'TYPE', 'TYPE65536', 'TYPE01', 'TYPE-1'];
  for (const s of badTypes) it(`typeFromName(${s}) is undefined`, () => assert.equal(R.typeFromName(s), undefined));

  const rcodes: Array<[number, string]> = [
    [0, 'NOERROR'],
    [1, 'FORMERR'],
    [2, 'SERVFAIL'],
    [3, 'NXDOMAIN'],
    [5, 'REFUSED'],
    [16, 'BADVERS'],
    [23, 'BADCOOKIE'],
    [12, 'RCODE12'],
  ];
  for (const [n, s] of rcodes) {
    it(`rcode ${n} ⇄ ${s}`, () => {
      assert.equal(R.rcodeName(n), s);
      assert.equal(R.rcodeFromName(s), n);
    });
  }
  const classes: Array<[number, string]> = [
    [1, 'IN'],
    [3, 'CH'],
    [4, 'HS'],
    [254, 'NONE'],
    [255, 'ANY'],
    [42, 'CLASS42'],
  ];
  for (const [n, s] of classes) {
    it(`class ${n} ⇄ ${s}`, () => {
      assert.equal(R.className(n), s);
      assert.equal(R.classFromName(s), n);
    });
  }
});
