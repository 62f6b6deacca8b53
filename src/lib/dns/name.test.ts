import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  canonicalName,
  cidrToReverseZones,
  fqdn,
  ipToReverseName,
  isSubdomain,
  isValidDomainName,
  labelCount,
  lowerName,
  nameEquals,
  nameToWire,
  parentName,
  reverseNameToIP,
  splitLabels,
} from './name.js';

describe('lowerName', () => {
  const cases: Array<[string, string]> = [
    ['Foo.Example.COM.', 'foo.example.com.'],
    ['already.lower.', 'already.lower.'],
    ['\\065BC.', '\\065bc.'], // \065 is "A": escapes are left as they are
    ['A\\.B.', 'a\\.b.'],
    ['ÀB.', 'Àb.'], // ASCII-only: DNS case-insensitivity does not cover other letters
    ['.', '.'],
  ];
  for (const [input, want] of cases) it(`${input} → ${want}`, () => assert.equal(lowerName(input), want));
});

describe('fqdn', () => {
  const cases: Array<[string, string]> = [
    ['a.b', 'a.b.'],
    ['a.b.', 'a.b.'],
    ['', '.'],
    ['.', '.'],
    ['Mixed.Case', 'Mixed.Case.'],
    ['a\\.', 'a\\..'], // the final dot is escaped, so the name was relative
    ['a\\\\.', 'a\\\\.'], // escaped backslash, then a real dot
  ];
  for (const [input, want] of cases) it(`${JSON.stringify(input)} → ${want}`, () => assert.equal(fqdn(input), want));
});

describe('nameEquals', () => {
  const cases: Array<[string, string, boolean]> = [
    ['Foo.COM.', 'foo.com.', true],
    ['foo.com.', 'foo.net.', false],
    ['\\065.com.', 'a.com.', true], // \065 = "A"
    ['a\\.b.com.', 'a.b.com.', false],
    ['\\046.com.', '\\..com.', true], // two spellings of a dot inside a label
    ['.', '.', true],
  ];
  for (const [x, y, want] of cases) it(`${x} vs ${y} → ${want}`, () => assert.equal(nameEquals(x, y), want));
});

describe('isSubdomain', () => {
  const cases: Array<[string, string, boolean]> = [
    ['foo.com.', 'foo.com.', true],
    ['a.foo.com.', 'foo.com.', true],
    ['A.FOO.com.', 'foo.COM.', true],
    ['xfoo.com.', 'foo.com.', false],
    ['foo.com.', 'a.foo.com.', false],
    ['anything.example.', '.', true],
    ['.', '.', true],
    ['.', 'com.', false],
    ['a\\.foo.com.', 'foo.com.', false], // labels are "a.foo" and "com"
    ['x.a\\.foo.com.', 'a\\.foo.com.', true],
    ['b.a\\\\.foo.com.', 'foo.com.', true], // "a\" is a label, then "foo"
    ['svc.cluster.local', 'cluster.local.', true], // relative input is taken as absolute
  ];
  for (const [n, z, want] of cases) it(`${n} under ${z} → ${want}`, () => assert.equal(isSubdomain(n, z), want));
});

describe('splitLabels / labelCount / parentName', () => {
  const cases: Array<{ name: string; labels: string[]; parent: string | undefined }> = [
    { name: '.', labels: [], parent: undefined },
    { name: 'com.', labels: ['com'], parent: '.' },
    { name: 'a.b.c.', labels: ['a', 'b', 'c'], parent: 'b.c.' },
    { name: 'a\\.b.c.', labels: ['a\\.b', 'c'], parent: 'c.' },
    { name: 'a\\\\.b.', labels: ['a\\\\', 'b'], parent: 'b.' },
    { name: 'x\\032y.z.', labels: ['x\\032y', 'z'], parent: 'z.' },
    { name: 'rel.name', labels: ['rel', 'name'], parent: 'name.' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(splitLabels(c.name), c.labels);
      assert.equal(labelCount(c.name), c.labels.length);
      assert.equal(parentName(c.name), c.parent);
    });
  }
});

describe('isValidDomainName', () => {
  const long63 = 'a'.repeat(63);
  const cases: Array<[string, boolean]> = [
    ['example.com.', true],
    ['example.com', true],
    ['.', true],
    ['', false],
    ['a..b.', false],
    ['.a.', false],
    [`${long63}.com.`, true],
    [`${long63}a.com.`, false],
    [`${long63}.${long63}.${long63}.${'a'.repeat(61)}.`, true], // 255 octets on the wire
    [`${long63}.${long63}.${long63}.${'a'.repeat(62)}.`, false], // 256
    ['a\\.b.', true],
    ['a\\255.', true],
    ['a\\256.', false],
    ['a\\12.', false],
    ['a\\', false],
    ['under_score.ok.', true], // DNS names, not hostnames
    ['tab\there.', false],
    ['\\009tab.', true],
  ];
  for (const [s, want] of cases) it(`${JSON.stringify(s).slice(0, 40)} → ${want}`, () => assert.equal(isValidDomainName(s), want));
});

describe('canonicalName / nameToWire', () => {
  const cases: Array<{ name: string; canonical: string; wire: number[] }> = [
    { name: '.', canonical: '.', wire: [0] },
    { name: 'a.B', canonical: 'a.B.', wire: [1, 97, 1, 66, 0] },
    { name: '\\065.', canonical: 'A.', wire: [1, 65, 0] },
    { name: '\\046\\092.', canonical: '\\.\\\\.', wire: [2, 46, 92, 0] },
    { name: 'x y.', canonical: 'x\\032y.', wire: [3, 120, 32, 121, 0] },
    { name: '\\(x\\).', canonical: '(x).', wire: [3, 40, 120, 41, 0] },
    { name: '\\000\\255.', canonical: '\\000\\255.', wire: [2, 0, 255, 0] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(canonicalName(c.name), c.canonical);
      assert.deepEqual(Array.from(nameToWire(c.name)), c.wire);
    });
  }
  it('rejects an invalid name', () => assert.throws(() => nameToWire('a..b'), /empty label/));
});

describe('ipToReverseName / reverseNameToIP', () => {
  const cases: Array<[string, string]> = [
    ['10.0.0.1', '1.0.0.10.in-addr.arpa.'],
    ['192.168.255.0', '0.255.168.192.in-addr.arpa.'],
    ['2001:db8::1', '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.'],
    ['::', '0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.'],
    ['fd00:10:96::a', 'a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.'],
  ];
  for (const [ip, name] of cases) {
    it(`${ip} ⇄ ${name.slice(0, 30)}…`, () => {
      assert.equal(ipToReverseName(ip), name);
      assert.equal(reverseNameToIP(name), ip);
    });
  }
  const notComplete: string[] = [
    '0.10.in-addr.arpa.', // a zone, not an address
    '1.0.0.0.10.in-addr.arpa.',
    '256.0.0.10.in-addr.arpa.',
    '01.0.0.10.in-addr.arpa.',
    'x.0.0.10.in-addr.arpa.',
    '1.0.ip6.arpa.',
    'g.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.',
    'example.com.',
  ];
  for (const name of notComplete) it(`${name} → undefined`, () => assert.equal(reverseNameToIP(name), undefined));
  it('accepts upper-case and relative reverse names', () => {
    assert.equal(reverseNameToIP('1.0.0.10.IN-ADDR.ARPA'), '10.0.0.1');
  });
  it('throws on a bad address', () => assert.throws(() => ipToReverseName('10.0.0'), /invalid IP/));
});

describe('cidrToReverseZones', () => {
  const cases: Array<[string, string[]]> = [
    ['10.0.0.0/24', ['0.0.10.in-addr.arpa.']],
    ['10.0.0.0/8', ['10.in-addr.arpa.']],
    ['10.0.0.9/24', ['0.0.10.in-addr.arpa.']], // host bits ignored
    ['10.0.0.1/32', ['1.0.0.10.in-addr.arpa.']],
    ['0.0.0.0/0', ['in-addr.arpa.']],
    ['10.0.0.0/23', ['0.0.10.in-addr.arpa.', '1.0.10.in-addr.arpa.']],
    ['172.16.0.0/12', Array.from({ length: 16 }, (_, k) => `${16 + k}.172.in-addr.arpa.`)],
    ['10.96.0.0/15', ['96.10.in-addr.arpa.', '97.10.in-addr.arpa.']],
    ['10.0.0.128/25', ['128.0.0.10.in-addr.arpa.']], // widened to /32: the 128 covering zones
    ['fd00::/8', ['d.f.ip6.arpa.']],
    ['2001:db8::/32', ['8.b.d.0.1.0.0.2.ip6.arpa.']],
    ['2001:db8::/30', ['8.b.d.0.1.0.0.2.ip6.arpa.', '9.b.d.0.1.0.0.2.ip6.arpa.', 'a.b.d.0.1.0.0.2.ip6.arpa.', 'b.b.d.0.1.0.0.2.ip6.arpa.']],
    ['::/0', ['ip6.arpa.']],
  ];
  for (const [cidr, want] of cases) {
    it(cidr, () => {
      const got = cidrToReverseZones(cidr);
      if (cidr === '10.0.0.128/25') {
        assert.equal(got.length, 128);
        assert.equal(got[0], want[0]);
        assert.equal(got[127], '255.0.0.10.in-addr.arpa.');
      } else {
        assert.deepEqual(got, want);
      }
    });
  }
  const bad = ['10.0.0.0', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0/8', 'x/8', '::/129', '10.0.0.0/08'];
  for (const cidr of bad) it(`${cidr} throws`, () => assert.throws(() => cidrToReverseZones(cidr), /invalid CIDR/));
});
