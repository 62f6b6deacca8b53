import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedStore } from './store.js';

interface Item {
  tag: number;
  name: string;
  used: boolean;
  older: Item | undefined;
  newer: Item | undefined;
}

const item = (name: string, used = false, tag = 4): Item => ({ tag, name, used, older: undefined, newer: undefined });

describe('cache store eviction', () => {
  // removed: every entry that left, in order (the cache frees its bytes on each).
  const cases: Array<{ what: string; capacity: number; steps: string[]; keys: string[]; evictions: number; removed: string[] }> = [
    { what: 'under capacity nothing goes', capacity: 3, steps: ['+a', '+b', '+c'], keys: ['a', 'b', 'c'], evictions: 0, removed: [] },
    { what: 'the oldest unused entry goes first', capacity: 3, steps: ['+a', '+b', '+c', '+d'], keys: ['b', 'c', 'd'], evictions: 1, removed: ['a'] },
    { what: 'a used entry is spared once and moves to the back', capacity: 3, steps: ['+a', '+b', '+c', 'use a', '+d'], keys: ['c', 'a', 'd'], evictions: 1, removed: ['b'] },
    { what: 'spared entries lose their mark', capacity: 3, steps: ['+a', '+b', '+c', 'use a', '+d', '+e', '+f'], keys: ['d', 'e', 'f'], evictions: 3, removed: ['b', 'c', 'a'] },
    { what: 'all used: the hand still evicts one', capacity: 2, steps: ['+a', '+b', 'use a', 'use b', '+c'], keys: ['b', 'c'], evictions: 1, removed: ['a'] },
    { what: 'replacing a key is not an eviction and makes it newest', capacity: 2, steps: ['+a', '+b', '+a', '+c'], keys: ['a', 'c'], evictions: 1, removed: ['a', 'b'] },
    { what: 'delete frees room', capacity: 2, steps: ['+a', '+b', '-a', '+c'], keys: ['b', 'c'], evictions: 0, removed: ['a'] },
    { what: 'clear removes every entry', capacity: 3, steps: ['+a', '+b', 'clear'], keys: [], evictions: 0, removed: ['a', 'b'] },
  ];
  for (const c of cases) {
    it(c.what, () => {
      let evicted = 0;
      const removed: string[] = [];
      const store = new BoundedStore<Item>(
        c.capacity,
        () => evicted++,
        (v) => removed.push(v.name),
      );
      for (const step of c.steps) {
        const key = step.replace(/^(\+|-|use )/, '');
        if (step === 'clear') store.clear();
        else if (step.startsWith('+')) store.set(item(key));
        else if (step.startsWith('-')) store.delete(4, key);
        else (store.get(4, key) as Item).used = true;
      }
      assert.deepEqual([...store.values()].map((v) => v.name), c.keys);
      assert.equal(evicted, c.evictions);
      assert.equal(store.evictions, c.evictions);
      assert.deepEqual(removed, c.removed);
    });
  }

  it('files the same name under different tags apart', () => {
    const store = new BoundedStore<Item>(10);
    store.set(item('a', false, 4));
    store.set(item('a', false, 112));
    assert.deepEqual([store.get(4, 'a')?.tag, store.get(112, 'a')?.tag, store.get(5, 'a'), store.size], [4, 112, undefined, 2]);
  });

  it('stays at capacity under a flood of unique keys', () => {
    const store = new BoundedStore<Item>(1000);
    for (let i = 0; i < 100_000; i++) {
      store.set(item(`k${i}`, i % 3 === 0));
      if (i % 7 === 0) {
        const hot = store.get(4, 'k0');
        if (hot) hot.used = true;
      }
    }
    assert.equal(store.size, 1000);
    assert.equal(store.evictions, 99_000);
  });
});
