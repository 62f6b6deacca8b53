// Reading the searchpath directive: every form, and every mistake named by its line.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Directive } from '../../lib/corefile/ast.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseSearchpath, type SearchpathConfig } from './config.js';

const FILES: Record<string, string> = {
  '/etc/resolv.conf': 'nameserver 192.0.2.1\nsearch node.test\n',
  '/conf/my-resolv.conf': 'search corp.test lab.test\n',
};
const read = (path: string): string | undefined => FILES[path];

/** The first directive of a one-block Corefile (lines count from 1 at the block key). */
function directive(text: string): Directive {
  return parseCorefile(text, { file: 'Corefile' })[0]?.directives[0] as Directive;
}

describe('parseSearchpath', () => {
  const ok: Array<{ name: string; corefile: string; want: SearchpathConfig }> = [
    { name: 'defaults: the node\'s /etc/resolv.conf', corefile: 'ap.k8s.io {\n  searchpath\n}', want: { hostSearch: ['node.test.'], optionCode: 65534 } },
    { name: 'a named resolv.conf and option code', corefile: 'ap.k8s.io {\n  searchpath my-resolv.conf {\n    edns_option 65001\n  }\n}', want: { hostSearch: ['corp.test.', 'lab.test.'], optionCode: 65001 } },
  ];
  for (const c of ok) test(c.name, () => assert.deepEqual(parseSearchpath(directive(c.corefile), '/conf/Corefile', read), c.want));
  test('a node without /etc/resolv.conf has no host paths', () => {
    assert.deepEqual(parseSearchpath(directive('ap.k8s.io {\n  searchpath\n}'), '/conf/Corefile', () => undefined), { hostSearch: [], optionCode: 65534 });
  });
  const bad: Array<{ name: string; corefile: string; error: string }> = [
    { name: 'two arguments', corefile: 'ap.k8s.io {\n  searchpath a b\n}', error: 'Corefile:2: wrong argument count for "searchpath": expected at most 1, got 2' },
    { name: 'a named file that cannot be read', corefile: 'ap.k8s.io {\n  searchpath nope.conf\n}', error: 'Corefile:2: searchpath: cannot read /conf/nope.conf' },
    { name: 'an unknown property', corefile: 'ap.k8s.io {\n  searchpath {\n    zones x\n  }\n}', error: 'Corefile:3: unknown property "zones" in searchpath block' },
    { name: 'an option code that is not a number', corefile: 'ap.k8s.io {\n  searchpath {\n    edns_option x\n  }\n}', error: 'Corefile:3: invalid edns_option: "x" is not an integer' },
  ];
  for (const c of bad) test(`error: ${c.name}`, () => assert.throws(() => parseSearchpath(directive(c.corefile), '/conf/Corefile', read), { message: c.error }));
});
