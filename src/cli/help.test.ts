// The commands that serve DNS say in --help how to choose the UDP path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runKdns } from '../../test/util/kdns.js';

for (const command of ['serve', 'nodecache']) {
  test(`kdns ${command} --help names KDNS_UDP`, async () => {
    const r = await runKdns([command, '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Environment:\n {2}KDNS_UDP=dgram {2}serve UDP through node:dgram instead of kdns's batched native socket\n/);
  });
}
