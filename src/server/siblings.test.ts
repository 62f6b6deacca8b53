import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitRelayOps, type RelayOps } from './siblings.js';

const change = (i: number): [string, string | null] => [`Service/ns/s${i}`, i % 3 === 0 ? null : `{"n":${i}}`];
const changes = (from: number, to: number): Array<[string, string | null]> => Array.from({ length: to - from }, (_, k) => change(from + k));

describe('splitRelayOps', () => {
  const cases: Array<{ name: string; ops: RelayOps; max: number; want: RelayOps[] }> = [
    { name: 'no change, synced: one part as given', ops: { changes: [], synced: true }, max: 2, want: [{ changes: [], synced: true }] },
    { name: 'fewer changes than max: one part', ops: { changes: changes(0, 2) }, max: 3, want: [{ changes: changes(0, 2) }] },
    { name: 'exactly max: one part', ops: { changes: changes(0, 3), synced: true }, max: 3, want: [{ changes: changes(0, 3), synced: true }] },
    {
      name: 'more than max: parts in order, synced on the last only',
      ops: { changes: changes(0, 7), synced: true },
      max: 3,
      want: [{ changes: changes(0, 3) }, { changes: changes(3, 6) }, { changes: changes(6, 7), synced: true }],
    },
    {
      name: 'more than max, not synced: no part says synced',
      ops: { changes: changes(0, 4) },
      max: 2,
      want: [{ changes: changes(0, 2) }, { changes: changes(2, 4) }],
    },
    {
      name: 'synced false is kept on the last part',
      ops: { changes: changes(0, 3), synced: false },
      max: 2,
      want: [{ changes: changes(0, 2) }, { changes: changes(2, 3), synced: false }],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(splitRelayOps(c.ops, c.max), c.want);
    });
  }

  for (const max of [0, -1, 1.5]) {
    it(`rejects max ${max}`, () => {
      assert.throws(() => splitRelayOps({ changes: changes(0, 3) }, max), { name: 'RangeError', message: `splitRelayOps: max must be a whole number from 1, not ${max}` });
    });
  }

  it('the default keeps 10,000 changes to parts of 128', () => {
    const parts = splitRelayOps({ changes: changes(0, 10_000), synced: true });
    assert.deepEqual(
      parts.map((p) => p.changes.length),
      [...Array.from({ length: 78 }, () => 128), 16],
    );
    assert.deepEqual(parts.map((p) => p.synced).filter((s) => s !== undefined), [true]);
  });
});
