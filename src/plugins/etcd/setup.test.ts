// CoreDNS's etcd setup_test.go table, and every bad value as an error naming its line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { parseEtcd } from './setup.js';

const parse = (corefile: string, corefilePath = '/Corefile') => parseEtcd(directiveIn(corefile, 'skydns.local'), ['skydns.local.'], corefilePath);

describe('etcd setup: CoreDNS setup_test.go', () => {
  const cases: Array<[string, { path: string; endpoints: string[]; credentials?: { username: string; password: string }; min?: number; max?: number }]> = [
    ['etcd', { path: 'skydns', endpoints: ['http://localhost:2379'] }],
    ['etcd {\n endpoint http://localhost:2379 http://localhost:3379 http://localhost:4379\n}', { path: 'skydns', endpoints: ['http://localhost:2379', 'http://localhost:3379', 'http://localhost:4379'] }],
    ['etcd skydns.local {\n endpoint localhost:300\n}', { path: 'skydns', endpoints: ['http://localhost:300'] }],
    ['etcd {\n endpoint http://localhost:2379\n credentials username password\n}', { path: 'skydns', endpoints: ['http://localhost:2379'], credentials: { username: 'username', password: 'password' } }],
    ['etcd {\n endpoint http://localhost:2379\n min-lease-ttl 60\n}', { path: 'skydns', endpoints: ['http://localhost:2379'], min: 60 }],
    ['etcd {\n endpoint http://localhost:2379\n max-lease-ttl 1h\n}', { path: 'skydns', endpoints: ['http://localhost:2379'], max: 3600 }],
    ['etcd {\n endpoint http://localhost:2379\n min-lease-ttl 120\n max-lease-ttl 7200\n}', { path: 'skydns', endpoints: ['http://localhost:2379'], min: 120, max: 7200 }],
    ['etcd {\n path /coredns\n}', { path: '/coredns', endpoints: ['http://localhost:2379'] }],
  ];
  for (const [corefile, want] of cases) {
    test(corefile.replaceAll('\n', ' '), () => {
      const c = parse(corefile);
      assert.equal(c.path, want.path);
      assert.deepEqual(c.client.endpoints, want.endpoints);
      assert.deepEqual(c.client.credentials, want.credentials);
      assert.equal(c.minLeaseTtl, want.min ?? 30);
      assert.equal(c.maxLeaseTtl, want.max ?? 86400);
    });
  }

  test('zones default to the server block; fallthrough zones', () => {
    assert.deepEqual(parse('etcd').zones, ['skydns.local.']);
    const c = parse('etcd skydns.local 10.0.0.0/24 {\n fallthrough in-addr.arpa\n}');
    assert.deepEqual(c.zones, ['skydns.local.', '0.0.10.in-addr.arpa.']);
    assert.deepEqual(c.fallthrough, ['in-addr.arpa.']);
  });

  test('tls reads its files relative to the Corefile, in each of its forms', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-etcd-setup-'));
    for (const f of ['c.pem', 'k.pem', 'ca.pem']) writeFileSync(join(dir, f), `${f}\n`);
    const at = join(dir, 'Corefile');
    assert.deepEqual(parse('etcd {\n tls\n}', at).client.tls, {});
    assert.deepEqual(parse('etcd {\n tls ca.pem\n}', at).client.tls, { ca: 'ca.pem\n' });
    assert.deepEqual(parse('etcd {\n tls c.pem k.pem\n}', at).client.tls, { cert: 'c.pem\n', key: 'k.pem\n' });
    assert.deepEqual(parse('etcd {\n tls c.pem k.pem ca.pem\n}', at).client.tls, { cert: 'c.pem\n', key: 'k.pem\n', ca: 'ca.pem\n' });
  });
});

describe('etcd setup: bad values name their line', () => {
  const cases: Array<[string, string]> = [
    ['etcd {\n endpoints localhost:300\n}', 'Corefile:3: unknown property "endpoints" in etcd block'],
    ['etcd {\n credentials username\n}', 'Corefile:3: wrong argument count for "credentials": expected 2, got 1'],
    ['etcd {\n credentials\n}', 'Corefile:3: wrong argument count for "credentials": expected 2, got 0'],
    ['etcd {\n endpoint\n}', 'Corefile:3: wrong argument count for "endpoint": expected at least 1, got 0'],
    ['etcd {\n endpoint ftp://x:1\n}', 'Corefile:3: invalid argument "ftp://x:1" for "endpoint": expected an http:// or https:// URL such as http://localhost:2379'],
    ['etcd {\n path\n}', 'Corefile:3: wrong argument count for "path": expected 1, got 0'],
    ['etcd {\n path /\n}', 'Corefile:3: invalid argument "/" for "path": the path names a key prefix, such as /skydns'],
    ['etcd {\n min-lease-ttl soon\n}', 'Corefile:3: invalid duration for min-lease-ttl: "soon" (expected seconds or a Go duration such as 500ms, 5s or 1m30s)'],
    ['etcd {\n max-lease-ttl 0\n}', 'Corefile:3: max-lease-ttl must be at least 1s, got 0'],
    ['etcd {\n min-lease-ttl 2h\n max-lease-ttl 1h\n}', 'Corefile:2: min-lease-ttl (7200s) is larger than max-lease-ttl (3600s)'],
    ['etcd {\n tls a b c d\n}', 'Corefile:3: wrong argument count for "tls": expected at most 3, got 4'],
    ['etcd {\n tls /nonexistent/ca.pem\n}', 'Corefile:3: tls: cannot read /nonexistent/ca.pem: ENOENT'],
    ['etcd {\n path /a\n path /b\n}', 'Corefile:4: duplicate property "path" in etcd block'],
    ['etcd bad..zone', 'Corefile:2: invalid argument "bad..zone" for "etcd": not a valid zone name'],
  ];
  for (const [corefile, message] of cases) {
    test(message, () => assertCorefileError(() => parse(corefile), message));
  }
});
