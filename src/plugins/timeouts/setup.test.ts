import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { parseTimeouts, type Timeouts } from './setup.js';
import { smallestTimeouts } from '../../server/config.js';
import type { ConnectionTimeouts } from '../../server/plugin.js';

// The Corefile opens with ".:53 {" on line 1, so `timeouts` is on line 2 and its first property on 3.
describe('timeouts options', () => {
  const good: Array<{ corefile: string; want: Timeouts }> = [
    { corefile: 'timeouts {\n read 10s\n write 20s\n idle 60s\n}', want: { readMs: 10_000, writeMs: 20_000, idleMs: 60_000 } },
    { corefile: 'timeouts {\n maxtcpqueries 128\n}', want: { maxTcpQueries: 128 } },
    { corefile: 'timeouts {\n maxtcpqueries -1\n}', want: { maxTcpQueries: 0 } },
    { corefile: 'timeouts {\n idle 1h\n maxtcpqueries 1\n}', want: { idleMs: 3_600_000, maxTcpQueries: 1 } },
  ];
  for (const c of good) {
    it(`accepts ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, () => {
      assert.deepEqual(parseTimeouts(directiveIn(c.corefile, '.:53')), c.want);
    });
  }

  const bad: Array<{ corefile: string; error: string }> = [
    { corefile: 'timeouts', error: 'Corefile:2: timeouts needs a block with at least one of read, write, idle or maxtcpqueries' },
    { corefile: 'timeouts {\n maxtcpqueries 0\n}', error: 'Corefile:3: timeouts maxtcpqueries must be -1 (no limit) or a positive integer, got 0' },
    { corefile: 'timeouts {\n maxtcpqueries -5\n}', error: 'Corefile:3: timeouts maxtcpqueries must be -1 (no limit) or a positive integer, got -5' },
    { corefile: 'timeouts {\n maxtcpqueries lots\n}', error: 'Corefile:3: invalid timeouts maxtcpqueries: "lots" is not an integer' },
    { corefile: 'timeouts {\n maxtcpqueries\n}', error: 'Corefile:3: wrong argument count for "maxtcpqueries": expected 1, got 0' },
    { corefile: 'timeouts {\n maxtcpqueries 10\n maxtcpqueries 20\n}', error: 'Corefile:4: duplicate property "maxtcpqueries" in timeouts block' },
    { corefile: 'timeouts {\n read 0s\n}', error: 'Corefile:3: timeouts read must be at least 1s, got 0s' },
    { corefile: 'timeouts {\n max_age 30s\n}', error: 'Corefile:3: unknown property "max_age" in timeouts block' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, () => {
      assertCorefileError(() => parseTimeouts(directiveIn(c.corefile, '.:53')), c.error);
    });
  }
});

describe('timeouts of blocks that share a listener', () => {
  const cases: Array<{ what: string; a: ConnectionTimeouts; b: ConnectionTimeouts | undefined; want: ConnectionTimeouts }> = [
    { what: 'a block without timeouts changes nothing', a: { readMs: 2000 }, b: undefined, want: { readMs: 2000 } },
    { what: 'each option the smallest any block sets', a: { readMs: 2000, idleMs: 60_000 }, b: { readMs: 5000, idleMs: 30_000 }, want: { readMs: 2000, writeMs: undefined, idleMs: 30_000 } },
    { what: 'an option one block sets applies alone', a: {}, b: { writeMs: 7000 }, want: { readMs: undefined, writeMs: 7000, idleMs: undefined } },
  ];
  for (const c of cases) {
    it(c.what, () => {
      assert.deepEqual(smallestTimeouts(c.a, c.b), c.want);
    });
  }
});
