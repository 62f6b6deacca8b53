// Reading the autopath directive: every form, and every mistake named by its line.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Directive } from '../../lib/corefile/ast.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseAutopath, type AutopathConfig } from './config.js';

const FILES: Record<string, string> = {
  '/etc/resolv.conf': 'nameserver 192.0.2.1\nsearch node.test\n',
  '/conf/my-resolv.conf': 'search corp.test lab.test\n',
  '/conf/host.conf': 'search host.test\n',
};
const read = (path: string): string | undefined => FILES[path];

/** The first directive of a one-block Corefile (lines count from 1 at the block key). */
function directive(text: string): Directive {
  return parseCorefile(text, { file: 'Corefile' })[0]?.directives[0] as Directive;
}

describe('parseAutopath', () => {
  const ok: Array<{ name: string; corefile: string; want: AutopathConfig }> = [
    {
      name: 'a resolv.conf next to the Corefile: every zone of the block, its paths are the host paths',
      corefile: '. {\n  autopath my-resolv.conf\n}',
      want: {
        zones: ['.'],
        source: { kind: 'file', path: '/conf/my-resolv.conf', search: ['corp.test.', 'lab.test.'] },
        hostSearch: ['corp.test.', 'lab.test.'],
        optionCode: 65534,
      },
    },
    {
      name: '@kubernetes: host paths from /etc/resolv.conf, as CoreDNS',
      corefile: 'cluster.local {\n  autopath @kubernetes\n}',
      want: { zones: ['cluster.local.'], source: { kind: 'kubernetes' }, hostSearch: ['node.test.'], optionCode: 65534 },
    },
    {
      name: 'zones, a resolv_conf for @kubernetes and another option code',
      corefile: '. {\n  autopath Cluster.Local dns://ap.k8s.io:53 @kubernetes {\n    resolv_conf host.conf\n    edns_option 65100\n  }\n}',
      want: { zones: ['cluster.local.', 'ap.k8s.io.'], source: { kind: 'kubernetes' }, hostSearch: ['host.test.'], optionCode: 65100 },
    },
    {
      name: 'the ap.k8s.io scheme alone (no pod watch)',
      corefile: '. {\n  autopath ap.k8s.io /etc/resolv.conf\n}',
      want: { zones: ['ap.k8s.io.'], source: { kind: 'file', path: '/etc/resolv.conf', search: ['node.test.'] }, hostSearch: ['node.test.'], optionCode: 65534 },
    },
  ];
  for (const c of ok) {
    test(c.name, () => assert.deepEqual(parseAutopath(directive(c.corefile), ['.' === c.corefile[0] ? '.' : 'cluster.local.'], '/conf/Corefile', read), c.want));
  }

  const bad: Array<{ name: string; corefile: string; error: string }> = [
    { name: 'no argument', corefile: '. {\n  autopath\n}', error: 'Corefile:2: autopath: no resolv-conf specified (expected [ZONES...] RESOLV-CONF or @kubernetes)' },
    { name: 'a plugin that gives no search paths', corefile: '. {\n  autopath @erratic\n}', error: 'Corefile:2: invalid argument "@erratic" for "autopath": the only plugin kdns can ask for search paths is @kubernetes' },
    { name: 'a resolv.conf that cannot be read', corefile: '. {\n  autopath missing.conf\n}', error: 'Corefile:2: autopath: cannot read /conf/missing.conf' },
    { name: 'a bad zone', corefile: '. {\n  autopath bad..zone @kubernetes\n}', error: 'Corefile:2: invalid zone "bad..zone" for "autopath": not a valid domain name' },
    { name: 'an option code outside the local range', corefile: '. {\n  autopath @kubernetes {\n    edns_option 15\n  }\n}', error: 'Corefile:3: edns_option must be between 65001 and 65534, got 15' },
    { name: 'an unknown property', corefile: '. {\n  autopath @kubernetes {\n    fallthrough\n  }\n}', error: 'Corefile:3: unknown property "fallthrough" in autopath block' },
    { name: 'a property twice', corefile: '. {\n  autopath @kubernetes {\n    edns_option 65100\n    edns_option 65101\n  }\n}', error: 'Corefile:4: duplicate property "edns_option" in autopath block' },
    {
      name: 'resolv_conf with a RESOLV-CONF argument',
      corefile: '. {\n  autopath my-resolv.conf {\n    resolv_conf host.conf\n  }\n}',
      error: 'Corefile:3: autopath: resolv_conf is for @kubernetes; with a RESOLV-CONF argument its search paths are the host paths',
    },
    { name: 'a resolv_conf that cannot be read', corefile: '. {\n  autopath @kubernetes {\n    resolv_conf nope.conf\n  }\n}', error: 'Corefile:3: autopath resolv_conf: cannot read /conf/nope.conf' },
  ];
  for (const c of bad) {
    test(`error: ${c.name}`, () => assert.throws(() => parseAutopath(directive(c.corefile), ['.'], '/conf/Corefile', read), { message: c.error }));
  }
});
