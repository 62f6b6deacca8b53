// CoreDNS's k8s_external setup_test.go table, and every bad value as an error naming its line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { testBlock, testShared } from '../../../test/util/request.js';
import type { ServerControl } from '../../server/plugin.js';
import { parseExternal, setup } from './setup.js';

describe('k8s_external setup: CoreDNS setup_test.go', () => {
  const cases: Array<[string, { zones: string[]; apex: string; headless: boolean; fallthrough?: string[] }]> = [
    ['k8s_external', { zones: ['example.net.'], apex: 'dns', headless: false }],
    ['k8s_external example.org', { zones: ['example.org.'], apex: 'dns', headless: false }],
    ['k8s_external example.org {\n apex testdns\n}', { zones: ['example.org.'], apex: 'testdns', headless: false }],
    ['k8s_external example.org {\n headless\n}', { zones: ['example.org.'], apex: 'dns', headless: true }],
    ['k8s_external example.org {\n fallthrough\n}', { zones: ['example.org.'], apex: 'dns', headless: false, fallthrough: [] }],
    ['k8s_external example.org {\n fallthrough ip6.arpa inaddr.arpa foo.com\n}', { zones: ['example.org.'], apex: 'dns', headless: false, fallthrough: ['ip6.arpa.', 'inaddr.arpa.', 'foo.com.'] }],
  ];
  for (const [corefile, want] of cases) {
    test(corefile.replaceAll('\n', ' '), () => {
      const c = parseExternal(directiveIn(corefile, 'example.net'), ['example.net.']);
      assert.deepEqual({ zones: c.zones, apex: c.apex, headless: c.headless, ...(c.fallthrough ? { fallthrough: c.fallthrough } : {}) }, want);
    });
  }
  test('ttl', () => assert.equal(parseExternal(directiveIn('k8s_external {\n ttl 3600\n}'), ['.']).ttl, 3600));
});

describe('k8s_external setup: bad values name their line', () => {
  const cases: Array<[string, string]> = [
    ['k8s_external {\n ttl\n}', 'Corefile:3: wrong argument count for "ttl": expected 1, got 0'],
    ['k8s_external {\n ttl -1\n}', 'Corefile:3: ttl must be between 0 and 3600, got -1'],
    ['k8s_external {\n ttl 3601\n}', 'Corefile:3: ttl must be between 0 and 3600, got 3601'],
    ['k8s_external {\n ttl five\n}', 'Corefile:3: invalid ttl: "five" is not an integer'],
    ['k8s_external {\n apex\n}', 'Corefile:3: wrong argument count for "apex": expected 1, got 0'],
    ['k8s_external {\n apex a.b\n}', 'Corefile:3: invalid argument "a.b" for "apex": the apex is one DNS label, such as "dns"'],
    ['k8s_external {\n headless yes\n}', 'Corefile:3: wrong argument count for "headless": expected no arguments, got 1'],
    ['k8s_external {\n fallthrough a..b\n}', 'Corefile:3: invalid argument "a..b" for "fallthrough": not a valid zone name'],
    ['k8s_external {\n tll 5\n}', 'Corefile:3: unknown property "tll" in k8s_external block'],
    ['k8s_external {\n apex x\n apex y\n}', 'Corefile:4: duplicate property "apex" in k8s_external block'],
    ['k8s_external bad..zone', 'Corefile:2: invalid argument "bad..zone" for "k8s_external": not a valid zone name'],
  ];
  for (const [corefile, message] of cases) {
    test(message, () => assertCorefileError(() => parseExternal(directiveIn(corefile), ['.']), message));
  }

  test('without the kubernetes plugin in the block', () => {
    const ctx = {
      directive: directiveIn('k8s_external example.org'),
      block: testBlock(['.'], { plugins: ['k8s_external', 'forward'] }),
      corefilePath: '/Corefile',
      shared: testShared(),
      options: { defaultPort: 53 },
      instance: new Map<string, unknown>(),
      server: {} as ServerControl,
    };
    assertCorefileError(() => setup(ctx), 'Corefile:2: k8s_external needs the kubernetes plugin in the same server block');
  });
});
