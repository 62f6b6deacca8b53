// acl: setup cases from CoreDNS's plugin/acl/setup_test.go, and decisions of a running kdns asked
// with dig from 127.0.0.1 (cases after acl_test.go: by type, by net, by zone, first match wins).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseAcl } from './setup.js';
import { decide } from './handler.js';

function setupVerdict(text: string): string {
  try {
    const d = parseCorefile(`example.org {\n${text}\n}\n`, { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
    assert.ok(d);
    const rule = parseAcl(d, ['example.org.']);
    return `${rule.zones.join(',')}: ${rule.policies.map((p) => `${p.action}${p.types ? ` type=${[...p.types].join(',')}` : ''}${p.nets ? ` net=${p.nets.map((n) => n.text).join(',')}` : ''}`).join('; ')}`;
  } catch (e) {
    return (e as Error).message;
  }
}

describe('acl setup', () => {
  const cases: Array<{ text: string; want: string }> = [
    { text: 'acl {\n    block\n}', want: 'example.org.: block' },
    { text: 'acl example.org {\n    block type A net 192.168.0.0/16\n}', want: 'example.org.: block type=1 net=192.168.0.0/16' },
    { text: 'acl {\n    filter type A AAAA net 192.168.0.0/16 10.0.0.0/8\n}', want: 'example.org.: filter type=1,28 net=192.168.0.0/16,10.0.0.0/8' },
    { text: 'acl {\n    allow net 192.168.1.1\n    drop type * net *\n}', want: 'example.org.: allow net=192.168.1.1; drop' },
    { text: 'acl {\n    block net 2001:db8::/32\n}', want: 'example.org.: block net=2001:db8::/32' },
    { text: 'acl {\n}', want: 'Corefile:2: acl needs a block with at least one rule ("block type ANY")' },
    { text: 'acl {\n    forbid\n}', want: 'Corefile:3: unknown acl action "forbid" (expected allow, block, filter or drop)' },
    { text: 'acl {\n    block what A\n}', want: 'Corefile:3: unexpected "what" in acl rule (expected type or net)' },
    { text: 'acl {\n    block type\n}', want: 'Corefile:3: acl type needs at least one value' },
    { text: 'acl {\n    block type ABC\n}', want: 'Corefile:3: unknown query type "ABC" in acl rule' },
    { text: 'acl {\n    block net 192.168.0/16\n}', want: 'Corefile:3: invalid network "192.168.0/16" in acl rule (expected an address or CIDR)' },
  ];
  for (const c of cases) {
    test(c.text.replaceAll('\n', ' ⏎ '), () => assert.equal(setupVerdict(c.text), c.want));
  }
});

describe('acl decide', () => {
  const rules = [{ zones: ['example.org.'], policies: [{ action: 'allow' as const, nets: [{ text: '10.0.0.1', bytes: new Uint8Array([10, 0, 0, 1]), prefix: 32 }] }, { action: 'block' as const, types: new Set([1]) }] }];
  const cases: Array<{ name: string; qtype: number; client: string; want: string }> = [
    { name: 'www.example.org.', qtype: 1, client: '10.0.0.1', want: 'allow' },
    { name: 'www.example.org.', qtype: 1, client: '10.0.0.2', want: 'block' },
    { name: 'www.example.org.', qtype: 1, client: '::ffff:10.0.0.1', want: 'allow' },
    { name: 'www.example.org.', qtype: 28, client: '10.0.0.2', want: 'allow' },
    { name: 'www.example.net.', qtype: 1, client: '10.0.0.2', want: 'allow' },
  ];
  for (const c of cases) {
    test(`${c.name} type ${c.qtype} from ${c.client}`, () => assert.equal(decide(rules, c.name, c.qtype, c.client).action, c.want));
  }
});

describe('acl served', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      '.:{PORT} {\n    bind 127.0.0.1\n    acl blocked.example {\n        block\n    }\n    acl {\n        block type A net 127.0.0.0/8\n        filter type AAAA\n        drop type MX net 127.0.0.1\n        allow\n    }\n    whoami\n}\n',
    );
  });
  after(() => s.stop());

  const cases: Array<{ name: string; type: string; want: string }> = [
    { name: 'www.example.org', type: 'A', want: 'REFUSED ede=15' },
    { name: 'www.example.org', type: 'AAAA', want: 'NOERROR ede=17' },
    { name: 'www.example.org', type: 'TXT', want: 'NOERROR' },
    { name: 'x.blocked.example', type: 'TXT', want: 'REFUSED ede=15' },
    { name: 'www.example.org', type: 'MX', want: 'no reply' },
  ];
  for (const c of cases) {
    test(`${c.name} ${c.type}`, async () => {
      let got: string;
      try {
        const r = await dig(c.name, c.type, { port: s.port, timeout: 1 });
        const ede = /EDE: (\d+)/.exec(r.raw)?.[1];
        got = `${r.status}${ede ? ` ede=${ede}` : ''}`;
      } catch {
        got = 'no reply';
      }
      assert.equal(got, c.want);
    });
  }
});
