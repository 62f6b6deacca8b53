// header: setup cases transcribed from CoreDNS's plugin/header/setup_test.go, and the flags a
// running kdns sends back, asked with dig (the reply's rd echoes the query as the chain saw it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseHeader } from './setup.js';

function verdict(block: string): string {
  try {
    const d = parseCorefile(`. {\n${block}\n}\n`, { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
    assert.ok(d);
    const { query, response } = parseHeader(d);
    const text = (rs: typeof query): string => rs.map((r) => `${r.set ? '+' : '-'}${r.flag}`).join(' ');
    return `query[${text(query)}] response[${text(response)}]`;
  } catch (e) {
    return (e as Error).message;
  }
}

describe('header setup', () => {
  const cases: Array<{ block: string; want: string }> = [
    { block: 'header {}', want: 'Corefile:2: wrong argument count for "header": expected no arguments, got 1' },
    { block: 'header {\n}', want: 'Corefile:2: header needs a block with at least one rule ("response set ra")' },
    { block: 'header {\n    foo\n}', want: 'Corefile:3: invalid header selector "foo" (expected query or response)' },
    { block: 'header {\n    response set\n}', want: 'Corefile:3: wrong argument count for "response": expected at least 2, got 1' },
    { block: 'header {\n    query foo\n}', want: 'Corefile:3: wrong argument count for "query": expected at least 2, got 1' },
    { block: 'header {\n    query foo rd\n}', want: 'Corefile:3: invalid header action "foo" (expected set or clear)' },
    { block: 'header {\n    query set cd\n}', want: 'Corefile:3: unknown header flag "cd" (expected aa, ra or rd)' },
    { block: 'header {\n    query set rd\n}', want: 'query[+rd] response[]' },
    { block: 'header {\n    response set aa\n}', want: 'query[] response[+aa]' },
    { block: 'header {\n    response set ra aa\n    query clear rd\n}', want: 'query[-rd] response[+ra +aa]' },
    { block: 'header {\n    response set ra\n    response clear ra\n}', want: 'query[] response[+ra -ra]' },
  ];
  for (const c of cases) {
    test(c.block.replaceAll('\n', ' ⏎ '), () => {
      assert.equal(verdict(c.block), c.want);
    });
  }
});

describe('header served', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    header {\n        response set ra aa\n        query clear rd\n    }\n    whoami\n}\n');
  });
  after(() => s.stop());

  test('response flags set, rd cleared on the way in', async () => {
    const r = await dig('example.org', 'A', { port: s.port });
    assert.deepEqual([...r.flags].sort(), ['aa', 'qr', 'ra']);
  });
  test('a query without rd: the same', async () => {
    const r = await dig('example.org', 'A', { port: s.port, args: ['+nordflag'] });
    assert.deepEqual([...r.flags].sort(), ['aa', 'qr', 'ra']);
  });
});
