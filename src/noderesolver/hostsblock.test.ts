import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BEGIN_MARKER, END_MARKER, parseHosts, withEntries } from './hostsblock.js';
import type { HostEntry } from './hostsblock.js';

const B = BEGIN_MARKER;
const E = END_MARKER;
const reg: HostEntry = { ip: '10.0.0.5', names: ['reg.ns.svc', 'reg.ns.svc.cluster.local'] };
const reg6: HostEntry = { ip: 'fd00::5', names: ['reg.ns.svc', 'reg.ns.svc.cluster.local'] };
const REG = '10.0.0.5 reg.ns.svc reg.ns.svc.cluster.local';
const REG6 = 'fd00::5 reg.ns.svc reg.ns.svc.cluster.local';

const cases: Array<{ name: string; text: string; entries: HostEntry[]; want: string }> = [
  { name: 'appended to a file without a block', text: '127.0.0.1 localhost\n', entries: [reg], want: `127.0.0.1 localhost\n${B}\n${REG}\n${E}\n` },
  { name: 'a last line without newline gets one first', text: '127.0.0.1 localhost', entries: [reg], want: `127.0.0.1 localhost\n${B}\n${REG}\n${E}\n` },
  { name: 'an empty file', text: '', entries: [reg], want: `${B}\n${REG}\n${E}\n` },
  {
    name: 'replaced in place, lines around it untouched byte for byte',
    text: `# hosts\t with tabs  \n127.0.0.1 localhost\n${B}\n10.0.0.4 reg.ns.svc\n${E}\n::1   localhost ip6-localhost\n`,
    entries: [reg, reg6],
    want: `# hosts\t with tabs  \n127.0.0.1 localhost\n${B}\n${REG}\n${REG6}\n${E}\n::1   localhost ip6-localhost\n`,
  },
  { name: 'unchanged when the entries are the same', text: `a\n${B}\n${REG}\n${E}\nb`, entries: [reg], want: `a\n${B}\n${REG}\n${E}\nb` },
  { name: 'no entries: the block goes away', text: `a\n${B}\n${REG}\n${E}\nb\n`, entries: [], want: 'a\nb\n' },
  { name: 'no entries and no block: nothing changes', text: 'a\n', entries: [], want: 'a\n' },
  { name: 'CRLF files keep CRLF', text: '127.0.0.1 localhost\r\n', entries: [reg], want: `127.0.0.1 localhost\r\n${B}\r\n${REG}\r\n${E}\r\n` },
  { name: 'two blocks become one, in place of the first', text: `${B}\nx\n${E}\nmid\n${B}\ny\n${E}\n`, entries: [reg], want: `${B}\n${REG}\n${E}\nmid\n` },
  {
    name: "OpenShift's tagged lines are replaced by the block",
    text: '127.0.0.1 localhost\n10.0.0.4 reg.ns.svc reg.ns.svc.cluster.local # openshift-generated-node-resolver\n::1 localhost\n',
    entries: [reg],
    want: `127.0.0.1 localhost\n${B}\n${REG}\n${E}\n::1 localhost\n`,
  },
];

for (const c of cases) {
  test(`withEntries: ${c.name}`, () => {
    assert.equal(withEntries(c.text, c.entries), c.want);
  });
}

test('parseHosts: reads back what withEntries wrote, and only the block', () => {
  const text = withEntries('10.9.9.9 other\n', [reg, reg6]);
  assert.deepEqual(parseHosts(text), { entries: [reg, reg6], hasBlock: true });
  assert.deepEqual(parseHosts('10.9.9.9 other\n'), { entries: [], hasBlock: false });
});

const broken: Array<[string, string, RegExp]> = [
  ['begin without end', `a\n${B}\n${REG}\n`, /line 2: begin marker without an end marker/],
  ['end without begin', `a\n${E}\n`, /line 2: end marker without a begin marker/],
  ['begin twice', `${B}\n${B}\n${E}\n`, /line 1: block begins again at line 2/],
];

for (const [name, text, want] of broken) {
  test(`withEntries refuses a damaged block (${name}) rather than guess`, () => {
    assert.throws(() => withEntries(text, [reg]), want);
    assert.throws(() => parseHosts(text), want);
  });
}
