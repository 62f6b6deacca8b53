import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import type { Message, ResourceRecord } from '../../lib/dns/types.js';
import type { DnsRequest } from '../../server/request.js';
import { edns, responseMessage, testRequest } from '../../../test/util/request.js';
import { answerFrom, makeEntry, type CacheEntry } from './entry.js';
import { defaultCacheOptions, type CacheOptions } from './options.js';

const OPTS: CacheOptions = defaultCacheOptions(['.'], 10);

function request(name: string, opts: { id?: number; rd?: boolean; edns?: boolean; dnssecOk?: boolean } = {}): DnsRequest {
  return testRequest(name, 1, { id: opts.id, rd: opts.rd, edns: opts.edns ? edns(4096, { do: opts.dnssecOk ?? false }) : undefined });
}

const a = (name: string, ttl: number, address = '192.0.2.1'): ResourceRecord => ({ name, type: 1, class: 1, ttl, data: { address } });
const soa = (ttl: number, minimum: number): ResourceRecord => ({
  name: 'example.test.',
  type: 6,
  class: 1,
  ttl,
  data: { mname: 'ns.example.test.', rname: 'h.example.test.', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum },
});
const cname = (name: string, ttl: number, target: string): ResourceRecord => ({ name, type: 5, class: 1, ttl, data: { target } });
const ns = (ttl: number): ResourceRecord => ({ name: 'example.test.', type: 2, class: 1, ttl, data: { target: 'ns.example.test.' } });

function reply(name: string, over: Partial<Message>): Buffer {
  return encodeMessage(responseMessage({ id: 77, aa: true, ra: true, questions: [{ name, type: 1, class: 1 }], edns: edns(), ...over }));
}

describe('cache entries', () => {
  const N = 'www.example.test.';
  const cases: Array<{ what: string; reply: Buffer; opts?: Partial<CacheOptions>; want: { kind?: string; ttl?: number; lifetimeMs?: number; skip?: boolean; drop?: string } }> = [
    { what: 'answer: smallest TTL of all records', reply: reply(N, { answers: [a(N, 300), a(N, 120, '192.0.2.2')], authority: [ns(60)] }), want: { kind: 'success', ttl: 60 } },
    { what: 'answer capped at success TTL', reply: reply(N, { answers: [a(N, 86400)] }), want: { kind: 'success', ttl: 3600 } },
    { what: 'answer raised to MINTTL', reply: reply(N, { answers: [a(N, 1)] }), want: { kind: 'success', ttl: 5 } },
    { what: 'TTL 0 raised to MINTTL as CoreDNS', reply: reply(N, { answers: [a(N, 0)] }), want: { kind: 'success', ttl: 5 } },
    { what: 'NXDOMAIN: min(SOA TTL, SOA MINIMUM)', reply: reply(N, { rcode: 3, authority: [soa(3600, 30)] }), want: { kind: 'denial', ttl: 30 } },
    { what: 'NXDOMAIN: SOA TTL when smaller', reply: reply(N, { rcode: 3, authority: [soa(20, 900)] }), want: { kind: 'denial', ttl: 20 } },
    { what: 'NODATA (NOERROR, SOA, no answer)', reply: reply(N, { authority: [soa(600, 60)] }), want: { kind: 'denial', ttl: 60 } },
    // RFC 2308 §5: a negative answer without a SOA is not cached (CoreDNS 1.14.7 likewise).
    { what: 'NXDOMAIN without SOA is not cached', reply: reply(N, { rcode: 3 }), want: { skip: true } },
    { what: 'NODATA without SOA (NOERROR, nothing at all) is not cached', reply: reply(N, {}), want: { skip: true } },
    { what: 'a CNAME chain that stops short, without SOA, is not cached', reply: reply(N, { answers: [cname(N, 300, 'w.cdn.test.')] }), want: { skip: true } },
    { what: 'a CNAME chain that stops short, with SOA, is NODATA', reply: reply(N, { answers: [cname(N, 300, 'w.cdn.test.')], authority: [soa(600, 40)] }), want: { kind: 'denial', ttl: 40 } },
    { what: 'a CNAME chain that ends in the asked type is an answer', reply: reply(N, { answers: [cname(N, 300, 'w.cdn.test.'), a('w.cdn.test.', 200)] }), want: { kind: 'success', ttl: 200 } },
    { what: 'an A record of another name only does not answer', reply: reply(N, { answers: [a('other.example.test.', 300)] }), want: { skip: true } },
    { what: 'a CNAME loop answers nothing', reply: reply(N, { answers: [cname(N, 300, 'x.example.test.'), cname('x.example.test.', 300, N), a('x.example.test.', 300)] }), want: { skip: true } },
    { what: 'an owner with two CNAME targets answers nothing', reply: reply(N, { answers: [cname(N, 300, 'x.example.test.'), cname(N, 300, 'y.example.test.'), a('x.example.test.', 300)] }), want: { skip: true } },
    { what: 'data in the additional section alone is kept (as whoami answers)', reply: reply(N, { additional: [a(N, 60)] }), want: { kind: 'success', ttl: 60 } },
    { what: 'denial capped at denial TTL', reply: reply(N, { rcode: 3, authority: [soa(86400, 86400)] }), want: { kind: 'denial', ttl: 1800 } },
    { what: 'referral is data', reply: reply(N, { authority: [ns(300)] }), want: { kind: 'success', ttl: 300 } },
    { what: 'SERVFAIL for the servfail duration', reply: reply(N, { rcode: 2 }), want: { kind: 'denial', ttl: 5, lifetimeMs: 5000 } },
    { what: 'SERVFAIL with servfail 0', reply: reply(N, { rcode: 2 }), opts: { servfailMs: 0 }, want: { skip: true } },
    { what: 'REFUSED', reply: reply(N, { rcode: 5 }), want: { skip: true } },
    { what: 'truncated', reply: reply(N, { tc: true, answers: [a(N, 300)] }), want: { skip: true } },
    { what: 'a reply to another name', reply: reply('other.example.test.', { answers: [a('other.example.test.', 300)] }), want: { drop: 'reply question does not match the query' } },
    { what: 'garbage', reply: Buffer.from('0001800000010000', 'hex'), want: { drop: 'short reply' } },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const made = makeEntry(c.reply, request(N), 4, 1_000_000, { ...OPTS, ...c.opts });
      if (c.want.skip) return assert.ok('skip' in made, JSON.stringify(made));
      if (c.want.drop) return assert.deepEqual(made, { drop: c.want.drop });
      assert.ok('entry' in made, JSON.stringify(made));
      assert.deepEqual([made.entry.kind, made.entry.ttl, made.entry.expiresAt - made.entry.storedAt], [c.want.kind, c.want.ttl, c.want.lifetimeMs ?? (c.want.ttl as number) * 1000]);
    });
  }

  function stored(): CacheEntry {
    const made = makeEntry(reply(N, { answers: [a(N, 300), a(N, 300, '192.0.2.2')], authority: [soa(300, 300)] }), request(N), 4, 1_000_000, OPTS);
    assert.ok('entry' in made);
    return made.entry;
  }

  const answers: Array<{ what: string; req: DnsRequest; at: number; keepTtl?: boolean; want: { id: number; rd: boolean; aa: boolean; name: string; ttls: number[]; edns?: { do: boolean } } }> = [
    { what: 'same second: full TTL', req: request(N, { id: 4242 }), at: 1_000_999, want: { id: 4242, rd: true, aa: true, name: N, ttls: [300, 300, 300] } },
    { what: 'TTL counts down by whole seconds', req: request('WWW.Example.TEST.', { id: 9, rd: false }), at: 1_061_500, want: { id: 9, rd: false, aa: true, name: 'WWW.Example.TEST.', ttls: [239, 239, 239] } },
    { what: 'keepttl serves the stored TTL', req: request(N), at: 1_200_000, keepTtl: true, want: { id: 1, rd: true, aa: true, name: N, ttls: [300, 300, 300] } },
    { what: 'expired (stale): TTL 0', req: request(N), at: 1_400_000, want: { id: 1, rd: true, aa: true, name: N, ttls: [0, 0, 0] } },
    { what: 'EDNS client gets an OPT with DO echoed', req: request(N, { edns: true, dnssecOk: true }), at: 1_000_000, want: { id: 1, rd: true, aa: true, name: N, ttls: [300, 300, 300], edns: { do: true } } },
  ];
  for (const c of answers) {
    it(`hit: ${c.what}`, () => {
      const m = decodeMessage(answerFrom(stored(), c.req, c.at, c.keepTtl ?? false));
      assert.deepEqual(
        { id: m.id, rd: m.rd, aa: m.aa, name: m.questions[0]?.name, ttls: [...m.answers, ...m.authority].map((r) => r.ttl), edns: m.edns ? { do: m.edns.do } : undefined },
        { ...c.want, edns: c.want.edns },
      );
      assert.deepEqual(
        m.answers.map((r) => (r.data as { address: string }).address),
        ['192.0.2.1', '192.0.2.2'],
      );
    });
  }

  it('the entry keeps its own copy of the bytes', () => {
    const bytes = reply(N, { answers: [a(N, 300)] });
    const made = makeEntry(bytes, request(N), 4, 0, OPTS);
    assert.ok('entry' in made);
    bytes.fill(0);
    assert.equal((decodeMessage(answerFrom(made.entry, request(N), 0, false)).answers[0]?.data as { address: string }).address, '192.0.2.1');
  });
});
