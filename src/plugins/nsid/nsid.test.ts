// nsid in a running kdns, asked with dig +nsid: the identifier comes back only when asked
// (CoreDNS nsid_test.go's cases: asked / not asked, configured data / host name).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseNsid } from './setup.js';

/** dig's "; NSID: 6b 64 (\"kd\")" line as "6b64 (\"kd\")". */
function nsidLine(raw: string): string | undefined {
  const m = /; NSID: ([0-9a-f ]+?) (\(.*\))/.exec(raw);
  return m ? `${(m[1] as string).replaceAll(' ', '')} ${m[2]}` : undefined;
}

describe('nsid setup', () => {
  const cases: Array<{ line: string; want: string }> = [
    { line: 'nsid', want: 'host-a' },
    { line: 'nsid "ps0"', want: 'ps0' },
    { line: 'nsid "tf 2"', want: 'tf 2' },
    { line: 'nsid replica one', want: 'replica one' },
  ];
  for (const c of cases) {
    test(c.line, () => {
      const d = parseCorefile(`. {\n${c.line}\n}\n`, { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
      assert.ok(d);
      assert.equal(parseNsid(d, 'host-a'), c.want);
    });
  }
});

describe('nsid served', () => {
  let named: TestServer;
  let host: TestServer;
  before(async () => {
    named = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    nsid kdns-0\n    whoami\n}\n');
    host = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    nsid\n    whoami\n}\n');
  });
  after(async () => {
    await named.stop();
    await host.stop();
  });

  test('asked: the configured identifier, as hex and text', async () => {
    const r = await dig('example.org', 'A', { port: named.port, args: ['+nsid'] });
    assert.equal(nsidLine(r.raw), `${Buffer.from('kdns-0').toString('hex')} ("kdns-0")`);
  });
  test('asked, no data configured: the host name', async () => {
    const r = await dig('example.org', 'A', { port: host.port, args: ['+nsid'] });
    assert.equal(nsidLine(r.raw), `${Buffer.from(hostname()).toString('hex')} ("${hostname()}")`);
  });
  test('not asked: no NSID option', async () => {
    const r = await dig('example.org', 'A', { port: named.port });
    assert.equal(nsidLine(r.raw), undefined);
  });
});
