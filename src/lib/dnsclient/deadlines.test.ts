import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from '../../../test/util/net.js';
import { DeadlineQueue } from './deadlines.js';

interface Item {
  name: string;
  deadline: number;
  done: boolean;
}

describe('DeadlineQueue', () => {
  const cases: Array<{ what: string; timeouts: Array<[string, number]>; answered: string[]; want: string[] }> = [
    { what: 'same timeouts expire in the order added', timeouts: [['a', 30], ['b', 30], ['c', 30]], answered: [], want: ['a', 'b', 'c'] },
    { what: 'a shorter timeout added later expires first', timeouts: [['long', 120], ['short', 20]], answered: [], want: ['short', 'long'] },
    { what: 'answered entries never expire', timeouts: [['a', 20], ['b', 20], ['c', 20]], answered: ['a', 'c'], want: ['b'] },
    { what: 'nothing expires when all are answered', timeouts: [['a', 20], ['b', 40]], answered: ['a', 'b'], want: [] },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const expired: string[] = [];
      const q = new DeadlineQueue<Item>((item) => expired.push(item.name));
      const now = performance.now();
      const items = c.timeouts.map(([name, ms]) => ({ name, deadline: now + ms, done: false }));
      for (const item of items) q.add(item);
      for (const item of items) if (c.answered.includes(item.name)) item.done = true;
      q.trim();
      await sleep(Math.max(...c.timeouts.map(([, ms]) => ms)) + 150);
      assert.deepEqual(expired, c.want);
      assert.ok(items.filter((i) => c.want.includes(i.name)).every((i) => i.done), 'expired entries are marked done');
    });
  }

  it('clear() forgets every entry: none expires', async () => {
    const expired: string[] = [];
    const q = new DeadlineQueue<Item>((item) => expired.push(item.name));
    q.add({ name: 'a', deadline: performance.now() + 20, done: false });
    q.clear();
    await sleep(100);
    assert.deepEqual(expired, []);
  });
});
