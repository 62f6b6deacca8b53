import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { buildQuery } from '../../lib/dns/wire.js';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import { nameToWire } from '../../lib/dns/name.js';
import type { ResourceRecord } from '../../lib/dns/types.js';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { freePort } from '../../../test/util/net.js';
import { responseMessage } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { parseSubnet, type Subnet } from '../pkg/subnet.js';
import { balanceRecords, balanceWire } from './handler.js';
import { parseLoadBalance } from './setup.js';

const N = 'multi.example.test.';
const a = (addr: string, name = N): ResourceRecord => ({ name, type: 1, class: 1, ttl: 300, data: { address: addr } });
const aaaa = (addr: string): ResourceRecord => ({ name: N, type: 28, class: 1, ttl: 300, data: { address: addr } });
const cname = (target: string): ResourceRecord => ({ name: 'alias.example.test.', type: 5, class: 1, ttl: 300, data: { target } });
const mx = (pref: number, host: string): ResourceRecord => ({ name: N, type: 15, class: 1, ttl: 300, data: { preference: pref, exchange: host } });
const txt = (s: string): ResourceRecord => ({ name: N, type: 16, class: 1, ttl: 300, data: { strings: [s] } });
const rrsig = (): ResourceRecord => ({ name: N, type: 46, class: 1, ttl: 300, data: { raw: new Uint8Array([0, 1, 2]) } });

function wire(answers: ResourceRecord[], qname = N): Buffer {
  return encodeMessage(responseMessage({ id: 1, aa: true, ra: true, questions: [{ name: qname, type: 1, class: 1 }], answers }));
}

/** Math.random stand-in that always says 0: Fisher-Yates then rotates [a b c d] to [b c d a]. */
const zero = (): number => 0;
const describeRR = (r: ResourceRecord): string => {
  const d = r.data as { address?: string; target?: string; exchange?: string; strings?: string[] };
  return `${r.type === 1 ? 'A' : r.type === 28 ? 'AAAA' : r.type === 5 ? 'CNAME' : r.type === 15 ? 'MX' : r.type === 16 ? 'TXT' : r.type} ${d.address ?? d.target ?? d.exchange ?? d.strings?.[0] ?? ''}`;
};
const subnets = (...t: string[]): Subnet[] => t.map((x) => parseSubnet(x) as Subnet);

describe('loadbalance in the wire bytes', () => {
  const cases: Array<{ what: string; answers: ResourceRecord[]; prefer?: Subnet[]; qname?: string; want: string[] | 'fallback' }> = [
    { what: 'one RRset of A records is shuffled', answers: [a('192.0.2.1'), a('192.0.2.2'), a('192.0.2.3'), a('192.0.2.4')], want: ['A 192.0.2.2', 'A 192.0.2.3', 'A 192.0.2.4', 'A 192.0.2.1'] },
    { what: 'a single record stays', answers: [a('192.0.2.1')], want: ['A 192.0.2.1'] },
    {
      what: 'CNAME stays first, the target addresses shuffle',
      qname: 'alias.example.test.',
      answers: [cname(N), a('192.0.2.1'), a('192.0.2.2'), a('192.0.2.3')],
      want: ['CNAME multi.example.test.', 'A 192.0.2.2', 'A 192.0.2.3', 'A 192.0.2.1'],
    },
    { what: 'prefer puts the subnet first', answers: [a('192.0.2.1'), a('10.1.0.1'), a('192.0.2.3'), a('10.2.0.1')], prefer: subnets('10.2.0.0/16', '10.0.0.0/8'), want: ['A 10.2.0.1', 'A 10.1.0.1', 'A 192.0.2.3', 'A 192.0.2.1'] },
    { what: 'AAAA records shuffle too', answers: [aaaa('2001:db8::1'), aaaa('2001:db8::2')], want: ['AAAA 2001:db8::2', 'AAAA 2001:db8::1'] },
    { what: 'MX needs the message model', answers: [mx(10, 'a.example.test.'), mx(20, 'b.example.test.')], want: 'fallback' },
    { what: 'mixed A and AAAA need the message model', answers: [a('192.0.2.1'), aaaa('2001:db8::1')], want: 'fallback' },
    { what: 'a signature after the addresses needs the message model', answers: [a('192.0.2.1'), a('192.0.2.2'), rrsig()], want: 'fallback' },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const w = wire(c.answers, c.qname);
      const ok = balanceWire(w, zero, c.prefer ?? []);
      if (c.want === 'fallback') return assert.equal(ok, false);
      assert.equal(ok, true);
      assert.deepEqual(decodeMessage(w).answers.map(describeRR), c.want);
    });
  }

  it('reaches every order of four addresses, about evenly', () => {
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const w = wire([a('192.0.2.1'), a('192.0.2.2'), a('192.0.2.3'), a('192.0.2.4')]);
      balanceWire(w, Math.random, []);
      const first = describeRR(decodeMessage(w).answers[0] as ResourceRecord);
      firsts.set(first, (firsts.get(first) ?? 0) + 1);
    }
    assert.equal(firsts.size, 4);
    for (const n of firsts.values()) assert.ok(n > 850 && n < 1150, `first-place count ${n} of 4000`);
  });
});

describe('loadbalance in the message model', () => {
  it('orders CNAME, other, addresses shuffled, MX shuffled, as CoreDNS', () => {
    const got = balanceRecords([a('192.0.2.1'), mx(10, 'a.'), cname(N), txt('t'), aaaa('2001:db8::1'), a('192.0.2.2'), mx(20, 'b.')], zero, []);
    assert.deepEqual(got.map(describeRR), ['CNAME multi.example.test.', 'TXT t', 'AAAA 2001:db8::1', 'A 192.0.2.2', 'A 192.0.2.1', 'MX b.', 'MX a.']);
  });
});

describe('loadbalance setup', () => {
  const parse = (corefile: string): string[] => parseLoadBalance(directiveIn(corefile)).map((s) => s.text);
  const good: Array<{ corefile: string; prefer: string[] }> = [
    { corefile: 'loadbalance', prefer: [] },
    { corefile: 'loadbalance round_robin', prefer: [] },
    { corefile: 'loadbalance round_robin prefer 10.0.0.0/8 2001:db8::/32', prefer: ['10.0.0.0/8', '2001:db8::/32'] },
    { corefile: 'loadbalance prefer 10.0.0.1', prefer: ['10.0.0.1'] },
    { corefile: 'loadbalance round_robin {\n  prefer 10.0.0.0/8 192.168.0.0/16\n}', prefer: ['10.0.0.0/8', '192.168.0.0/16'] },
  ];
  for (const c of good) it(`accepts ${JSON.stringify(c.corefile)}`, () => assert.deepEqual(parse(c.corefile), c.prefer));

  const bad: Array<{ corefile: string; error: string }> = [
    { corefile: 'loadbalance weighted /etc/weights', error: 'Corefile:2: the weighted loadbalance policy is not available in kdns (use round_robin, optionally with prefer)' },
    { corefile: 'loadbalance random', error: 'Corefile:2: unknown loadbalance policy "random" (expected round_robin)' },
    { corefile: 'loadbalance round_robin fast', error: 'Corefile:2: unexpected "fast" after round_robin (expected prefer CIDR...)' },
    { corefile: 'loadbalance round_robin prefer', error: 'Corefile:2: prefer needs at least one CIDR' },
    { corefile: 'loadbalance prefer 10.0.0.0/33', error: 'Corefile:2: invalid CIDR "10.0.0.0/33" for prefer' },
    { corefile: 'loadbalance {\n  prefer 10.0.0.0/8 banana\n}', error: 'Corefile:3: invalid CIDR "banana" for prefer' },
    { corefile: 'loadbalance {\n  prefer\n}', error: 'Corefile:3: wrong argument count for "prefer": expected at least 1, got 0' },
    { corefile: 'loadbalance {\n  reload 10s\n}', error: 'Corefile:3: reload only applies to the weighted policy, which kdns does not have' },
    { corefile: 'loadbalance {\n  prefr 10.0.0.0/8\n}', error: 'Corefile:3: unknown property "prefr" in loadbalance block' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, () => {
      assertCorefileError(() => parse(c.corefile), c.error);
    });
  }
});

describe('loadbalance end to end', { skip: missing('named', 'bind9') }, () => {
  let named: NamedUpstream;
  const servers: TestServer[] = [];
  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await named.dispose();
  });

  /** First record of each of `times` answers (type 1 = A, 15 = MX), with every answer's full set checked. */
  async function firsts(s: TestServer, name: string, type: number, times: number): Promise<Map<string, number>> {
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    const out = new Map<string, number>();
    try {
      for (let i = 0; i < times; i++) {
        const m = decodeMessage(await client.exchange(buildQuery(nameToWire(name), type, 1, { id: i + 1 }), 'udp', 2000));
        const rendered = m.answers.map(describeRR);
        assert.equal(rendered.length, type === 1 ? 4 : 2);
        out.set(rendered[0] as string, (out.get(rendered[0] as string) ?? 0) + 1);
      }
    } finally {
      client.close();
    }
    return out;
  }

  const cases: Array<{ what: string; plugins: string; name: string; type: number; want: (f: Map<string, number>) => void }> = [
    {
      what: 'shuffles forwarded and cached A answers',
      plugins: 'loadbalance\n  cache',
      name: 'multi.example.test.',
      type: 1,
      want: (f) => {
        assert.equal(f.size, 4, JSON.stringify([...f]));
        for (const n of f.values()) assert.ok(n >= 20, JSON.stringify([...f]));
      },
    },
    { what: 'prefer keeps one address first', plugins: 'loadbalance round_robin {\n    prefer 192.0.2.13/32\n  }\n  cache', name: 'multi.example.test.', type: 1, want: (f) => assert.deepEqual([...f], [['A 192.0.2.13', 200]]) },
    { what: 'shuffles MX', plugins: 'loadbalance', name: 'mx.example.test.', type: 15, want: (f) => assert.equal(f.size, 2, JSON.stringify([...f])) },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const s = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  ${c.plugins}\n  forward . 127.0.0.1:${named.port}\n}\n`);
      servers.push(s);
      c.want(await firsts(s, c.name, c.type, 200));
    });
  }
});
