// The process guard, in real processes: errors nothing caught are logged and counted and the
// process goes on; `kdns serve` installs it, so a throw in a timer leaves DNS answering and
// coredns_panics_total at 1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dig } from '../../test/util/dig.js';
import { startKdns } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { PANIC_MARKER } from './guard.js';

// Tests run from TypeScript through tsx, and so does the process each case starts.
const guardURL = new URL('./guard.ts', import.meta.url).href;
const tsx = ['--import', 'tsx'];

/** Runs `body` in a fresh node process with the guard installed (panics counted in `n`). */
function guarded(body: string): { status: number | null; stdout: string; stderr: string } {
  const script = `const { guardProcess } = await import(${JSON.stringify(guardURL)});
let n = 0;
guardProcess((line) => console.log(line.split('\\n')[0]), { inc: () => n++ });
${body}
setTimeout(() => console.log('alive, panics=' + n), 200);`;
  const r = spawnSync(process.execPath, [...tsx, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('guardProcess', () => {
  const cases: Array<{ what: string; body: string; lines: string[] }> = [
    {
      what: 'a throw in a timer',
      body: `setTimeout(() => { throw new TypeError('boom in a timer'); }, 1);`,
      lines: [`${PANIC_MARKER} (uncaught exception): TypeError: boom in a timer`, 'alive, panics=1'],
    },
    {
      what: 'a rejected promise nobody awaited',
      body: `void Promise.reject(new RangeError('nobody awaited me'));`,
      lines: [`${PANIC_MARKER} (unhandled rejection): RangeError: nobody awaited me`, 'alive, panics=1'],
    },
    {
      what: 'an error event with no listener',
      body: `const { EventEmitter } = await import('node:events'); setTimeout(() => new EventEmitter().emit('error', new Error('socket gone')), 1);`,
      lines: [`${PANIC_MARKER} (uncaught exception): Error: socket gone`, 'alive, panics=1'],
    },
    {
      what: 'a thrown non-Error',
      body: `setTimeout(() => { throw 'a string'; }, 1);`,
      lines: [`${PANIC_MARKER} (uncaught exception): a string`, 'alive, panics=1'],
    },
  ];
  for (const c of cases) {
    it(`logs and counts ${c.what}, and the process goes on`, () => {
      const r = guarded(c.body);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), c.lines, r.stderr);
    });
  }

  it('without it, the same throw ends the process (the guard is what keeps it alive)', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `setTimeout(() => { throw new TypeError('boom'); }, 1); setTimeout(() => console.log('alive'), 200);`], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
  });
});

describe('kdns serve under the guard', () => {
  it('a throw in a timer is logged and counted in coredns_panics_total, and DNS keeps answering', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'kdns-guard-'));
    const corefile = join(dir, 'Corefile');
    writeFileSync(corefile, `.:${port} {\n  bind 127.0.0.1\n  prometheus 127.0.0.1:${metricsPort}\n  whoami\n}\n`);
    // Code that throws inside the kdns process, loaded before kdns starts (as a bug would).
    const inject = `data:text/javascript,setTimeout(() => { throw new Error('injected fault'); }, 1500)`;
    const kdns = startKdns(['serve', '--conf', corefile], { nodeArgs: ['--import', inject], allowPanics: true });
    try {
      await waitFor(() => kdns.output().includes('kdns listening on') || kdns.child.exitCode !== null, 20_000, 50);
      await waitFor(() => kdns.output().includes(PANIC_MARKER) || kdns.child.exitCode !== null, 10_000, 50);
      assert.equal(kdns.child.exitCode, null, kdns.output());
      assert.match(kdns.output(), new RegExp(`\\[ERROR\\] ${PANIC_MARKER} \\(uncaught exception\\): Error: injected fault`));
      const r = await dig('whoami.example', 'A', { port });
      assert.equal(r.status, 'NOERROR', r.raw);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(text, /^coredns_panics_total 1$/m);
    } finally {
      await kdns.stop();
    }
  });
});
