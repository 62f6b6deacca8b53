// Wildcard owner names (`*.example.com`), as CoreDNS 1.14.5 added them to hosts: a wildcard
// answers for names one label below its parent that are not written down themselves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { answers, dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing } from '../../../test/util/upstream.js';
import { parseHostsText } from './hostsfile.js';
import { buildTable, wildcardFor } from './table.js';

describe('the wildcard that could stand for a name', () => {
  const cases: Array<[string, string | undefined]> = [
    ['foo.example.com.', '*.example.com.'],
    ['bar.intern.example.com.', '*.intern.example.com.'],
    ['example.com.', '*.com.'],
    ['com.', undefined],
    ['.', undefined],
    ['a\\.b.example.com.', '*.example.com.'], // an escaped dot belongs to its label
  ];
  for (const [name, want] of cases) test(`${name} → ${want}`, () => assert.equal(wildcardFor(name), want));
});

test('wildcard entries make no PTR records; the other entries do', () => {
  const table = buildTable([parseHostsText('192.168.33.10 *.example.com\n192.168.33.11 a.example.com\n').lines], { zones: ['.'], autoReverse: true });
  assert.deepEqual([...table.reverse], [['11.33.168.192.in-addr.arpa.', ['a.example.com.']]]);
  assert.equal(table.entries, 2);
});

// The hosts file of CoreDNS's wildcard tests, asked with the real dig.
describe('hosts wildcards end to end', { skip: missing('dig', 'bind9-dnsutils') }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    hosts hosts {
        2001:db8::10 *.example.com
    }
}
`,
      {
        files: {
          hosts: ['127.0.0.53 *.example.org', '127.0.1.52 *.intern.example.org', '127.0.0.54 foo.example.org', '192.168.33.10 *.example.com', '192.168.33.11 a.example.com', '192.168.33.12 b.example.com', ''].join('\n'),
        },
      },
    );
  });
  after(() => s.stop());

  const cases: Array<{ what: string; name: string; type: string; status: string; answers: string[] }> = [
    { what: 'a name written down: its own address', name: 'foo.example.org', type: 'A', status: 'NOERROR', answers: ['A 127.0.0.54'] },
    { what: 'a name not written down: the wildcard, owned by the name asked', name: 'bar.example.org', type: 'A', status: 'NOERROR', answers: ['A 127.0.0.53'] },
    { what: 'the more specific wildcard', name: 'bar.intern.example.org', type: 'A', status: 'NOERROR', answers: ['A 127.0.1.52'] },
    { what: 'a wildcard from the file and the inline entries: both families', name: 'c.example.com', type: 'AAAA', status: 'NOERROR', answers: ['AAAA 2001:db8::10'] },
    { what: 'the wildcard for the name asked, A', name: 'C.Example.com', type: 'A', status: 'NOERROR', answers: ['A 192.168.33.10'] },
    // Unlike CoreDNS, which looks each address family up on its own: a name written down with
    // IPv4 addresses only has no IPv6 address, rather than the wildcard's (RFC 4592: a name
    // that exists is never answered by a wildcard).
    { what: 'a name written down with an A only: no AAAA from the wildcard', name: 'a.example.com', type: 'AAAA', status: 'NOERROR', answers: [] },
    { what: 'the parent itself is not matched', name: 'example.com', type: 'A', status: 'NXDOMAIN', answers: [] },
    { what: 'only one label is matched', name: 'deep.foo.example.org', type: 'A', status: 'NXDOMAIN', answers: [] },
    { what: 'a matched name has no other types', name: 'bar.example.org', type: 'MX', status: 'NOERROR', answers: [] },
    { what: 'no PTR for a wildcard address', name: '53.0.0.127.in-addr.arpa', type: 'PTR', status: 'SERVFAIL', answers: [] },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const r = await dig(c.name, c.type, { port: s.port });
      assert.equal(r.status, c.status, r.raw);
      assert.deepEqual(answers(r), c.answers);
      if (c.answers.length > 0) assert.equal(r.answer[0]?.name, `${c.name}.`);
    });
  }
});
