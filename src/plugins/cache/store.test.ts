import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedStore } from './store.js';

interface Item {
  used: boolean;
}

describe('cache store eviction', () => {
  const cases: Array<{ what: string; capacity: number; steps: string[]; keys: string[]; evictions: number }> = [
    { what: 'under capacity nothing goes', capacity: 3, steps: ['+a', '+b', '+c'], keys: ['a', 'b', 'c'], evictions: 0 },
    { what: 'the oldest unused entry goes first', capacity: 3, steps: ['+a', '+b', '+c', '+d'], keys: ['b', 'c', 'd'], evictions: 1 },
    { what: 'a used entry is spared once and moves to the back', capacity: 3, steps: ['+a', '+b', '+c', 'use a', '+d'], keys: ['c', 'a', 'd'], evictions: 1 },
    { what: 'spared entries lose their mark', capacity: 3, steps: ['+a', '+b', '+c', 'use a', '+d', '+e', '+f'], keys: ['d', 'e', 'f'], evictions: 3 },
    { what: 'all used: the hand still evicts one', capacity: 2, steps: ['+a', '+b', 'use a', 'use b', '+c'], keys: ['b', 'c'], evictions: 1 },
    { what: 'replacing a key is not an eviction and makes it newest', capacity: 2, steps: ['+a', '+b', '+a', '+c'], keys: ['a', 'c'], evictions: 1 },
    { what: 'delete frees room', capacity: 2, steps: ['+a', '+b', '-a', '+c'], keys: ['b', 'c'], evictions: 0 },
  ];
  for (const c of cases) {
    it(c.what, () => {
      let evicted = 0;
      const store = new BoundedStore<Item>(c.capacity, () => evicted++);
      const items = new Map<string, Item>();
      for (const step of c.steps) {
        const key = step.replace(/^(\+|-|use )/, '');
        if (step.startsWith('+')) {
          const item = { used: false };
          items.set(key, item);
          store.set(key, item);
        } else if (step.startsWith('-')) {
          store.delete(key);
        } else {
          (store.get(key) as Item).used = true;
        }
      }
      assert.deepEqual([...store.keys()], c.keys);
      assert.equal(evicted, c.evictions);
      assert.equal(store.evictions, c.evictions);
    });
  }

  it('stays at capacity under a flood of unique keys', () => {
    const store = new BoundedStore<Item>(1000);
    for (let i = 0; i < 100_000; i++) {
      store.set(`k${i}`, { used: i % 3 === 0 });
      if (i % 7 === 0) {
        const hot = store.get('k0');
        if (hot) hot.used = true;
      }
    }
    assert.equal(store.size, 1000);
    assert.equal(store.evictions, 99_000);
  });
});
