import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { componentRegExp, globPaths, hasGlobMeta } from './glob.js';

const matchCases: Array<{ pattern: string; name: string; want: boolean }> = [
  { pattern: '*.conf', name: 'a.conf', want: true },
  { pattern: '*.conf', name: '.hidden.conf', want: true },
  { pattern: '*.conf', name: 'a.conf.bak', want: false },
  { pattern: 'a?c', name: 'abc', want: true },
  { pattern: 'a?c', name: 'ac', want: false },
  { pattern: '[ab].conf', name: 'b.conf', want: true },
  { pattern: '[ab].conf', name: 'c.conf', want: false },
  { pattern: '[^ab].conf', name: 'c.conf', want: true },
  { pattern: '[a-c]x', name: 'bx', want: true },
  { pattern: '[a-c]x', name: 'dx', want: false },
  { pattern: '\\*', name: '*', want: true },
  { pattern: '\\*', name: 'a', want: false },
  { pattern: 'a.b', name: 'axb', want: false },
  { pattern: '(x)+', name: '(x)+', want: true },
];

describe('componentRegExp', () => {
  for (const c of matchCases) {
    it(`${c.pattern} ${c.want ? 'matches' : 'does not match'} ${c.name}`, () => {
      assert.equal(componentRegExp(c.pattern).test(c.name), c.want);
    });
  }

  for (const bad of ['[ab', '[b-a]', 'x\\']) {
    it(`rejects ${bad}`, () => {
      assert.throws(() => componentRegExp(bad));
    });
  }
});

describe('hasGlobMeta', () => {
  const cases: Array<[string, boolean]> = [
    ['conf.d/a.conf', false],
    ['conf.d/*.conf', true],
    ['a?', true],
    ['[ab]', true],
  ];
  for (const [pattern, want] of cases) {
    it(pattern, () => {
      assert.equal(hasGlobMeta(pattern), want);
    });
  }
});

describe('globPaths', () => {
  const tree: Record<string, string[]> = {
    '/etc': ['coredns', 'hosts'],
    '/etc/coredns': ['b.server', 'a.server', 'notes.txt', 'sites'],
    '/etc/coredns/sites': ['x', 'y'],
    '/etc/coredns/sites/x': ['zone.server'],
    '/etc/coredns/sites/y': ['other'],
  };
  const listDir = (dir: string): string[] => {
    const entries = tree[dir];
    if (!entries) throw new Error(`ENOTDIR: ${dir}`);
    return entries;
  };
  const cases: Array<{ pattern: string; want: string[] }> = [
    { pattern: '/etc/coredns/*.server', want: ['/etc/coredns/a.server', '/etc/coredns/b.server'] },
    { pattern: '/etc/coredns/sites/*/zone.server', want: ['/etc/coredns/sites/x/zone.server'] },
    { pattern: '/etc/coredns/*/x', want: ['/etc/coredns/sites/x'] },
    { pattern: '/etc/coredns/none/*', want: [] },
    { pattern: '/etc/coredns/a.server', want: ['/etc/coredns/a.server'] },
  ];
  for (const c of cases) {
    it(c.pattern, () => {
      assert.deepEqual(globPaths(c.pattern, listDir), c.want);
    });
  }
});
