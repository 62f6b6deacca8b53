import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomPolicy, roundRobinPolicy, sequentialPolicy, shuffled, type Policy } from './policy.js';

/** A repeatable source of [0, 1): the values given, round and round. */
function fixed(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] as number;
}

describe('forward policies', () => {
  const list = ['a', 'b', 'c'];
  const cases: Array<{ policy: () => Policy; calls: number; want: string[][] }> = [
    // Round robin as CoreDNS: the counter moves before it is read, so the first query starts at b.
    { policy: roundRobinPolicy, calls: 4, want: [['b', 'a', 'c'], ['c', 'a', 'b'], ['a', 'b', 'c'], ['b', 'a', 'c']] },
    { policy: sequentialPolicy, calls: 2, want: [['a', 'b', 'c'], ['a', 'b', 'c']] },
    // Fisher-Yates from the end: 0.0 swaps c with a (c b a), then 0.99 keeps b in place.
    { policy: () => randomPolicy(fixed([0, 0.99])), calls: 1, want: [['c', 'b', 'a']] },
    { policy: () => randomPolicy(fixed([0.99, 0.99])), calls: 1, want: [['a', 'b', 'c']] },
  ];
  for (const c of cases) {
    const p = c.policy();
    it(`${p.name}: ${c.want.map((o) => o.join('')).join(' ')}`, () => {
      assert.deepEqual(
        Array.from({ length: c.calls }, () => p.order(list)),
        c.want,
      );
    });
  }

  it('random reaches every first choice, about evenly', () => {
    const firsts = new Map<string, number>();
    const p = randomPolicy();
    for (let i = 0; i < 3000; i++) {
      const f = p.order(list)[0] as string;
      firsts.set(f, (firsts.get(f) ?? 0) + 1);
    }
    assert.deepEqual([...firsts.keys()].sort(), ['a', 'b', 'c']);
    for (const n of firsts.values()) assert.ok(n > 850 && n < 1150, `first-choice count ${n} of 3000`);
  });

  it('never changes the list it is given, and handles the empty list', () => {
    const input = ['a', 'b'];
    shuffled(input);
    roundRobinPolicy().order(input);
    assert.deepEqual(input, ['a', 'b']);
    assert.deepEqual(roundRobinPolicy().order([]), []);
  });
});
