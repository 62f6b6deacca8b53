import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  copyQuestion,
  decodeMessage,
  decrementTtls,
  DnsFormatError,
  encodeMessage,
  findTtlOffsets,
  parseQuery,
  patchId,
  readTtls,
  setTtls,
} from './codec.js';
import * as R from './rr.js';
import type { Bytes } from '../../../test/util/dnstestkit.js';
import { ascii, header, hex, labels, message, opt, question, rr, u16, u32, wire, wname } from '../../../test/util/dnstestkit.js';
import type { Edns, Message, RData, ResourceRecord } from './types.js';
import { RCode, RRType } from './types.js';

const QR_AA_RD = 0x8500;

interface RdataCase {
  title: string;
  /** The record as it sits on the wire, uncompressed. */
  record: Bytes;
  want: ResourceRecord;
}

const rdataCases: RdataCase[] = [
  {
    title: 'A',
    record: rr('a.example.', 1, 1, 300, [10, 0, 0, 1]),
    want: { name: 'a.example.', type: 1, class: 1, ttl: 300, data: { address: '10.0.0.1' } },
  },
  {
    title: 'AAAA',
    record: rr('a.example.', 28, 1, 60, hex('20010db8000000000000000000000001')),
    want: { name: 'a.example.', type: 28, class: 1, ttl: 60, data: { address: '2001:db8::1' } },
  },
  {
    title: 'AAAA IPv4-mapped',
    record: rr('a.example.', 28, 1, 60, hex('00000000000000000000ffff0a000001')),
    want: { name: 'a.example.', type: 28, class: 1, ttl: 60, data: { address: '::ffff:10.0.0.1' } },
  },
  {
    title: 'AAAA all zeros',
    record: rr('a.example.', 28, 1, 60, new Array(16).fill(0)),
    want: { name: 'a.example.', type: 28, class: 1, ttl: 60, data: { address: '::' } },
  },
  {
    title: 'CNAME',
    record: rr('www.example.', 5, 1, 30, wname('web.example.')),
    want: { name: 'www.example.', type: 5, class: 1, ttl: 30, data: { target: 'web.example.' } },
  },
  {
    title: 'NS',
    record: rr('example.', 2, 1, 3600, wname('ns1.example.')),
    want: { name: 'example.', type: 2, class: 1, ttl: 3600, data: { target: 'ns1.example.' } },
  },
  {
    title: 'PTR',
    record: rr('1.0.0.10.in-addr.arpa.', 12, 1, 5, wname('host.ns.svc.cluster.local.')),
    want: { name: '1.0.0.10.in-addr.arpa.', type: 12, class: 1, ttl: 5, data: { target: 'host.ns.svc.cluster.local.' } },
  },
  {
    title: 'DNAME',
    record: rr('old.example.', 39, 1, 30, wname('new.example.')),
    want: { name: 'old.example.', type: 39, class: 1, ttl: 30, data: { target: 'new.example.' } },
  },
  {
    title: 'SOA',
    record: rr('example.', 6, 1, 30, [...wname('ns.dns.example.'), ...wname('hostmaster.example.'), ...u32(0xffffffff), ...u32(7200), ...u32(1800), ...u32(86400), ...u32(5)]),
    want: {
      name: 'example.',
      type: 6,
      class: 1,
      ttl: 30,
      data: { mname: 'ns.dns.example.', rname: 'hostmaster.example.', serial: 0xffffffff, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 },
    },
  },
  {
    title: 'MX',
    record: rr('example.', 15, 1, 30, [...u16(10), ...wname('mail.example.')]),
    want: { name: 'example.', type: 15, class: 1, ttl: 30, data: { preference: 10, exchange: 'mail.example.' } },
  },
  {
    title: 'TXT two strings',
    record: rr('t.example.', 16, 1, 30, [5, ...ascii('hello'), 5, ...ascii('world')]),
    want: { name: 't.example.', type: 16, class: 1, ttl: 30, data: { strings: ['hello', 'world'] } },
  },
  {
    title: 'TXT binary bytes',
    record: rr('t.example.', 16, 1, 30, [4, 0x00, 0xff, 0x22, 0x5c, 0]),
    want: { name: 't.example.', type: 16, class: 1, ttl: 30, data: { strings: ['\x00\xff"\\', ''] } },
  },
  {
    title: 'TXT without strings',
    record: rr('t.example.', 16, 1, 30, []),
    want: { name: 't.example.', type: 16, class: 1, ttl: 30, data: { strings: [] } },
  },
  {
    title: 'HINFO',
    record: rr('h.example.', 13, 1, 30, [3, ...ascii('x86'), 5, ...ascii('Linux')]),
    want: { name: 'h.example.', type: 13, class: 1, ttl: 30, data: { cpu: 'x86', os: 'Linux' } },
  },
  {
    title: 'SRV',
    record: rr('_dns._udp.kube-dns.kube-system.svc.cluster.local.', 33, 1, 30, [...u16(0), ...u16(100), ...u16(53), ...wname('kube-dns.kube-system.svc.cluster.local.')]),
    want: {
      name: '_dns._udp.kube-dns.kube-system.svc.cluster.local.',
      type: 33,
      class: 1,
      ttl: 30,
      data: { priority: 0, weight: 100, port: 53, target: 'kube-dns.kube-system.svc.cluster.local.' },
    },
  },
  {
    title: 'unknown type 65280 as opaque',
    record: rr('x.example.', 65280, 1, 30, [1, 2, 3]),
    want: { name: 'x.example.', type: 65280, class: 1, ttl: 30, data: { raw: Uint8Array.from([1, 2, 3]) } },
  },
  {
    title: 'DS as opaque',
    record: rr('example.', 43, 1, 30, hex('e13d 08 02 0011223344556677')),
    want: { name: 'example.', type: 43, class: 1, ttl: 30, data: { raw: Uint8Array.from(hex('e13d 08 02 0011223344556677')) } },
  },
  {
    title: 'CAA as opaque, with a name-looking payload that must not be touched',
    record: rr('example.', 257, 1, 30, [0, 5, ...ascii('issue'), ...wname('ca.example.')]),
    want: { name: 'example.', type: 257, class: 1, ttl: 30, data: { raw: Uint8Array.from([0, 5, ...ascii('issue'), ...wname('ca.example.')]) } },
  },
  {
    title: 'opaque with empty RDATA',
    record: rr('x.example.', 99, 1, 30, []),
    want: { name: 'x.example.', type: 99, class: 1, ttl: 30, data: { raw: new Uint8Array(0) } },
  },
  {
    title: 'A with class ANY and no RDATA (dynamic update "delete RRset")',
    record: rr('a.example.', 1, 255, 0, []),
    want: { name: 'a.example.', type: 1, class: 255, ttl: 0, data: { raw: new Uint8Array(0) } },
  },
  {
    title: 'CHAOS TXT',
    record: rr('version.bind.', 16, 3, 0, [4, ...ascii('kdns')]),
    want: { name: 'version.bind.', type: 16, class: 3, ttl: 0, data: { strings: ['kdns'] } },
  },
  {
    title: 'owner with bytes that need escapes, and upper case',
    record: rr(labels([0x2e], [0x5c], [0x20], [0xff, 0x00], ascii('UP')), 1, 1, 0xffffffff, [1, 2, 3, 4]),
    want: { name: '\\..\\\\.\\032.\\255\\000.UP.', type: 1, class: 1, ttl: 0xffffffff, data: { address: '1.2.3.4' } },
  },
];

function inAnswer(record: Bytes): Uint8Array {
  return wire(header({ flags: QR_AA_RD, qd: 1, an: 1 }), question('example.', 255), record);
}

describe('RDATA round trips', () => {
  for (const c of rdataCases) {
    it(`${c.title}: decode, and re-encode byte for byte`, () => {
      const bytes = inAnswer(c.record);
      const msg = decodeMessage(bytes);
      assert.deepEqual(msg.answers, [c.want]);
      assert.deepEqual(encodeMessage(msg, { compress: false }), Buffer.from(bytes));
    });
    it(`${c.title}: encode, then decode to the same record`, () => {
      const msg = message({ questions: [{ name: 'example.', type: 255, class: 1 }], answers: [c.want] });
      assert.deepEqual(decodeMessage(encodeMessage(msg)), msg);
    });
  }
});

describe('header and sections round trip', () => {
  const full = (over: Partial<Message>): Message =>
    message({
      questions: [{ name: 'q.example.', type: 1, class: 1 }],
      answers: [R.a('q.example.', 30, '10.0.0.1')],
      ...over,
    });
  const cases: Array<{ title: string; msg: Message; flags: number }> = [
    { title: 'every flag bit set', msg: full({ qr: true, opcode: 2, aa: true, tc: true, rd: true, ra: true, z: true, ad: true, cd: true, rcode: 5 }), flags: 0x97f5 },
    { title: 'a plain query', msg: full({ qr: false, rd: true, answers: [] }), flags: 0x0100 },
    { title: 'NOTIFY', msg: full({ qr: false, opcode: 4, aa: true, rd: false }), flags: 0x2400 },
    {
      title: 'all sections',
      msg: full({
        rcode: RCode.NXDOMAIN,
        authority: [R.soa('example.', 30, { mname: 'ns.example.', rname: 'h.example.', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 })],
        additional: [R.aaaa('ns.example.', 30, 'fd00::53')],
      }),
      flags: 0x8103,
    },
    {
      title: 'two questions',
      msg: full({ questions: [{ name: 'a.example.', type: 1, class: 1 }, { name: 'b.example.', type: 28, class: 1 }] }),
      flags: 0x8100,
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const bytes = encodeMessage(c.msg);
      assert.equal(bytes.readUInt16BE(2), c.flags);
      assert.deepEqual(decodeMessage(bytes), c.msg);
      assert.deepEqual(encodeMessage(decodeMessage(bytes)), bytes);
    });
  }
});

describe('name escapes', () => {
  // [label bytes, presentation name]
  const decodeCases: Array<[Bytes[], string]> = [
    [[ascii('a.b'), ascii('c')], 'a\\.b.c.'],
    [[ascii('back\\slash')], 'back\\\\slash.'],
    [[ascii('sp ace')], 'sp\\032ace.'],
    [[[0x00, 0x7f, 0x80, 0xff]], '\\000\\127\\128\\255.'],
    [[ascii('"quote";(x)@$')], '"quote";(x)@$.'], // printable: literal, one spelling per byte
    [[ascii('MiXeD')], 'MiXeD.'],
    [[], '.'],
  ];
  for (const [ls, name] of decodeCases) {
    it(`decodes to ${name}`, () => {
      const msg = decodeMessage(wire(header({ qd: 1 }), question(labels(...ls), 1)));
      assert.equal(msg.questions[0].name, name);
    });
  }
  // [presentation as a user may write it, wire]
  const encodeCases: Array<[string, Bytes]> = [
    ['a\\.b.c.', labels(ascii('a.b'), ascii('c'))],
    ['\\065\\066.', labels(ascii('AB'))],
    ['\\a\\b.', labels(ascii('ab'))],
    ['x y.', labels(ascii('x y'))],
    ['\\000.', labels([0])],
    ['rel.name', labels(ascii('rel'), ascii('name'))],
    ['', [0]],
    ['a\\\\.', labels(ascii('a\\'))],
  ];
  for (const [name, want] of encodeCases) {
    it(`encodes ${JSON.stringify(name)}`, () => {
      const bytes = encodeMessage(message({ questions: [{ name, type: 1, class: 1 }] }));
      assert.deepEqual(Array.from(bytes.subarray(12, bytes.length - 4)), want);
    });
  }
  const invalid: Array<[string, RegExp]> = [
    ['a..b.', /empty label/],
    ['.a.', /empty label/],
    [`${'x'.repeat(64)}.`, /63/],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}.`, /255/],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.d\\0${'e'.repeat(60)}.`, /escape|255/],
    ['caf\u00e9.', /character 233/],
    ['a\\300.', /DDD/],
  ];
  for (const [name, why] of invalid) {
    it(`refuses to encode ${JSON.stringify(name).slice(0, 30)}`, () => {
      assert.throws(() => encodeMessage(message({ questions: [{ name, type: 1, class: 1 }] })), why);
    });
  }
});

describe('name compression', () => {
  const q = (name: string, type = 1) => [{ name, type, class: 1 }];
  const cases: Array<{ title: string; msg: Message; compressed: number; plain: number }> = [
    {
      title: 'answer owner points at the question',
      msg: message({ questions: q('foo.default.svc.cluster.local.'), answers: [R.a('foo.default.svc.cluster.local.', 5, '10.0.0.1')] }),
      compressed: 63,
      plain: 92,
    },
    {
      title: 'CNAME target compressed, and the next owner points into it',
      msg: message({
        questions: q('www.example.com.'),
        answers: [R.cname('www.example.com.', 5, 'web.example.com.'), R.a('web.example.com.', 5, '10.0.0.1')],
      }),
      compressed: 67,
      plain: 108,
    },
    {
      title: 'SRV target never compressed (RFC 2782), nor pointed into',
      msg: message({
        questions: q('_http._tcp.svc.example.', 33),
        answers: [R.srv('_http._tcp.svc.example.', 5, 0, 10, 80, 'web.svc.example.')],
        additional: [R.a('web.svc.example.', 5, '10.0.0.1')],
      }),
      compressed: 95,
      plain: 128,
    },
    {
      title: 'MX exchange compressed',
      msg: message({ questions: q('example.com.', 15), answers: [R.mx('example.com.', 5, 10, 'mail.example.com.')] }),
      compressed: 50,
      plain: 72,
    },
    {
      title: 'DNAME target never compressed (RFC 6672 §2.1)',
      msg: message({ questions: q('a.example.com.', 39), answers: [R.dname('example.com.', 5, 'x.example.com.')] }),
      compressed: 58,
      plain: 69,
    },
    {
      title: 'SOA names compressed',
      msg: message({
        questions: q('x.example.com.'),
        authority: [R.soa('example.com.', 5, { mname: 'ns.example.com.', rname: 'admin.example.com.', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 1 })],
      }),
      compressed: 76,
      plain: 109,
    },
    {
      title: 'suffixes match case-insensitively',
      msg: message({ questions: q('WWW.Example.COM.'), answers: [R.a('www.example.com.', 5, '10.0.0.1')] }),
      compressed: 49,
      plain: 64,
    },
    {
      title: 'names first written past offset 0x3FFF are not pointed to',
      msg: message({
        questions: q('q.'),
        answers: [R.opaque('a.', 65280, 5, new Uint8Array(16384)), R.a('late.example.', 5, '10.0.0.1'), R.a('late.example.', 5, '10.0.0.2')],
      }),
      compressed: 16472, // with pointers it would be 16460
      plain: 16472,
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const compressed = encodeMessage(c.msg);
      const plain = encodeMessage(c.msg, { compress: false });
      assert.equal(compressed.length, c.compressed);
      assert.equal(plain.length, c.plain);
      assert.deepEqual(decodeMessage(plain), c.msg);
    });
  }
  it('a pointer carries the case of the first occurrence', () => {
    const msg = message({ questions: q('Foo.com.'), answers: [R.a('foo.com.', 5, '10.0.0.1')] });
    assert.equal(decodeMessage(encodeMessage(msg)).answers[0].name, 'Foo.com.');
    assert.equal(decodeMessage(encodeMessage(msg, { compress: false })).answers[0].name, 'foo.com.');
  });
  const exactRows: Array<{ title: string; exactCase: boolean; names: string[]; size: number }> = [
    // The glue of `_x._tcp.WEB.demo.Cluster.local.`: its own spelling, its zone still a pointer.
    { title: 'exactCase: each name keeps its own spelling, sharing only identical suffixes', exactCase: true, names: ['web.demo.Cluster.local.', 'web.demo.Cluster.local.'], size: 84 },
    { title: 'by default a name takes the spelling of the first occurrence', exactCase: false, names: ['WEB.demo.Cluster.local.', 'WEB.demo.Cluster.local.'], size: 80 },
  ];
  for (const row of exactRows) {
    it(row.title, () => {
      const msg = message({ questions: q('_x._tcp.WEB.demo.Cluster.local.'), answers: [R.a('web.demo.Cluster.local.', 5, '10.0.0.1'), R.a('web.demo.Cluster.local.', 5, '10.0.0.2')] });
      const bytes = encodeMessage(msg, { exactCase: row.exactCase });
      assert.deepEqual(decodeMessage(bytes).answers.map((r) => r.name), row.names);
      assert.equal(bytes.length, row.size);
    });
  }
  it('copyQuestion still ignores case after an exactCase encode', () => {
    encodeMessage(message({ questions: q('a.example.') }), { exactCase: true });
    const response = encodeMessage(message({ questions: q('a.example.') }));
    const query = encodeMessage(message({ qr: false, questions: q('A.Example.') }));
    assert.equal(copyQuestion(response, query, parseQuery(query).questionEnd), true);
  });
  it('decodes pointers in RDATA of SRV, even though it never writes them', () => {
    const bytes = wire(
      header({ qd: 1, an: 1 }),
      question('svc.example.', 33),
      rr([0xc0, 12], 33, 1, 5, [...u16(1), ...u16(2), ...u16(3), 3, ...ascii('web'), 0xc0, 12]),
    );
    assert.deepEqual(decodeMessage(bytes).answers[0].data, { priority: 1, weight: 2, port: 3, target: 'web.svc.example.' });
  });
});

describe('EDNS', () => {
  const cookie = hex('0011223344556677');
  const queryWithOpt = (ttl: number, rdata: Bytes, udp = 1232) =>
    wire(header({ flags: 0x0100, qd: 1, ar: 1 }), question('example.', 1), opt(udp, ttl, rdata));
  const cases: Array<{ title: string; bytes: Uint8Array; edns: Edns; rcode: number }> = [
    {
      title: 'UDP size and DO',
      bytes: queryWithOpt(0x00008000, []),
      edns: { udpSize: 1232, version: 0, do: true, zFlags: 0, options: [] },
      rcode: 0,
    },
    {
      title: 'options carried in order, unknown and empty ones kept',
      bytes: queryWithOpt(0, [...u16(10), ...u16(8), ...cookie, ...u16(65001), ...u16(3), 1, 2, 3, ...u16(12), ...u16(0)]),
      edns: {
        udpSize: 1232,
        version: 0,
        do: false,
        zFlags: 0,
        options: [
          { code: 10, data: Uint8Array.from(cookie) },
          { code: 65001, data: Uint8Array.from([1, 2, 3]) },
          { code: 12, data: new Uint8Array(0) },
        ],
      },
      rcode: 0,
    },
    {
      title: 'version 1 and the other flag bits',
      bytes: queryWithOpt(0x0001_7fff, [], 512),
      edns: { udpSize: 512, version: 1, do: false, zFlags: 0x7fff, options: [] },
      rcode: 0,
    },
    {
      title: 'a UDP size below 512 is reported as sent',
      bytes: queryWithOpt(0, [], 100),
      edns: { udpSize: 100, version: 0, do: false, zFlags: 0, options: [] },
      rcode: 0,
    },
    {
      title: 'BADVERS: extended RCODE 1 in OPT, 0 in the header',
      bytes: wire(header({ flags: 0x8000, qd: 1, ar: 1 }), question('example.', 1), opt(1232, 0x0100_0000)),
      edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] },
      rcode: RCode.BADVERS,
    },
    {
      title: 'upper and lower RCODE bits combine (0x123)',
      bytes: wire(header({ flags: 0x8003, qd: 1, ar: 1 }), question('example.', 1), opt(4096, 0x1200_0000)),
      edns: { udpSize: 4096, version: 0, do: false, zFlags: 0, options: [] },
      rcode: 0x123,
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const msg = decodeMessage(c.bytes);
      assert.deepEqual(msg.edns, c.edns);
      assert.equal(msg.rcode, c.rcode);
      assert.deepEqual(msg.additional, []);
      assert.deepEqual(encodeMessage(msg, { compress: false }), Buffer.from(c.bytes));
      assert.deepEqual(parseQuery(c.bytes).edns, c.edns);
    });
  }
  it('writes BADVERS split across header and OPT', () => {
    const edns: Edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] };
    const bytes = encodeMessage(message({ rcode: RCode.BADVERS, edns }));
    assert.deepEqual(Array.from(bytes), [...header({ flags: 0x8100, ar: 1 }), ...opt(1232, 0x0100_0000)]);
  });
  it('refuses an extended RCODE without EDNS', () => {
    assert.throws(() => encodeMessage(message({ rcode: RCode.BADVERS })), /needs EDNS/);
    assert.throws(() => encodeMessage(message({ rcode: 4096, edns: { udpSize: 512, version: 0, do: false, zFlags: 0, options: [] } })), /out of range/);
  });
  it('refuses an OPT record placed in a section', () => {
    const m = message({ additional: [R.opaque('.', RRType.OPT, 0, new Uint8Array(0), 1232)] });
    assert.throws(() => encodeMessage(m), /msg\.edns/);
  });
});

describe('truncation', () => {
  const edns = (options: Edns['options'] = []): Edns => ({ udpSize: 512, version: 0, do: false, zFlags: 0, options });
  const many = (n: number, owner = 'host.example.') => Array.from({ length: n }, (_, k) => R.a(owner, 5, `10.0.${k >> 8}.${k & 255}`));
  // Header 12 + question "host.example." 18 = 30; each compressed A record is 16.
  const base = (over: Partial<Message>) => message({ questions: [{ name: 'host.example.', type: 1, class: 1 }], ...over });
  const cases: Array<{ title: string; msg: Message; maxSize: number; size: number; tc: boolean; counts: [number, number, number]; opt: boolean }> = [
    { title: 'answers cut, TC set', msg: base({ answers: many(40) }), maxSize: 512, size: 510, tc: true, counts: [30, 0, 0], opt: false },
    { title: 'OPT kept and its space reserved', msg: base({ answers: many(40), edns: edns() }), maxSize: 512, size: 505, tc: true, counts: [29, 0, 0], opt: true },
    {
      title: 'OPT with a cookie reserves more',
      msg: base({ answers: many(40), edns: edns([{ code: 10, data: new Uint8Array(8) }]) }),
      maxSize: 512,
      size: 501,
      tc: true,
      counts: [28, 0, 0],
      opt: true,
    },
    { title: 'exact fit: nothing cut', msg: base({ answers: many(30) }), maxSize: 510, size: 510, tc: false, counts: [30, 0, 0], opt: false },
    { title: 'one octet short', msg: base({ answers: many(30) }), maxSize: 509, size: 494, tc: true, counts: [29, 0, 0], opt: false },
    {
      title: 'only additional records cut: TC stays clear (RFC 2181 §9)',
      msg: base({ answers: many(10), additional: many(40, 'glue.example.') }),
      maxSize: 512,
      size: 499,
      tc: false,
      counts: [10, 0, 19],
      opt: false,
    },
    {
      title: 'authority cut: TC set, additional gone too',
      msg: base({ answers: many(10), authority: many(40, 'ns.example.'), additional: many(5, 'glue.example.') }),
      maxSize: 512,
      size: 497,
      tc: true,
      counts: [10, 19, 0],
      opt: false,
    },
    { title: 'TC already set stays set', msg: base({ tc: true, answers: many(2) }), maxSize: 512, size: 62, tc: true, counts: [2, 0, 0], opt: false },
    { title: 'question does not fit: bare header with TC', msg: base({ answers: many(2) }), maxSize: 29, size: 12, tc: true, counts: [0, 0, 0], opt: false },
    { title: 'question does not fit: header and OPT', msg: base({ answers: many(2), edns: edns() }), maxSize: 40, size: 23, tc: true, counts: [0, 0, 0], opt: true },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const bytes = encodeMessage(c.msg, { maxSize: c.maxSize });
      assert.equal(bytes.length, c.size);
      const back = decodeMessage(bytes);
      assert.equal(back.tc, c.tc);
      assert.deepEqual([back.answers.length, back.authority.length, back.additional.length], c.counts);
      assert.equal(back.edns !== undefined, c.opt);
      assert.deepEqual(back.questions, c.size >= 30 ? c.msg.questions : []);
    });
  }
  it('never exceeds maxSize, for every size from the header up', () => {
    const msg = base({
      answers: [R.cname('host.example.', 5, 'real.example.'), ...many(6, 'real.example.')],
      authority: [R.ns('example.', 5, 'ns.example.')],
      additional: [R.txt('ns.example.', 5, ['x'.repeat(200)]), R.aaaa('ns.example.', 5, 'fd00::1')],
      edns: edns([{ code: 10, data: new Uint8Array(16) }]),
    });
    const full = encodeMessage(msg).length;
    for (let max = 12; max <= full + 2; max++) {
      const bytes = encodeMessage(msg, { maxSize: max });
      assert.ok(bytes.length <= max, `maxSize ${max} gave ${bytes.length}`);
      const back = decodeMessage(bytes);
      const dropped = back.answers.length < msg.answers.length || back.authority.length < msg.authority.length;
      assert.equal(back.tc, dropped, `maxSize ${max}`);
    }
  });
  it('refuses a maxSize below the header', () => {
    assert.throws(() => encodeMessage(base({}), { maxSize: 11 }), /maxSize/);
  });
  it('without maxSize, caps at 65535 octets', () => {
    const msg = base({ answers: Array.from({ length: 300 }, () => R.txt('host.example.', 5, ['y'.repeat(255)])) });
    const bytes = encodeMessage(msg);
    assert.ok(bytes.length <= 65535);
    assert.equal(decodeMessage(bytes).tc, true);
  });
});

describe('parseQuery', () => {
  const cookie = [...u16(10), ...u16(8), ...hex('0102030405060708')];
  const cases: Array<{ title: string; bytes: Uint8Array; want: Record<string, unknown> }> = [
    {
      title: 'a typical query with EDNS and a cookie',
      bytes: wire(header({ id: 0xbeef, flags: 0x0120, qd: 1, ar: 1 }), question('kubernetes.default.svc.cluster.local.', 1), opt(1232, 0, cookie)),
      want: {
        id: 0xbeef,
        flags: 0x0120,
        opcode: 0,
        rd: true,
        cd: false,
        qdcount: 1,
        qname: 'kubernetes.default.svc.cluster.local.',
        name: 'kubernetes.default.svc.cluster.local.',
        qtype: 1,
        qclass: 1,
        questionEnd: 12 + 38 + 4,
        edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: 10, data: Uint8Array.from(hex('0102030405060708')) }] },
      },
    },
    {
      title: 'mixed case: qname as sent, name lower-cased; no EDNS',
      bytes: wire(header({ flags: 0x0110, qd: 1 }), question('KuBe.Default.', 28)),
      want: { qname: 'KuBe.Default.', name: 'kube.default.', qtype: 28, cd: true, rd: true, questionEnd: 12 + 14 + 4, edns: undefined },
    },
    {
      title: 'escaped qname (slow path)',
      bytes: wire(header({ qd: 1 }), question(labels(ascii('A B'), ascii('x.y')), 1)),
      want: { qname: 'A\\032B.x\\.y.', name: 'a\\032b.x\\.y.', rd: false, questionEnd: 12 + 9 + 4 },
    },
    {
      title: 'the root',
      bytes: wire(header({ qd: 1 }), question('.', 2)),
      want: { qname: '.', name: '.', qtype: 2, questionEnd: 17 },
    },
    {
      title: 'CHAOS class, opcode NOTIFY',
      bytes: wire(header({ flags: 0x2000, qd: 1 }), question('version.bind.', 16, 3)),
      want: { opcode: 4, qclass: 3, qtype: 16 },
    },
    {
      title: 'two questions: the first is reported, questionEnd after both',
      bytes: wire(header({ qd: 2 }), question('a.example.', 1), question([1, ...ascii('b'), 0xc0, 14], 1)),
      want: { qdcount: 2, qname: 'a.example.', questionEnd: 12 + (11 + 4) + (4 + 4) },
    },
    {
      title: 'records before the OPT are stepped over',
      bytes: wire(
        header({ qd: 1, an: 1, ns: 1, ar: 2 }),
        question('example.', 1),
        rr([0xc0, 12], 1, 1, 5, [1, 2, 3, 4]),
        rr([0xc0, 12], 2, 1, 5, wname('ns.example.')),
        rr([0xc0, 12], 1, 1, 5, [1, 2, 3, 4]),
        opt(4096, 0x8000),
      ),
      want: { edns: { udpSize: 4096, version: 0, do: true, zFlags: 0, options: [] } },
    },
    {
      title: 'OPT before a TSIG-like record',
      bytes: wire(header({ qd: 1, ar: 2 }), question('example.', 1), opt(1400, 0), rr('key.', 250, 255, 0, [1, 2])),
      want: { edns: { udpSize: 1400, version: 0, do: false, zFlags: 0, options: [] } },
    },
    {
      title: 'trailing bytes ignored',
      bytes: wire(header({ qd: 1 }), question('example.', 1), [0xde, 0xad]),
      want: { qname: 'example.', questionEnd: 12 + 9 + 4 },
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const got = parseQuery(c.bytes) as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(c.want)) assert.deepEqual(got[k], v, k);
    });
  }
  it('agrees with decodeMessage on the question', () => {
    const bytes = wire(header({ qd: 1 }), question('Mixed.Case.Example.', 33));
    const q = decodeMessage(bytes).questions[0];
    const p = parseQuery(bytes);
    assert.deepEqual([p.qname, p.qtype, p.qclass], [q.name, q.type, q.class]);
  });
});

describe('patching pre-encoded answers', () => {
  const msg = message({
    questions: [{ name: 'svc.example.', type: 1, class: 1 }],
    answers: [R.a('svc.example.', 30, '10.0.0.1'), R.a('svc.example.', 20, '10.0.0.2')],
    authority: [R.ns('example.', 300, 'ns.example.')],
    additional: [R.a('ns.example.', 40, '10.0.0.53')],
    edns: { udpSize: 1232, version: 0, do: true, zFlags: 0, options: [] },
  });
  it('patchId rewrites only the ID', () => {
    const bytes = encodeMessage(msg);
    const before = Buffer.from(bytes);
    patchId(bytes, 0xabcd);
    assert.equal(bytes.readUInt16BE(0), 0xabcd);
    assert.deepEqual(bytes.subarray(2), before.subarray(2));
  });
  it('finds every TTL but the OPT one', () => {
    const bytes = encodeMessage(msg);
    const offsets = findTtlOffsets(bytes);
    assert.equal(offsets.length, 4);
    assert.deepEqual(readTtls(bytes, offsets), [30, 20, 300, 40]);
  });
  const decrements: Array<{ by: number; ttls: number[]; min: number }> = [
    { by: 0, ttls: [30, 20, 300, 40], min: 20 },
    { by: 10, ttls: [20, 10, 290, 30], min: 10 },
    { by: 25, ttls: [5, 0, 275, 15], min: 0 },
    { by: 1000, ttls: [0, 0, 0, 0], min: 0 },
  ];
  for (const d of decrements) {
    it(`decrementTtls by ${d.by}`, () => {
      const bytes = encodeMessage(msg);
      const offsets = findTtlOffsets(bytes);
      assert.equal(decrementTtls(bytes, offsets, d.by), d.min);
      const back = decodeMessage(bytes);
      assert.deepEqual([...back.answers, ...back.authority, ...back.additional].map((r) => r.ttl), d.ttls);
      assert.equal(back.edns?.do, true); // the OPT "TTL" (flags) untouched
    });
  }
  it('decrementTtls with no records says Infinity', () => assert.equal(decrementTtls(new Uint8Array(12), [], 5), Infinity));
  it('setTtls writes one TTL everywhere', () => {
    const bytes = encodeMessage(msg);
    const offsets = findTtlOffsets(bytes);
    setTtls(bytes, offsets, 7);
    assert.deepEqual(readTtls(bytes, offsets), [7, 7, 7, 7]);
  });
  it('findTtlOffsets rejects a cut message', () => {
    const bytes = encodeMessage(msg);
    assert.throws(() => findTtlOffsets(bytes.subarray(0, bytes.length - 3)), DnsFormatError);
  });
});

describe('copyQuestion', () => {
  const answer = encodeMessage(
    message({ questions: [{ name: 'web.example.', type: 1, class: 1 }], answers: [R.a('web.example.', 5, '10.0.0.1')] }),
  );
  const query = (name: string, type = 1) => encodeMessage(message({ qr: false, questions: [{ name, type, class: 1 }] }));
  const cases: Array<{ title: string; query: Buffer; copied: boolean; qname: string; owner: string }> = [
    { title: "the client's mixed case is echoed", query: query('WeB.ExAmple.'), copied: true, qname: 'WeB.ExAmple.', owner: 'WeB.ExAmple.' },
    { title: 'same spelling: unchanged', query: query('web.example.'), copied: true, qname: 'web.example.', owner: 'web.example.' },
    { title: 'another name of the same length is refused', query: query('wex.example.'), copied: false, qname: 'web.example.', owner: 'web.example.' },
    { title: 'another type is refused', query: query('WEB.example.', 28), copied: false, qname: 'web.example.', owner: 'web.example.' },
    { title: 'a longer name is refused', query: query('www.web.example.'), copied: false, qname: 'web.example.', owner: 'web.example.' },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const wire = Buffer.from(answer);
      assert.equal(copyQuestion(wire, c.query, parseQuery(c.query).questionEnd), c.copied);
      const back = decodeMessage(wire);
      assert.equal(back.questions[0].name, c.qname);
      assert.equal(back.answers[0].name, c.owner); // the owner is a pointer to the question
    });
  }
});

describe('encode errors', () => {
  const withAnswer = (rec: ResourceRecord) => message({ answers: [rec] });
  const rec = (type: number, data: RData): ResourceRecord => ({ name: 'x.example.', type, class: 1, ttl: 5, data });
  const cases: Array<[string, Message, RegExp]> = [
    ['bad IPv4', withAnswer(R.a('x.example.', 5, '10.0.0.256')), /IPv4/],
    ['IPv6 in an A record', withAnswer(R.a('x.example.', 5, '::1')), /IPv4/],
    ['bad IPv6', withAnswer(R.aaaa('x.example.', 5, '1::2::3')), /IPv6/],
    ['TXT string over 255', withAnswer(R.txt('x.example.', 5, ['z'.repeat(256)])), /255/],
    ['TXT with a non-latin1 character', withAnswer(R.txt('x.example.', 5, ['\u20ac'])), /latin1/],
    ['a typed type given the wrong shape', withAnswer(rec(RRType.CNAME, { address: '10.0.0.1' })), /domain name/],
    ['an unknown type without raw data', withAnswer(rec(99, { target: 'a.' })), /OpaqueData/],
    ['bad owner name', withAnswer(R.a('x..example.', 5, '10.0.0.1')), /empty label/],
    ['opaque RDATA over 65535', withAnswer(R.opaque('x.', 65280, 5, new Uint8Array(65536))), /RDATA of 65536/],
  ];
  for (const [title, m, why] of cases) it(title, () => assert.throws(() => encodeMessage(m), why));
});

describe('scratch buffer reuse', () => {
  it('returned buffers stay intact across later calls', () => {
    const first = encodeMessage(message({ questions: [{ name: 'first.example.', type: 1, class: 1 }] }));
    const copy = Buffer.from(first);
    encodeMessage(message({ questions: [{ name: 'second.other.', type: 28, class: 1 }] }));
    assert.deepEqual(first, copy);
  });
});
