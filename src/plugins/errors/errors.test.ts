import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RCode, RRType } from '../../lib/dns/types.js';
import { createLogger, type Level } from '../../server/log.js';
import { PluginError, type Next } from '../../server/plugin.js';
import { errorReply, Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { testRequest } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { ErrorsPlugin, type ConsolidateLevel, type ErrorsConfig } from './handler.js';
import { parseErrors } from './setup.js';

/** Config as plain values (RegExp → source) for comparison. */
function shown(text: string) {
  const c = parseErrors(directiveIn(text));
  return { stacktrace: c.stacktrace, consolidate: c.consolidate.map((r) => [r.periodMs, r.source, r.level, r.showFirst]) };
}

describe('errors setup: valid lines', () => {
  const cases: Array<{ name: string; corefile: string; want: ReturnType<typeof shown> }> = [
    { name: 'bare errors', corefile: 'errors', want: { stacktrace: false, consolidate: [] } },
    { name: 'errors stdout', corefile: 'errors stdout', want: { stacktrace: false, consolidate: [] } },
    {
      name: 'consolidate rules in order, level defaults to error',
      corefile: 'errors {\n consolidate 5m ".* i/o timeout$" warning\n consolidate 30s "^Failed to .+"\n}',
      want: { stacktrace: false, consolidate: [[300_000, '.* i/o timeout$', 'warning', false], [30_000, '^Failed to .+', 'error', false]] },
    },
    { name: 'consolidate with a level and show_first', corefile: 'errors {\n consolidate 30s "timeout$" warning show_first\n}', want: { stacktrace: false, consolidate: [[30_000, 'timeout$', 'warning', true]] } },
    { name: 'consolidate with show_first and no level: error', corefile: 'errors {\n consolidate 30s "timeout$" show_first\n}', want: { stacktrace: false, consolidate: [[30_000, 'timeout$', 'error', true]] } },
    { name: 'show_first twice is show_first (CoreDNS accepts it)', corefile: 'errors {\n consolidate 30s x show_first show_first\n}', want: { stacktrace: false, consolidate: [[30_000, 'x', 'error', true]] } },
    { name: 'a regexp of 10000 characters', corefile: `errors {\n consolidate 30s ${'a'.repeat(10_000)}\n}`, want: { stacktrace: false, consolidate: [[30_000, 'a'.repeat(10_000), 'error', false]] } },
    { name: 'stacktrace', corefile: 'errors {\n stacktrace\n}', want: { stacktrace: true, consolidate: [] } },
    { name: 'CoreDNS older spelling panicRecoveryStacktrace', corefile: 'errors {\n panicRecoveryStacktrace\n}', want: { stacktrace: true, consolidate: [] } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(shown(c.corefile), c.want));
});

describe('errors setup: invalid lines name the line', () => {
  const cases: Array<{ name: string; corefile: string; error: string }> = [
    { name: 'log file other than stdout', corefile: 'errors /var/log/x', error: 'Corefile:2: invalid log target for errors: "/var/log/x" (only stdout)' },
    { name: 'two arguments', corefile: 'errors stdout more', error: 'Corefile:2: wrong argument count for "errors": expected at most 1, got 2' },
    { name: 'unknown property', corefile: 'errors {\n consolidat 5m x\n}', error: 'Corefile:3: unknown property "consolidat" in errors block' },
    { name: 'consolidate with one argument', corefile: 'errors {\n consolidate 5m\n}', error: 'Corefile:3: wrong argument count for "consolidate": expected at least 2, got 1' },
    { name: 'consolidate with five arguments', corefile: 'errors {\n consolidate 5m x error show_first more\n}', error: 'Corefile:3: wrong argument count for "consolidate": expected at most 4, got 5' },
    { name: 'unknown word after the regexp', corefile: 'errors {\n consolidate 5m x error more\n}', error: 'Corefile:3: unknown option "more" in consolidate (expected a log level: warning, error, info, debug; or show_first)' },
    { name: 'two log levels', corefile: 'errors {\n consolidate 5m x error warning\n}', error: 'Corefile:3: consolidate takes one log level, got "error" and "warning"' },
    { name: 'level after show_first', corefile: 'errors {\n consolidate 5m x show_first warning\n}', error: 'Corefile:3: log level "warning" must come before show_first in consolidate' },
    { name: 'a regexp longer than 10000 characters', corefile: `errors {\n consolidate 5m ${'a'.repeat(10_001)}\n}`, error: 'Corefile:3: regular expression in consolidate is too long: 10001 characters (at most 10000)' },
    {
      name: 'bad period',
      corefile: 'errors {\n consolidate often x\n}',
      error: 'Corefile:3: invalid duration for consolidate period: "often" (expected a Go duration such as 500ms, 5s or 1m30s)',
    },
    { name: 'zero period', corefile: 'errors {\n consolidate 0s x\n}', error: 'Corefile:3: consolidate period must be at least 1ms, got 0s' },
    { name: 'bad regexp', corefile: 'errors {\n consolidate 5m "a(b"\n}', error: 'Corefile:3: invalid regular expression "a(b" in consolidate: Invalid regular expression: /a(b/: Unterminated group' },
    { name: 'bad level', corefile: 'errors {\n consolidate 5m x fatal\n}', error: 'Corefile:3: unknown option "fatal" in consolidate (expected a log level: warning, error, info, debug; or show_first)' },
    { name: 'stacktrace with an argument', corefile: 'errors {\n stacktrace yes\n}', error: 'Corefile:3: wrong argument count for "stacktrace": expected no arguments, got 1' },
  ];
  for (const c of cases) test(c.name, () => assert.throws(() => parseErrors(directiveIn(c.corefile)), { message: c.error }));
});

function request(name = 'www.example.org.', qtype: number = RRType.A): DnsRequest {
  return testRequest(name, qtype, { id: 9 });
}

function capture(): { lines: string[]; plugin: (config: ErrorsConfig) => ErrorsPlugin } {
  const lines: string[] = [];
  const log = createLogger((level: Level, line: string) => lines.push(`[${level}] ${line}`)).plugin('errors');
  return { lines, plugin: (config) => new ErrorsPlugin(config, log) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('errors: one line per error', () => {
  const timeout: Next = (req) => errorReply(req, RCode.SERVFAIL, new Error('plugin/forward: read udp 127.0.0.1:5353: i/o timeout'));
  const refused: Next = () => {
    throw new PluginError('acl', RCode.REFUSED, 'blocked by policy');
  };
  const bug: Next = () => {
    throw new TypeError('cannot read properties of undefined');
  };
  const fine: Next = (req) => Reply.of(responseFor(req));
  const asyncTimeout: Next = async (req) => timeout(req);
  const cases: Array<{ name: string; next: Next; qtype?: number; want: string[]; throws?: string }> = [
    { name: 'reply carrying an error', next: timeout, want: ['[ERROR] plugin/errors: 2 www.example.org. A: plugin/forward: read udp 127.0.0.1:5353: i/o timeout'] },
    { name: 'same, answered asynchronously', next: asyncTimeout, qtype: RRType.AAAA, want: ['[ERROR] plugin/errors: 2 www.example.org. AAAA: plugin/forward: read udp 127.0.0.1:5353: i/o timeout'] },
    { name: 'thrown PluginError: its rcode, rethrown', next: refused, want: ['[ERROR] plugin/errors: 5 www.example.org. A: plugin/acl: blocked by policy'], throws: 'plugin/acl: blocked by policy' },
    { name: 'thrown bug: left to the server (logged there as a panic), rethrown', next: bug, want: [], throws: 'cannot read properties of undefined' },
    { name: 'reply without error: nothing', next: fine, want: [] },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { lines, plugin } = capture();
      const p = plugin({ consolidate: [], stacktrace: false });
      const run = async () => p.serve(request('www.example.org.', c.qtype), c.next);
      if (c.throws) await assert.rejects(run, { message: c.throws });
      else await run();
      assert.deepEqual(lines, c.want);
    });
  }
});

describe('errors: consolidate', () => {
  const failWith =
    (message: string): Next =>
    (req) =>
      errorReply(req, RCode.SERVFAIL, new Error(message));
  const rule = (source: string, level: ConsolidateLevel = 'error', periodMs = 60, showFirst = false) => ({ periodMs, pattern: new RegExp(source), source, level, showFirst });

  test('matching errors become one line per period; others stay single lines', async () => {
    const { lines, plugin } = capture();
    const p = plugin({ consolidate: [rule('i/o timeout$', 'warning')], stacktrace: false });
    for (let i = 0; i < 3; i++) await p.serve(request(), failWith('read udp: i/o timeout'));
    await p.serve(request(), failWith('connection refused'));
    assert.deepEqual(lines, ['[ERROR] plugin/errors: 2 www.example.org. A: connection refused']);
    await sleep(300);
    assert.deepEqual(lines, ['[ERROR] plugin/errors: 2 www.example.org. A: connection refused', "[WARNING] plugin/errors: 3 errors like 'i/o timeout$' occurred in last 60ms"]);
  });

  test('a new period starts with the next match after a summary', async () => {
    const { lines, plugin } = capture();
    const p = plugin({ consolidate: [rule('timeout')], stacktrace: false });
    await p.serve(request(), failWith('timeout'));
    await sleep(300);
    await p.serve(request(), failWith('timeout'));
    await p.serve(request(), failWith('timeout'));
    await sleep(300);
    assert.deepEqual(lines, ["[ERROR] plugin/errors: 1 errors like 'timeout' occurred in last 60ms", "[ERROR] plugin/errors: 2 errors like 'timeout' occurred in last 60ms"]);
  });

  test('the first matching pattern takes the error', async () => {
    const { lines, plugin } = capture();
    const p = plugin({ consolidate: [rule('^read', 'info', 30_000), rule('timeout', 'error', 30_000)], stacktrace: false });
    await p.serve(request(), failWith('read udp: timeout'));
    await p.serve(request(), failWith('dial: timeout'));
    p.stop();
    assert.deepEqual(lines, ["[INFO] plugin/errors: 1 errors like '^read' occurred in last 30s", "[ERROR] plugin/errors: 1 errors like 'timeout' occurred in last 30s"]);
  });

  // show_first: the first error of a period is logged as it comes, at the rule's level; the
  // summary counts it too, and is left out when it would only repeat that one line.
  const showFirstCases: Array<{ name: string; errors: number; want: string[] }> = [
    { name: 'show_first, one error: the error line, no summary', errors: 1, want: ['[WARNING] plugin/errors: 2 www.example.org. A: read udp: i/o timeout'] },
    {
      name: 'show_first, three errors: the first line, then a summary counting all three',
      errors: 3,
      want: ['[WARNING] plugin/errors: 2 www.example.org. A: read udp: i/o timeout', "[WARNING] plugin/errors: 3 errors like 'timeout$' occurred in last 30s"],
    },
  ];
  for (const c of showFirstCases) {
    test(c.name, async () => {
      const { lines, plugin } = capture();
      const p = plugin({ consolidate: [rule('timeout$', 'warning', 30_000, true)], stacktrace: false });
      for (let i = 0; i < c.errors; i++) await p.serve(request(), failWith('read udp: i/o timeout'));
      p.stop();
      assert.deepEqual(lines, c.want);
    });
  }

  test('show_first: the next period shows its first error again', async () => {
    const { lines, plugin } = capture();
    const p = plugin({ consolidate: [rule('timeout', 'info', 60, true)], stacktrace: false });
    await p.serve(request(), failWith('timeout'));
    await p.serve(request(), failWith('timeout'));
    await sleep(300);
    await p.serve(request('other.example.org.'), failWith('timeout'));
    assert.deepEqual(lines, ['[INFO] plugin/errors: 2 www.example.org. A: timeout', "[INFO] plugin/errors: 2 errors like 'timeout' occurred in last 60ms", '[INFO] plugin/errors: 2 other.example.org. A: timeout']);
    p.stop();
  });

  test('stop reports the open period at once and later errors are logged singly', async () => {
    const { lines, plugin } = capture();
    const p = plugin({ consolidate: [rule('timeout', 'error', 300_000)], stacktrace: false });
    await p.serve(request(), failWith('timeout'));
    p.stop();
    await p.serve(request(), failWith('timeout'));
    assert.deepEqual(lines, ["[ERROR] plugin/errors: 1 errors like 'timeout' occurred in last 5m0s", '[ERROR] plugin/errors: 2 www.example.org. A: timeout']);
  });
});

describe('errors end to end: forward to a port nobody listens on', () => {
  let s: TestServer;
  let dead: number;
  before(async () => {
    dead = await freePort();
    s = await startTestServer(`
example.org:{PORT} {
    bind 127.0.0.1
    errors
    forward . 127.0.0.1:${dead}
}
example.net:{PORT} {
    bind 127.0.0.1
    errors {
        consolidate 1500ms "^plugin/forward: " warning
    }
    forward . 127.0.0.1:${dead}
}
example.com:{PORT} {
    bind 127.0.0.1
    errors {
        consolidate 1500ms "^plugin/forward" warning show_first
    }
    forward . 127.0.0.1:${dead}
}
`);
  });
  after(() => s.stop());

  test('each failure is one error line with rcode, name and type', async () => {
    const r = await dig('www.example.org', 'AAAA', { port: s.port });
    assert.equal(r.status, 'SERVFAIL');
    const lines = s.logs.filter((l) => l.includes('www.example.org.'));
    assert.equal(lines.length, 1, s.logs.join('\n'));
    // The reason is forward's wording; the shape around it is ours.
    assert.match(lines[0] as string, /^\[ERROR\] plugin\/errors: 2 www\.example\.org\. AAAA: plugin\/forward: \S.*$/);
  });

  test('consolidated: three failures, one warning after the period', async () => {
    // At once, so that all three fall in one period even on a busy machine.
    const results = await Promise.all([0, 1, 2].map((i) => dig(`n${i}.example.net`, 'A', { port: s.port })));
    assert.deepEqual(results.map((r) => r.status), ['SERVFAIL', 'SERVFAIL', 'SERVFAIL']);
    assert.equal(s.logs.filter((l) => l.includes('example.net.')).length, 0, 'no single lines for matching errors');
    const line = await waitFor(() => s.logs.find((l) => l.includes('errors like')), 4000, 20);
    assert.equal(line, "[WARNING] plugin/errors: 3 errors like '^plugin/forward: ' occurred in last 1.5s");
  });

  test('consolidated with show_first: the first failure at once, then a warning counting all three', async () => {
    const first = await dig('n0.example.com', 'A', { port: s.port });
    assert.equal(first.status, 'SERVFAIL');
    const shownFirst = s.logs.filter((l) => l.includes('example.com.'));
    assert.equal(shownFirst.length, 1, s.logs.join('\n'));
    assert.match(shownFirst[0] as string, /^\[WARNING\] plugin\/errors: 2 n0\.example\.com\. A: plugin\/forward: \S.*$/);
    const more = await Promise.all([1, 2].map((i) => dig(`n${i}.example.com`, 'A', { port: s.port })));
    assert.deepEqual(more.map((r) => r.status), ['SERVFAIL', 'SERVFAIL']);
    const line = await waitFor(() => s.logs.find((l) => l.includes("errors like '^plugin/forward'")), 4000, 20);
    assert.equal(line, "[WARNING] plugin/errors: 3 errors like '^plugin/forward' occurred in last 1.5s");
    assert.equal(s.logs.filter((l) => l.includes('example.com.')).length, 1, 'the second and third failures are only counted');
  });
});

test('errors twice in one server block is refused, naming the second line', async () => {
  await assert.rejects(startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    errors\n    errors\n    whoami\n}\n`), {
    message: /Corefile:4: errors can only be used once per server block$/,
  });
});
