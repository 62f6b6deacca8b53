import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rdataToString, typeName } from '../../lib/dns/rr.js';
import type { ResourceRecord } from '../../lib/dns/types.js';
import { addressRecord, SrvAnswer, srvWeight } from './records.js';

function text(r: ResourceRecord): string {
  return `${r.name} ${r.ttl} ${typeName(r.type)} ${rdataToString(r)}`;
}

test('srvWeight: each of N entries gets its share of 100, at least 1', () => {
  const cases: Array<[entries: number, weight: number]> = [
    [1, 100],
    [2, 50],
    [3, 33],
    [7, 14],
    [100, 1],
    [250, 1],
  ];
  for (const [entries, weight] of cases) assert.equal(srvWeight(entries), weight, `${entries} entries`);
});

test('addressRecord: A for IPv4, AAAA for IPv6', () => {
  assert.equal(text(addressRecord('a.example.', 5, '10.0.0.1')), 'a.example. 5 A 10.0.0.1');
  assert.equal(text(addressRecord('a.example.', 5, '2001:db8::1')), 'a.example. 5 AAAA 2001:db8::1');
});

test('SrvAnswer: one SRV per target and port, glue once per target and address', () => {
  const answer = new SrvAnswer();
  const entries: Array<{ target: string; port: number; ip: string }> = [
    { target: 'a.svc.', port: 80, ip: '10.0.0.1' },
    { target: 'a.svc.', port: 80, ip: '10.0.0.1' },
    { target: 'a.svc.', port: 443, ip: '10.0.0.1' },
    { target: 'a.svc.', port: 80, ip: '2001:db8::1' },
    { target: 'b.svc.', port: 80, ip: '10.0.0.2' },
  ];
  for (const e of entries) {
    answer.srv('_http._tcp.s.', 5, 0, 20, e.port, e.target);
    answer.glueAddress(e.target, 5, e.ip);
  }
  assert.deepEqual(answer.records.map(text), ['_http._tcp.s. 5 SRV 0 20 80 a.svc.', '_http._tcp.s. 5 SRV 0 20 443 a.svc.', '_http._tcp.s. 5 SRV 0 20 80 b.svc.']);
  assert.deepEqual(answer.extra.map(text), ['a.svc. 5 A 10.0.0.1', 'a.svc. 5 AAAA 2001:db8::1', 'b.svc. 5 A 10.0.0.2']);
});

test('SrvAnswer.add: a keyed record once, an unkeyed one every time', () => {
  const answer = new SrvAnswer();
  const mx = addressRecord('x.', 1, '10.0.0.9');
  answer.add(mx, 'k');
  answer.add(mx, 'k');
  answer.add(mx);
  answer.add(mx);
  assert.equal(answer.records.length, 3);
  assert.equal(answer.firstGlue('t.', 'h.'), true);
  assert.equal(answer.firstGlue('t.', 'h.'), false);
  assert.equal(answer.firstGlue('t.', 'g.'), true);
});
