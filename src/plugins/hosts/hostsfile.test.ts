import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeHostName, parseHostAddress, parseHostsText } from './hostsfile.js';

test('parseHostAddress: family and bytes', () => {
  const cases: Array<{ text: string; want: { family: 4 | 6; bytes: number[] } | undefined }> = [
    { text: '10.0.0.1', want: { family: 4, bytes: [10, 0, 0, 1] } },
    { text: '::1', want: { family: 6, bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } },
    { text: 'fe80::1%eth0', want: { family: 6, bytes: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } },
    { text: '::ffff:192.0.2.7', want: { family: 4, bytes: [192, 0, 2, 7] } },
    { text: '::ffff:c000:207', want: { family: 4, bytes: [192, 0, 2, 7] } },
    { text: '::192.0.2.7', want: { family: 6, bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 7] } },
    { text: '010.0.0.1', want: undefined },
    { text: '256.0.0.1', want: undefined },
    { text: 'localhost', want: undefined },
    { text: '1::2::3', want: undefined },
  ];
  for (const c of cases) {
    const got = parseHostAddress(c.text);
    assert.deepEqual(got && { family: got.family, bytes: [...got.bytes] }, c.want, c.text);
  }
});

test('normalizeHostName: lower-case absolute, or undefined', () => {
  const cases: Array<[string, string | undefined]> = [
    ['Web.Example.ORG', 'web.example.org.'],
    ['localhost', 'localhost.'],
    ['already.absolute.', 'already.absolute.'],
    ['under_score.example', 'under_score.example.'],
    ['a..b', undefined],
    ['back\\slash', undefined],
    ['x'.repeat(64) + '.example', undefined],
  ];
  for (const [text, want] of cases) assert.equal(normalizeHostName(text), want, text);
});

test('parseHostsText: entries, comments, unusable lines', () => {
  const text = [
    '# a comment line',
    '127.0.0.1   localhost',
    '',
    '10.0.0.1\tweb.example.org web   # trailing comment',
    '10.0.0.x    broken.example.org',
    '10.0.0.2',
    '2001:db8::1 Six.Example.org',
    'not-an-ip   foo',
    '   ',
  ].join('\n');
  const parsed = parseHostsText(text);
  assert.deepEqual(
    parsed.lines.map((l) => ({ line: l.line, family: l.address.family, names: l.names })),
    [
      { line: 2, family: 4, names: ['localhost.'] },
      { line: 4, family: 4, names: ['web.example.org.', 'web.'] },
      { line: 7, family: 6, names: ['six.example.org.'] },
    ],
  );
  assert.deepEqual(parsed.skipped, [
    'line 5: "10.0.0.x" is not an IP address',
    'line 6: no host name after 10.0.0.2',
    'line 8: "not-an-ip" is not an IP address',
  ]);
});

test('parseHostsText: CRLF line ends are tolerated', () => {
  const parsed = parseHostsText('10.0.0.1 a.example\r\n10.0.0.2 b.example\r\n');
  assert.deepEqual(
    parsed.lines.map((l) => l.names),
    [['a.example.'], ['b.example.']],
  );
  assert.deepEqual(parsed.skipped, []);
});
