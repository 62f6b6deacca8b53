import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHostsText } from './hostsfile.js';
import { addressText, buildTable, type HostsTable } from './table.js';

function lines(text: string) {
  return parseHostsText(text).lines;
}

/** The table as plain text, easy to compare. */
function show(t: HostsTable) {
  return {
    names: Object.fromEntries(
      [...t.names].map(([n, a]) => [n, [...a.v4.map((b) => addressText({ family: 4, bytes: b })), ...a.v6.map((b) => addressText({ family: 6, bytes: b }))]]),
    ),
    reverse: Object.fromEntries(t.reverse),
    entries: t.entries,
  };
}

test('buildTable', () => {
  const cases: Array<{
    name: string;
    file: string;
    inline?: string;
    zones?: string[];
    autoReverse?: boolean;
    want: ReturnType<typeof show>;
  }> = [
    {
      name: 'names and aliases share an address; PTR lists them in order',
      file: '10.0.0.1 web.example.org web2.example.org',
      want: {
        names: { 'web.example.org.': ['10.0.0.1'], 'web2.example.org.': ['10.0.0.1'] },
        reverse: { '1.0.0.10.in-addr.arpa.': ['web.example.org.', 'web2.example.org.'] },
        entries: 2,
      },
    },
    {
      name: 'file entries come before inline entries; duplicates once',
      file: '10.0.0.1 web.example.org\n10.0.0.1 web.example.org',
      inline: '10.0.0.9 web.example.org\n10.0.0.1 web.example.org',
      want: {
        names: { 'web.example.org.': ['10.0.0.1', '10.0.0.9'] },
        reverse: { '1.0.0.10.in-addr.arpa.': ['web.example.org.'], '9.0.0.10.in-addr.arpa.': ['web.example.org.'] },
        entries: 2,
      },
    },
    {
      name: 'names outside the zones are left out, with their PTR',
      file: '10.0.0.1 web.example.org\n10.0.0.2 other.test',
      zones: ['example.org.'],
      want: {
        names: { 'web.example.org.': ['10.0.0.1'] },
        reverse: { '1.0.0.10.in-addr.arpa.': ['web.example.org.'] },
        entries: 1,
      },
    },
    {
      name: 'no_reverse: no PTR at all',
      file: '10.0.0.1 web.example.org',
      autoReverse: false,
      want: { names: { 'web.example.org.': ['10.0.0.1'] }, reverse: {}, entries: 1 },
    },
    {
      name: 'IPv6 and IPv4-mapped addresses',
      file: '2001:db8::1 six.example.org\n::ffff:10.0.0.3 mapped.example.org',
      want: {
        names: { 'six.example.org.': ['2001:db8::1'], 'mapped.example.org.': ['10.0.0.3'] },
        reverse: {
          '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.': ['six.example.org.'],
          '3.0.0.10.in-addr.arpa.': ['mapped.example.org.'],
        },
        entries: 2,
      },
    },
  ];
  for (const c of cases) {
    const table = buildTable([lines(c.file), lines(c.inline ?? '')], { zones: c.zones ?? ['.'], autoReverse: c.autoReverse ?? true });
    assert.deepEqual(show(table), c.want, c.name);
  }
});
