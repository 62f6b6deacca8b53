// any inside a running kdns, asked with the real dig.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { answers, dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

describe('any end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('example.org:{PORT} {\n    bind 127.0.0.1\n    any\n    hosts {\n        10.0.0.1 example.org\n    }\n}\n');
  });
  after(() => s.stop());

  test('ANY gets the RFC 8482 HINFO; other types reach the next plugin', async () => {
    const cases: Array<{ type: string; want: string[] }> = [
      { type: 'ANY', want: ['HINFO "ANY obsoleted" "See RFC 8482"'] },
      { type: 'A', want: ['A 10.0.0.1'] },
    ];
    for (const c of cases) {
      const r = await dig('example.org', c.type, { port: s.port });
      assert.equal(r.status, 'NOERROR', c.type);
      assert.deepEqual(answers(r), c.want, c.type);
    }
    const any = await dig('example.org', 'ANY', { port: s.port });
    assert.equal(any.answer[0]?.ttl, 8482);
  });
});
