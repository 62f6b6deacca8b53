// bufsize inside a running kdns: a client asking for 4096 bytes gets at most the configured size.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const entries = Array.from({ length: 60 }, (_, i) => `        10.3.0.${i + 1} big.example.org`).join('\n');

describe('bufsize end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(`example.org:{PORT} {\n    bind 127.0.0.1\n    bufsize 512\n    hosts {\n${entries}\n    }\n}\n`);
  });
  after(() => s.stop());

  test('a 1k answer is truncated for a client that offered 4096 bytes', async () => {
    // 60 A records: 12 + 21 + 60 * 16 + 11 = 1004 bytes, fine for 4096, too much for 512.
    const cases: Array<{ bufsize: number; tc: boolean }> = [
      { bufsize: 4096, tc: true },
      { bufsize: 400, tc: true },
    ];
    for (const c of cases) {
      const r = await dig('big.example.org', 'A', { port: s.port, args: [`+bufsize=${c.bufsize}`, '+ignore'] });
      assert.equal(r.flags.includes('tc'), c.tc, `bufsize ${c.bufsize}: tc`);
      assert.ok(r.size <= 512, `bufsize ${c.bufsize}: ${r.size} bytes`);
    }
    const tcp = await dig('big.example.org', 'A', { port: s.port, args: ['+bufsize=4096', '+tcp'] });
    assert.equal(tcp.answer.length, 60);
  });
});
