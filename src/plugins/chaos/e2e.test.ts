// chaos inside a running kdns, asked with the real dig.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { answers, dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

describe('chaos end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    chaos kdns-e2e "Ada Lovelace" "Grace Hopper"\n    whoami\n}\n');
  });
  after(() => s.stop());

  test('CH TXT names', async () => {
    const cases: Array<{ name: string; want: string[] }> = [
      { name: 'version.bind', want: ['TXT "kdns-e2e"'] },
      { name: 'version.server', want: ['TXT "kdns-e2e"'] },
      { name: 'hostname.bind', want: [`TXT "${hostname()}"`] },
      { name: 'id.server', want: [`TXT "${hostname()}"`] },
      { name: 'authors.bind', want: ['TXT "Ada Lovelace"', 'TXT "Grace Hopper"'] },
    ];
    for (const c of cases) {
      const r = await dig(c.name, 'TXT', { port: s.port, args: ['-c', 'CH'] });
      assert.equal(r.status, 'NOERROR', c.name);
      assert.deepEqual(answers(r), c.want, c.name);
      assert.ok(r.answer.every((a) => a.class === 'CH' && a.ttl === 0), c.name);
    }
  });

  test('IN class version.bind goes to the next plugin', async () => {
    const r = await dig('version.bind', 'TXT', { port: s.port });
    assert.deepEqual(answers(r), []);
    assert.ok(r.additional.some((a) => a.type === 'SRV'), 'whoami answered');
  });
});
