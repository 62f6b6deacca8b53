// bind inside a running kdns: listening on 127.0.0.2 only leaves 127.0.0.1 on the same port silent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

describe('bind end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('example.org:{PORT} {\n    bind 127.0.0.2\n    whoami\n}\n');
  });
  after(() => s.stop());

  test('only the bound address answers', async () => {
    const bound = await dig('example.org', 'A', { server: '127.0.0.2', port: s.port });
    assert.equal(bound.status, 'NOERROR');
    assert.match(bound.additional[0]?.data ?? '', /^127\./, 'whoami saw a loopback client');
    await assert.rejects(dig('example.org', 'A', { server: '127.0.0.1', port: s.port, timeout: 1 }), /timed out|no servers could be reached|failed/);
    await assert.rejects(dig('example.org', 'A', { server: '127.0.0.1', port: s.port, timeout: 1, args: ['+tcp'] }), /refused|failed/);
  });
});
