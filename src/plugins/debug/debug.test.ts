// debug: setup syntax; an error thrown by a plugin ends the process (with its stack) instead of
// becoming SERVFAIL; debug log lines follow the running config.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { directiveIn, assertCorefileError } from '../../../test/util/corefile.js';
import { startTestServer } from '../../../test/util/server.js';
import { setup } from './setup.js';
import type { BlockInfo, SetupContext } from '../../server/plugin.js';

function block(): BlockInfo {
  return { keys: [], zones: ['.'], port: 53, settings: { listenAddresses: [] }, plugins: [], file: 'Corefile', line: 1 };
}

function runSetup(body: string, info: BlockInfo = block()): unknown {
  return setup({ directive: directiveIn(body), block: info } as unknown as SetupContext);
}

describe('debug setup', () => {
  test('debug sets the block setting', () => {
    const info = block();
    runSetup('debug', info);
    assert.equal(info.settings.debug, true);
  });
  const errors: Array<{ body: string; error: string }> = [
    { body: 'debug on', error: 'Corefile:2: wrong argument count for "debug": expected no arguments, got 1' },
    { body: 'debug {\n  stacktrace\n}', error: 'Corefile:2: "debug" does not take a block' },
  ];
  for (const c of errors) {
    test(`refuses: ${c.body.split('\n')[0] as string}`, () => assertCorefileError(() => runSetup(c.body), c.error));
  }
});

/** A module of the production build (dist/, which `npm test` builds first), as kdns runs it. */
const built = (p: string): string => fileURLToPath(new URL(`../../../dist/${p}`, import.meta.url));

/**
 * A process that dispatches one query to a block whose plugin throws a TypeError (a bug, not a
 * PluginError), with the listener's debug switch as given, and prints the reply's RCODE.
 */
function dispatchThrowing(debug: boolean): { status: number | null; stdout: string; stderr: string } {
  const script = join(mkdtempSync(join(tmpdir(), 'kdns-debug-')), 'crash-probe.mjs');
  writeFileSync(
    script,
    `import { Dispatcher } from ${JSON.stringify(built('server/dispatch.js'))};
import { encodeMessage } from ${JSON.stringify(built('lib/dns/codec.js'))};
const block = { info: { settings: {} }, plugins: [], handle: () => { null.boom(); } };
const d = new Dispatcher(new Map([['.', [block]]]), { onPanic: (e) => console.error('recovered: ' + e.message) });
d.debug = ${debug};
const q = encodeMessage({ id: 7, qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, z: false, ad: false, cd: false, rcode: 0,
  questions: [{ name: 'example.org.', type: 1, class: 1 }], answers: [], authority: [], additional: [] });
const out = d.handle(q, { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5353, localAddress: '127.0.0.1', localPort: 53 });
console.log(out === undefined ? 'no reply' : 'rcode ' + (out.readUInt16BE(2) & 0xf));
`,
  );
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('debug: errors are not recovered', () => {
  test('without debug a thrown error is recovered and answered SERVFAIL', () => {
    const r = dispatchThrowing(false);
    assert.equal(r.stdout, 'rcode 2\n');
    assert.match(r.stderr, /^recovered: Cannot read properties of null/);
    assert.equal(r.status, 0);
  });
  test('with debug the process ends with the stack of the error, and nothing is answered', () => {
    const r = dispatchThrowing(true);
    assert.equal(r.stdout, 'no reply\n');
    assert.match(r.stderr, /TypeError: Cannot read properties of null \(reading 'boom'\)\n\s+at Object\.handle/);
    assert.doesNotMatch(r.stderr, /recovered/);
    assert.equal(r.status, 1);
  });
});

describe('debug: log lines', () => {
  test('debug lines are printed while the running config has debug, and stop after a reload without it', async () => {
    const s = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    debug\n    whoami\n}\n');
    try {
      s.server.log.plugin('test').debug('first');
      writeFileSync(s.corefilePath, `.:${s.port} {\n    bind 127.0.0.1\n    whoami\n}\n`);
      assert.equal(await s.server.reload(), true);
      s.server.log.plugin('test').debug('second');
      assert.deepEqual(
        s.logs.filter((l) => l.startsWith('[DEBUG]')),
        ['[DEBUG] plugin/test: first'],
      );
    } finally {
      await s.stop();
    }
  });
});
