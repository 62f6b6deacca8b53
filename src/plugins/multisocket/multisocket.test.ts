import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstDirective } from '../../../test/util/corefile.js';
import { parseMultisocket } from '../pkg/multisocket.js';

test('multisocket: Corefile syntax (4 usable CPUs)', () => {
  const cases: Array<{ corefile: string; want?: number; error?: string }> = [
    { corefile: '. {\n  multisocket\n}', want: 4 },
    { corefile: '. {\n  multisocket 1\n}', want: 1 },
    { corefile: '. {\n  multisocket 8\n}', want: 8 },
    { corefile: '. {\n  multisocket 1024\n}', want: 1024 },
    { corefile: '. {\n  multisocket 0\n}', error: 'Corefile:2: NUM_SOCKETS must be between 1 and 1024, got 0' },
    { corefile: '. {\n  multisocket 1025\n}', error: 'Corefile:2: NUM_SOCKETS must be between 1 and 1024, got 1025' },
    { corefile: '. {\n  multisocket many\n}', error: 'Corefile:2: invalid NUM_SOCKETS: "many" is not an integer' },
    { corefile: '. {\n  multisocket 2 3\n}', error: 'Corefile:2: wrong argument count for "multisocket": expected at most 1, got 2' },
    { corefile: '. {\n  multisocket {\n  }\n}', error: 'Corefile:2: "multisocket" does not take a block' },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseMultisocket(d, 4), { message: c.error }, c.corefile);
    else assert.equal(parseMultisocket(d, 4), c.want, c.corefile);
  }
});
