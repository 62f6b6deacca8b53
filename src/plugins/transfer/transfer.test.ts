// The transfer plugin's parts: its Corefile syntax (cases from CoreDNS's setup_test), who may
// transfer which zone, and how records are cut into messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as rr from '../../lib/dns/rr.js';
import { RRType, type Message } from '../../lib/dns/types.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { allowed, batches, ixfrSerial, longestMatch, wireSizeBound, type TransferConfig } from './handler.js';
import { parseTransfer } from './setup.js';
import { notifyMessage } from './notify.js';
import { serialAtOrAfter } from '../pkg/xfr.js';

test('transfer: Corefile syntax', () => {
  const cases: Array<{ corefile: string; want?: TransferConfig; error?: string }> = [
    { corefile: 'example.org {\n  transfer {\n    to *\n  }\n}', want: { zones: ['example.org.'], to: ['*'] } },
    { corefile: 'example.org {\n  transfer example.net Example.COM {\n    to 10.0.0.1\n  }\n}', want: { zones: ['example.net.', 'example.com.'], to: [{ host: '10.0.0.1', port: 53 }] } },
    {
      corefile: 'example.org {\n  transfer {\n    to 10.0.0.1:5300 [2001:db8::1]:5301 2001:db8::2\n    to *\n  }\n}',
      want: { zones: ['example.org.'], to: [{ host: '10.0.0.1', port: 5300 }, { host: '2001:db8::1', port: 5301 }, { host: '2001:db8::2', port: 53 }, '*'] },
    },
    { corefile: 'example.org {\n  transfer {\n    to 10.0.0.1\n    source 10.0.0.53\n  }\n}', want: { zones: ['example.org.'], to: [{ host: '10.0.0.1', port: 53 }], source: '10.0.0.53' } },
    { corefile: 'example.org {\n  transfer {\n    to 10.0.0.1\n    source 2001:DB8::53\n  }\n}', want: { zones: ['example.org.'], to: [{ host: '10.0.0.1', port: 53 }], source: '2001:db8::53' } },
    { corefile: 'example.org {\n  transfer\n}', error: 'Corefile:2: transfer: "to" is required' },
    { corefile: 'example.org {\n  transfer {\n    source 10.0.0.53\n  }\n}', error: 'Corefile:2: transfer: "to" is required' },
    { corefile: 'example.org {\n  transfer {\n    to\n  }\n}', error: 'Corefile:3: wrong argument count for "to": expected at least 1, got 0' },
    { corefile: 'example.org {\n  transfer {\n    to ns1.example.org\n  }\n}', error: 'Corefile:3: invalid argument "ns1.example.org" for "to": "ns1.example.org" is not an IP address' },
    { corefile: 'example.org {\n  transfer {\n    to 10.0.0.1\n    source nowhere\n  }\n}', error: 'Corefile:4: invalid argument "nowhere" for "source": not an IP address' },
    { corefile: 'example.org {\n  transfer {\n    to 10.0.0.1\n    source 10.0.0.53\n    source 10.0.0.54\n  }\n}', error: 'Corefile:5: transfer: source already specified' },
    { corefile: 'example.org {\n  transfer {\n    to 10.0.0.1\n    from 10.0.0.2\n  }\n}', error: 'Corefile:4: unknown property "from" in transfer block' },
    { corefile: 'example.org {\n  transfer bad..zone {\n    to *\n  }\n}', error: 'Corefile:2: invalid argument "bad..zone" for "transfer": not a valid zone name' },
  ];
  for (const c of cases) {
    const parse = () => parseTransfer(firstDirective(c.corefile), ['example.org.']);
    if (c.error) assert.throws(parse, { message: c.error }, c.corefile);
    else assert.deepEqual(parse(), c.want, c.corefile);
  }
});

test('transfer: the longest zone decides, and its "to" who may transfer', () => {
  const configs: TransferConfig[] = [
    { zones: ['example.org.'], to: [{ host: '10.0.0.1', port: 53 }] },
    { zones: ['sub.example.org.', 'example.net.'], to: ['*'] },
    { zones: ['v6.test.'], to: [{ host: '2001:db8::1', port: 53 }] },
  ];
  const cases = [
    { name: 'example.org.', client: '10.0.0.1', zone: 'example.org.', allowed: true },
    { name: 'example.org.', client: '10.0.0.2', zone: 'example.org.', allowed: false },
    { name: 'sub.example.org.', client: '10.0.0.2', zone: 'sub.example.org.', allowed: true },
    { name: 'example.net.', client: '192.0.2.1', zone: 'example.net.', allowed: true },
    { name: 'v6.test.', client: '2001:DB8:0::1', zone: 'v6.test.', allowed: true },
    { name: 'notexample.org.', client: '10.0.0.1', zone: undefined, allowed: false },
  ];
  for (const c of cases) {
    const m = longestMatch(configs, c.name);
    assert.equal(m?.zone, c.zone, c.name);
    assert.equal(m !== undefined && allowed(m.config, c.client), c.allowed, `${c.name} from ${c.client}`);
  }
});

test('transfer: records are cut into messages by their wire size bound', () => {
  const cases = [
    { what: 'A', record: rr.a('www.example.org.', 60, '192.0.2.1'), bound: 18 + 10 + 4 },
    { what: 'AAAA', record: rr.aaaa('www.example.org.', 60, '2001:db8::1'), bound: 18 + 10 + 16 },
    { what: 'SRV', record: rr.srv('_x._tcp.example.org.', 60, 0, 100, 80, 'www.example.org.'), bound: 22 + 10 + 24 },
    { what: 'TXT', record: rr.txt('t.example.org.', 60, ['abc', 'de']), bound: 16 + 10 + 7 },
    { what: 'SOA', record: rr.soa('example.org.', 60, { mname: 'ns.example.org.', rname: 'h.example.org.', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 }), bound: 14 + 10 + 17 + 16 + 20 },
  ];
  for (const c of cases) assert.equal(wireSizeBound(c.record), c.bound, c.what);
  const ten = Array.from({ length: 10 }, (_, i) => rr.a(`h${i}.example.org.`, 60, '192.0.2.1')); // 31 bytes each
  assert.deepEqual(
    [...batches(ten, 100)].map((b) => b.length),
    [3, 3, 3, 1],
  );
  assert.deepEqual([...batches([], 100)], []);
});

test('transfer: the serial of an IXFR query, and RFC 1982 order', () => {
  const query = (authority: Message['authority']): Message => ({ id: 1, qr: false, opcode: 0, aa: false, tc: false, rd: false, ra: false, z: false, ad: false, cd: false, rcode: 0, questions: [], answers: [], authority, additional: [] });
  const soa = (serial: number) => rr.soa('example.org.', 60, { mname: 'ns.', rname: 'h.', serial, refresh: 1, retry: 1, expire: 1, minimum: 1 });
  assert.equal(ixfrSerial(query([soa(42)])), 42);
  assert.equal(ixfrSerial(query([])), undefined);
  assert.equal(ixfrSerial(query([rr.a('example.org.', 60, '192.0.2.1')])), undefined);
  const order = [
    { a: 5, b: 5, atOrAfter: true },
    { a: 6, b: 5, atOrAfter: true },
    { a: 4, b: 5, atOrAfter: false },
    { a: 1, b: 0xffffffff, atOrAfter: true }, // wrapped around
    { a: 0xffffffff, b: 1, atOrAfter: false },
  ];
  for (const c of order) assert.equal(serialAtOrAfter(c.a, c.b), c.atOrAfter, `${c.a} vs ${c.b}`);
});

test('transfer: NOTIFY asks for the zone SOA with opcode NOTIFY and AA set (RFC 1996)', () => {
  const m = notifyMessage('example.org.', 7);
  assert.deepEqual({ opcode: m.opcode, aa: m.aa, qr: m.qr, questions: m.questions }, { opcode: 4, aa: true, qr: false, questions: [{ name: 'example.org.', type: RRType.SOA, class: 1 }] });
});
