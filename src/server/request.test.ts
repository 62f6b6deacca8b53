import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeMessage, parseQuery } from '../lib/dns/codec.js';
import { DnsClass, Opcode, RRType } from '../lib/dns/types.js';
import { edns, testRequest } from '../../test/util/request.js';

interface MetadataCase {
  what: string;
  /** Set on the original request before derive(). */
  before: Record<string, string>;
  /** Set on the derived request afterwards. */
  after: Record<string, string>;
  original: Record<string, string>;
  derived: Record<string, string>;
}

const cases: MetadataCase[] = [
  { what: 'none set: neither has any', before: {}, after: {}, original: {}, derived: {} },
  { what: 'set before: the derived request starts with a copy', before: { 'kubernetes/namespace': 'demo' }, after: {}, original: { 'kubernetes/namespace': 'demo' }, derived: { 'kubernetes/namespace': 'demo' } },
  {
    what: 'set on the derived one: the original does not see it',
    before: { a: '1' },
    after: { a: '2', b: '3' },
    original: { a: '1' },
    derived: { a: '2', b: '3' },
  },
];

for (const c of cases) {
  test(`DnsRequest metadata: ${c.what}`, () => {
    const req = testRequest('web.demo.svc.cluster.local.', RRType.A);
    for (const [k, v] of Object.entries(c.before)) req.metadata.set(k, v);
    const sub = req.derive('web.demo.svc.cluster.local.', RRType.AAAA);
    for (const [k, v] of Object.entries(c.after)) sub.metadata.set(k, v);
    assert.deepEqual(Object.fromEntries(req.metadata), c.original);
    assert.deepEqual(Object.fromEntries(sub.metadata), c.derived);
  });
}

interface DeriveCase {
  what: string;
  /** The original query. */
  from: { name: string; type: number; rd?: boolean; cd?: boolean; edns?: boolean };
  /** What derive() is asked for. */
  qname: string;
  qtype: number;
  qclass?: number;
  /** Replaces the original's EDNS with one that carries an option. */
  edns?: 'options';
}

const deriveCases: DeriveCase[] = [
  { what: 'autopath candidate, EDNS kept', from: { name: 'web.search.ns1.cluster.local.ap.k8s.io.', type: RRType.A, edns: true }, qname: 'web.ns1.svc.cluster.local.', qtype: RRType.A },
  { what: 'upper case kept as written', from: { name: 'Web.Example.COM.', type: RRType.AAAA }, qname: 'Web.Example.COM.ns1.svc.cluster.local.', qtype: RRType.AAAA },
  { what: 'underscore labels (SRV names)', from: { name: '_http._tcp.web.demo.svc.cluster.local.', type: RRType.SRV, cd: true }, qname: '_http._tcp.web.demo.svc.cluster.local.', qtype: RRType.SRV },
  { what: 'RD clear stays clear', from: { name: 'a.example.', type: RRType.A, rd: false }, qname: 'b.example.', qtype: RRType.A },
  { what: 'another class (rewrite class)', from: { name: 'a.example.', type: RRType.TXT }, qname: 'a.example.', qtype: RRType.TXT, qclass: DnsClass.CH },
  { what: 'no EDNS stays none', from: { name: 'a.example.', type: RRType.A }, qname: 'b.example.', qtype: RRType.A },
  { what: 'EDNS with an option', from: { name: 'a.example.', type: RRType.A }, qname: 'a.example.', qtype: RRType.A, edns: 'options' },
  { what: 'escaped octet: the encoded path', from: { name: 'a.example.', type: RRType.A }, qname: 'a\\.b.example.', qtype: RRType.A },
  { what: 'a star label: the encoded path', from: { name: 'a.example.', type: RRType.A }, qname: '*.example.', qtype: RRType.A },
];

for (const c of deriveCases) {
  test(`DnsRequest.derive: ${c.what}: the bytes encodeMessage makes, the query parseQuery reads from them`, () => {
    const original = testRequest(c.from.name, c.from.type, { rd: c.from.rd ?? true, cd: c.from.cd ?? false, ...(c.from.edns ? { edns: edns() } : {}) });
    const ednsArg = c.edns === 'options' ? edns(4096, { options: [{ code: 65001, data: new Uint8Array([1, 2, 3]) }] }) : original.edns;
    const sub = original.derive(c.qname, c.qtype, ednsArg, c.qclass ?? DnsClass.IN);
    const expected = encodeMessage({
      id: original.id,
      qr: false,
      opcode: Opcode.QUERY,
      aa: false,
      tc: false,
      rd: c.from.rd ?? true,
      ra: false,
      z: false,
      ad: false,
      cd: c.from.cd ?? false,
      rcode: 0,
      questions: [{ name: c.qname, type: c.qtype, class: c.qclass ?? DnsClass.IN }],
      answers: [],
      authority: [],
      additional: [],
      edns: ednsArg,
    });
    assert.equal(sub.raw.toString('hex'), expected.toString('hex'));
    assert.deepEqual(sub.query, parseQuery(sub.raw));
  });
}
