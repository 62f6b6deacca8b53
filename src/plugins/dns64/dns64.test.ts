import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatIPv6, parseIPv4, parseIPv6 } from '../../lib/dns/ip.js';
import { RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort } from '../../../test/util/net.js';
import { parseExposition, value } from '../../../test/util/prom.js';
import { testRequest } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing, startExampleUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { embedIPv4, isIPv6Client, synthesize, wantsSynthesis, type Dns64Config } from './handler.js';
import { parseDns64 } from './setup.js';

describe('dns64 setup', () => {
  const valid: Array<{ corefile: string; want: { prefix: string; length: number; translateAll: boolean; allowIPv4: boolean } }> = [
    { corefile: 'dns64', want: { prefix: '64:ff9b::', length: 96, translateAll: false, allowIPv4: false } },
    { corefile: 'dns64 64:1337::/96', want: { prefix: '64:1337::', length: 96, translateAll: false, allowIPv4: false } },
    { corefile: 'dns64 {\n prefix 2001:db8::/32\n}', want: { prefix: '2001:db8::', length: 32, translateAll: false, allowIPv4: false } },
    { corefile: 'dns64 {\n translate_all\n allow_ipv4\n}', want: { prefix: '64:ff9b::', length: 96, translateAll: true, allowIPv4: true } },
    // CoreDNS skips the block when PREFIX is given as an argument; kdns applies it.
    { corefile: 'dns64 64:1337::/96 {\n translate_all\n}', want: { prefix: '64:1337::', length: 96, translateAll: true, allowIPv4: false } },
    { corefile: 'dns64 2001:db8:122:344::/64', want: { prefix: '2001:db8:122:344::', length: 64, translateAll: false, allowIPv4: false } },
    { corefile: 'dns64 2001:db8::ffff/32', want: { prefix: '2001:db8::', length: 32, translateAll: false, allowIPv4: false } },
  ];
  for (const c of valid) {
    test(`valid: ${JSON.stringify(c.corefile)}`, () => {
      const cfg = parseDns64(directiveIn(c.corefile));
      assert.deepEqual({ prefix: formatIPv6(cfg.prefix.bytes), length: cfg.prefix.length, translateAll: cfg.translateAll, allowIPv4: cfg.allowIPv4 }, c.want);
    });
  }
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'dns64 64:ff9b::', error: 'Corefile:2: dns64: invalid prefix "64:ff9b::" (expected an IPv6 prefix such as 64:ff9b::/96)' },
    { corefile: 'dns64 10.0.0.0/8', error: 'Corefile:2: dns64: prefix "10.0.0.0/8" is not IPv6' },
    { corefile: 'dns64 64:ff9b::/97', error: 'Corefile:2: dns64: invalid prefix length /97 in "64:ff9b::/97" (RFC 6052 allows 32, 40, 48, 56, 64 or 96)' },
    { corefile: 'dns64 64:ff9b::/24', error: 'Corefile:2: dns64: invalid prefix length /24 in "64:ff9b::/24" (RFC 6052 allows 32, 40, 48, 56, 64 or 96)' },
    { corefile: 'dns64 64:ff9b::/60', error: 'Corefile:2: dns64: invalid prefix length /60 in "64:ff9b::/60" (RFC 6052 allows 32, 40, 48, 56, 64 or 96)' },
    { corefile: 'dns64 64:ff9b::/96 64:ff9c::/96', error: 'Corefile:2: wrong argument count for "dns64": expected at most 1, got 2' },
    { corefile: 'dns64 {\n prefix\n}', error: 'Corefile:3: wrong argument count for "prefix": expected 1, got 0' },
    { corefile: 'dns64 {\n translate_all yes\n}', error: 'Corefile:3: wrong argument count for "translate_all": expected no arguments, got 1' },
    { corefile: 'dns64 {\n translate\n}', error: 'Corefile:3: unknown property "translate" in dns64 block' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parseDns64(directiveIn(c.corefile)), { message: c.error }));
});

describe('embedding an IPv4 address in a prefix (RFC 6052 section 2.4, its examples for 192.0.2.33)', () => {
  const cases: Array<[string, number, string]> = [
    ['2001:db8::', 32, '2001:db8:c000:221::'],
    ['2001:db8:100::', 40, '2001:db8:1c0:2:21::'],
    ['2001:db8:122::', 48, '2001:db8:122:c000:2:2100::'],
    ['2001:db8:122:300::', 56, '2001:db8:122:3c0:0:221::'],
    ['2001:db8:122:344::', 64, '2001:db8:122:344:c0:2:2100:0'],
    ['2001:db8:122:344::', 96, '2001:db8:122:344::c000:221'],
    ['64:ff9b::', 96, '64:ff9b::c000:221'],
  ];
  for (const [prefix, length, want] of cases) {
    test(`${prefix}/${length} → ${want}`, () => assert.equal(formatIPv6(embedIPv4(parseIPv6(prefix) as Uint8Array, length, parseIPv4('192.0.2.33') as Uint8Array)), want));
  }
});

describe('which clients get synthesis', () => {
  const cases: Array<[string, 4 | 6 | undefined, boolean]> = [
    ['2001:db8::5', undefined, true],
    ['::1', undefined, true],
    ['10.0.0.5', undefined, false],
    ['', 6, true],
    ['', 4, false],
  ];
  for (const [address, family, want] of cases) test(`${address || `family ${family}`} → ${want}`, () => assert.equal(isIPv6Client({ remoteAddress: address, remoteFamily: family }), want));
});

const rr = (name: string, type: number, ttl: number, address: string): ResourceRecord => ({ name, type, class: 1, ttl, data: { address } });
const soa: ResourceRecord = { name: 'example.test.', type: RRType.SOA, class: 1, ttl: 30, data: { mname: 'ns.example.test.', rname: 'h.example.test.', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 30 } } as ResourceRecord;
function message(rcode: number, answers: ResourceRecord[], authority: ResourceRecord[] = []): Message {
  return { id: 1, qr: true, opcode: 0, aa: true, tc: false, rd: true, ra: true, z: false, ad: false, cd: false, rcode, questions: [], answers, authority, additional: [] };
}

describe('which AAAA answers call for synthesis (RFC 6147 5.1)', () => {
  const cases: Array<{ what: string; aaaa: Message; translateAll: boolean; want: boolean }> = [
    { what: 'no data', aaaa: message(RCode.NOERROR, [], [soa]), translateAll: false, want: true },
    { what: 'NXDOMAIN, never', aaaa: message(RCode.NXDOMAIN, [], [soa]), translateAll: true, want: false },
    { what: 'SERVFAIL, counted as no data (5.1.2)', aaaa: message(RCode.SERVFAIL, []), translateAll: false, want: true },
    { what: 'AAAA records', aaaa: message(RCode.NOERROR, [rr('a.test.', RRType.AAAA, 60, '2001:db8::1')]), translateAll: false, want: false },
    { what: 'AAAA records with translate_all', aaaa: message(RCode.NOERROR, [rr('a.test.', RRType.AAAA, 60, '2001:db8::1')]), translateAll: true, want: true },
    { what: 'only a CNAME', aaaa: message(RCode.NOERROR, [{ name: 'b.test.', type: RRType.CNAME, class: 1, ttl: 60, data: { target: 'a.test.' } }]), translateAll: false, want: true },
  ];
  for (const c of cases) test(c.what, () => assert.equal(wantsSynthesis(c.aaaa, c.translateAll), c.want));
});

describe('the synthesized answer', () => {
  const config: Dns64Config = { prefix: { text: '64:ff9b::/96', bytes: parseIPv6('64:ff9b::') as Uint8Array, length: 96 }, translateAll: false, allowIPv4: false };
  const req = testRequest('b.test.', RRType.AAAA, { id: 7 });
  const cname = { name: 'b.test.', type: RRType.CNAME, class: 1, ttl: 60, data: { target: 'a.test.' } };
  const cases: Array<{ what: string; aaaa: Message; a: Message; want: Array<[string, string, number, string]> | undefined }> = [
    { what: 'A records become AAAA in the prefix; the TTL is capped by the SOA of the AAAA answer', aaaa: message(RCode.NOERROR, [], [soa]), a: message(RCode.NOERROR, [rr('b.test.', RRType.A, 300, '192.0.2.1'), rr('b.test.', RRType.A, 10, '192.0.2.2')]), want: [['b.test.', 'AAAA', 30, '64:ff9b::c000:201'], ['b.test.', 'AAAA', 10, '64:ff9b::c000:202']] },
    { what: 'no SOA: the TTL is capped at 600', aaaa: message(RCode.SERVFAIL, []), a: message(RCode.NOERROR, [rr('b.test.', RRType.A, 3600, '10.1.2.3')]), want: [['b.test.', 'AAAA', 600, '64:ff9b::a01:203']] },
    { what: 'a CNAME chain passes unchanged', aaaa: message(RCode.NOERROR, [], [soa]), a: message(RCode.NOERROR, [cname, rr('a.test.', RRType.A, 20, '192.0.2.1')]), want: [['b.test.', 'CNAME', 60, 'a.test.'], ['a.test.', 'AAAA', 20, '64:ff9b::c000:201']] },
    { what: 'no A records: nothing to make, the AAAA answer stands', aaaa: message(RCode.NOERROR, [], [soa]), a: message(RCode.NOERROR, [cname]), want: undefined },
    { what: 'the A question fails: the AAAA answer stands', aaaa: message(RCode.NOERROR, [], [soa]), a: message(RCode.SERVFAIL, []), want: undefined },
  ];
  for (const c of cases) {
    test(c.what, () => {
      const out = synthesize(req, c.aaaa, c.a, config);
      const shown = out?.answers.map((r): [string, string, number, string] => [r.name, r.type === RRType.AAAA ? 'AAAA' : 'CNAME', r.ttl, 'address' in r.data ? r.data.address : 'target' in r.data ? r.data.target : '?']);
      assert.deepEqual(shown, c.want);
      if (out) assert.deepEqual([out.id, out.aa, out.rcode, out.questions[0]?.type], [7, false, RCode.NOERROR, RRType.AAAA]);
    });
  }
});

// Real dig over IPv6 and IPv4 against kdns, which forwards to a real named serving example.test
// (www: A 192.0.2.1 and AAAA 2001:db8::1; multi: four A records; negative answers carry the
// SOA with TTL 30).
describe('dns64 end to end: real dig, real named behind forward', { skip: missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils') }, () => {
  let upstream: NamedUpstream;
  const servers = new Map<string, TestServer>();
  const metricsPorts = new Map<string, number>();

  before(async () => {
    upstream = await startExampleUpstream();
    const variants: Record<string, string> = { default: '', translate_all: 'translate_all', allow_ipv4: 'allow_ipv4' };
    for (const [name, option] of Object.entries(variants)) {
      const metrics = await freePort();
      metricsPorts.set(name, metrics);
      servers.set(
        name,
        await startTestServer(`.:{PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:${metrics}
    dns64 {
        ${option}
    }
    forward . ${upstream.address}
}
`),
      );
    }
  });
  after(async () => {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    await upstream.dispose();
  });

  const cases: Array<{ what: string; server: string; from: string; name: string; status: string; answer: string[] }> = [
    { what: 'an A-only name over IPv6: AAAA made from each A, TTL capped by the SOA (30)', server: 'default', from: '::1', name: 'multi.example.test', status: 'NOERROR', answer: ['30 AAAA 64:ff9b::c000:20b', '30 AAAA 64:ff9b::c000:20c', '30 AAAA 64:ff9b::c000:20d', '30 AAAA 64:ff9b::c000:20e'] },
    { what: 'a name with AAAA over IPv6: its own AAAA', server: 'default', from: '::1', name: 'www.example.test', status: 'NOERROR', answer: ['300 AAAA 2001:db8::1'] },
    { what: 'a CNAME to a name with A and AAAA: the real AAAA', server: 'default', from: '::1', name: 'alias.example.test', status: 'NOERROR', answer: ['300 CNAME www.example.test.', '300 AAAA 2001:db8::1'] },
    { what: 'a name that does not exist: NXDOMAIN stands', server: 'default', from: '::1', name: 'nope.example.test', status: 'NXDOMAIN', answer: [] },
    { what: 'an A-only name over IPv4: no synthesis', server: 'default', from: '127.0.0.1', name: 'multi.example.test', status: 'NOERROR', answer: [] },
    { what: 'translate_all: a name with AAAA gets the translated A instead (no SOA in that answer: TTL capped at 600)', server: 'translate_all', from: '::1', name: 'www.example.test', status: 'NOERROR', answer: ['300 AAAA 64:ff9b::c000:201'] },
    { what: 'allow_ipv4: an IPv4 client gets synthesis', server: 'allow_ipv4', from: '127.0.0.1', name: 'mail1.example.test', status: 'NOERROR', answer: ['30 AAAA 64:ff9b::c000:215'] },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const s = servers.get(c.server) as TestServer;
      const r = await dig(c.name, 'AAAA', { port: s.port, server: c.from });
      assert.equal(r.status, c.status, r.raw);
      assert.deepEqual(
        r.answer.map((a) => `${a.ttl} ${a.type} ${a.data}`).sort(),
        [...c.answer].sort(),
      );
    });
  }

  test('coredns_dns64_requests_translated_total counts translated answers only', async () => {
    const s = servers.get('default') as TestServer;
    const scrape = async () => parseExposition(await (await fetch(`http://127.0.0.1:${metricsPorts.get('default')}/metrics`)).text());
    const match = { server: `dns://127.0.0.1:${s.port}` };
    const before = value(await scrape(), 'coredns_dns64_requests_translated_total', { server: `dns://[::1]:${s.port}` });
    await dig('short.example.test', 'AAAA', { port: s.port, server: '::1' });
    await dig('www.example.test', 'AAAA', { port: s.port, server: '::1' });
    await dig('short.example.test', 'A', { port: s.port, server: '::1' });
    const ipv6 = { server: `dns://[::1]:${s.port}` };
    const after = await scrape();
    assert.deepEqual([value(after, 'coredns_dns64_requests_translated_total', ipv6) - before, value(after, 'coredns_dns64_requests_translated_total', match)], [1, 0]);
  });
});
