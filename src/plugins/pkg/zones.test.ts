import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { fallsThrough, parseFallthrough } from './fallthrough.js';
import { inZones, normalizeZones, zoneArgAt, zoneArgs } from './zones.js';

test('inZones', () => {
  const cases: Array<[string, string[], boolean]> = [
    ['a.example.org.', ['example.org.'], true],
    ['example.org.', ['example.org.'], true],
    ['badexample.org.', ['example.org.'], false],
    ['example.org.', ['a.example.org.'], false],
    ['anything.', ['.'], true],
    ['x.test.', ['example.org.', 'test.'], true],
    // "a\.example" is one label: the name is under org., not example.org.
    ['a\\.example.org.', ['example.org.'], false],
    ['a\\.example.org.', ['org.'], true],
    ['a\\.example.org.', ['a\\.example.org.'], true],
    ['b.a\\.example.org.', ['a\\.example.org.'], true],
    ['x\\.example.org.', ['\\.example.org.'], false],
    ['x.test.', [], false],
  ];
  for (const [name, zones, want] of cases) assert.equal(inZones(name, zones), want, `${name} in ${zones.join(',')}`);
});

test('normalizeZones and zoneArgs: names and CIDRs, errors at the argument', () => {
  const ok: Array<{ line: string; want: string[] }> = [
    { line: 'hosts Example.ORG', want: ['example.org.'] },
    { line: 'hosts example.org.', want: ['example.org.'] },
    { line: 'hosts 10.0.0.0/24', want: ['0.0.10.in-addr.arpa.'] },
    { line: 'hosts 10.0.0.0/23', want: ['0.0.10.in-addr.arpa.', '1.0.10.in-addr.arpa.'] },
    { line: 'hosts a.test b.test', want: ['a.test.', 'b.test.'] },
  ];
  for (const c of ok) {
    const d = directiveIn(c.line);
    assert.deepEqual(zoneArgs(d, d.args), c.want, c.line);
    assert.deepEqual(d.args.flatMap((a) => normalizeZones(a, d)), c.want, c.line);
  }
  const bad: Array<{ line: string; error: string }> = [
    { line: 'hosts 10.0.0.0/33', error: 'Corefile:2: invalid argument "10.0.0.0/33" for "hosts": not a valid CIDR' },
    { line: 'hosts a..b', error: 'Corefile:2: invalid argument "a..b" for "hosts": not a valid zone name' },
  ];
  for (const c of bad) {
    const d = directiveIn(c.line);
    assertCorefileError(() => zoneArgs(d, d.args), c.error);
  }
});

test('zoneArgAt: the zone part of an argument; errors quote the argument as written', () => {
  const ok: Array<{ line: string; index: number; bare: string; want: string[] }> = [
    { line: 'cache 30 example.org', index: 1, bare: 'example.org', want: ['example.org.'] },
    { line: 'cache dns://Example.org', index: 0, bare: 'Example.org', want: ['example.org.'] },
    { line: 'cache 192.168.0.0/16', index: 0, bare: '192.168.0.0/16', want: ['168.192.in-addr.arpa.'] },
  ];
  for (const c of ok) assert.deepEqual(zoneArgAt(directiveIn(c.line), c.index, c.bare), c.want, c.line);
  const bad: Array<{ line: string; index: number; bare: string; error: string }> = [
    { line: 'cache dns://10.0.0.0/40', index: 0, bare: '10.0.0.0/40', error: 'Corefile:2: invalid zone "dns://10.0.0.0/40" for "cache": not a valid CIDR' },
    { line: 'autopath a..b:53 /etc/resolv.conf', index: 0, bare: 'a..b', error: 'Corefile:2: invalid zone "a..b:53" for "autopath": not a valid domain name' },
  ];
  for (const c of bad) assertCorefileError(() => zoneArgAt(directiveIn(c.line), c.index, c.bare), c.error);
});

test('fallsThrough: off, every zone, or the listed zones', () => {
  const cases: Array<{ fallthrough: string[] | undefined; name: string; want: boolean }> = [
    { fallthrough: undefined, name: 'a.example.org.', want: false },
    { fallthrough: [], name: 'a.example.org.', want: true },
    { fallthrough: ['example.org.'], name: 'a.example.org.', want: true },
    { fallthrough: ['example.org.'], name: 'a.example.net.', want: false },
  ];
  for (const c of cases) assert.equal(fallsThrough(c.fallthrough, c.name), c.want, `${c.name} with ${JSON.stringify(c.fallthrough)}`);
});

test('parseFallthrough: zones of the property, none for every zone', () => {
  assert.deepEqual(parseFallthrough(directiveIn('fallthrough')), []);
  assert.deepEqual(parseFallthrough(directiveIn('fallthrough Example.org 10.0.0.0/8')), ['example.org.', '10.in-addr.arpa.']);
  assertCorefileError(() => parseFallthrough(directiveIn('fallthrough a..b')), 'Corefile:2: invalid argument "a..b" for "fallthrough": not a valid zone name');
});
