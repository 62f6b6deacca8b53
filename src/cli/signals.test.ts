// Signals to the long-running kdns commands, sent to real processes: CoreDNS's meanings
// (SIGTERM/SIGINT graceful with lameduck, a second SIGINT and SIGQUIT at once, SIGUSR1 reload),
// and no signal that asks for nothing ends the process.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { answers, dig } from '../../test/util/dig.js';
import { startKdns } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { IGNORED_SIGNALS } from './signals.js';

type Kdns = ReturnType<typeof startKdns>;

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function corefile(port: number, address: string, lameduck: string): string {
  return `example.org:${port} {\n    bind 127.0.0.1\n    health 127.0.0.1:0 {\n        lameduck ${lameduck}\n    }\n    hosts {\n        ${address} a.example.org\n    }\n}\n`;
}

async function serve(lameduck: string): Promise<{ kdns: Kdns; port: number; path: string }> {
  const port = await freePort();
  const path = join(mkdtempSync(join(tmpdir(), 'kdns-signals-')), 'Corefile');
  writeFileSync(path, corefile(port, '10.0.0.1', lameduck));
  const kdns = startKdns(['serve', '--conf', path]);
  await waitFor(() => kdns.output().includes('listening') || kdns.child.exitCode !== null, 20_000);
  assert.match(kdns.output(), /listening/);
  return { kdns, port, path };
}

const answer = async (port: number): Promise<string[]> => answers(await dig('a.example.org', 'A', { port }));

describe('kdns serve: signals that must not end it', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    s = await serve('5s');
  });
  after(() => s.kdns.stop());

  for (const signal of IGNORED_SIGNALS) {
    test(`${signal}: logged, ignored, still answering`, async () => {
      s.kdns.child.kill(signal);
      await waitFor(() => s.kdns.output().includes(`${signal} received, ignored`), 5000);
      assert.deepEqual(await answer(s.port), ['A 10.0.0.1']);
      assert.equal(s.kdns.child.exitCode, null);
    });
  }

  const reloads: Array<{ signal: NodeJS.Signals; address: string; log: string }> = [
    { signal: 'SIGUSR1', address: '10.0.0.2', log: 'SIGUSR1 received, reloading' },
    { signal: 'SIGUSR2', address: '10.0.0.3', log: 'SIGUSR2 received, reloading (kdns does not replace its binary in place)' },
  ];
  for (const c of reloads) {
    test(`${c.signal}: reloads the Corefile`, async () => {
      writeFileSync(s.path, corefile(s.port, c.address, '5s'));
      s.kdns.child.kill(c.signal);
      await waitFor(async () => (await answer(s.port))[0] === `A ${c.address}`, 10_000, 100);
      assert.ok(s.kdns.output().includes(c.log), s.kdns.output());
      assert.equal(s.kdns.child.exitCode, null);
    });
  }
});

describe('kdns serve: signals that end it', () => {
  const cases: Array<{ what: string; signals: NodeJS.Signals[]; lameduck: string; code: number; minMs: number; maxMs: number; log: RegExp }> = [
    { what: 'SIGTERM: lameduck, then exit 0', signals: ['SIGTERM'], lameduck: '1s', code: 0, minMs: 1000, maxMs: 8000, log: /SIGTERM received, shutting down[\s\S]*Going into lameduck mode for 1s/ },
    { what: 'SIGINT: lameduck, then exit 0', signals: ['SIGINT'], lameduck: '1s', code: 0, minMs: 1000, maxMs: 8000, log: /SIGINT received, shutting down[\s\S]*Going into lameduck mode for 1s/ },
    { what: 'a second SIGINT: quits at once, exit 2', signals: ['SIGINT', 'SIGINT'], lameduck: '20s', code: 2, minMs: 0, maxMs: 10_000, log: /SIGINT received again, quitting at once/ },
    { what: 'SIGQUIT: quits at once without lameduck, exit 0', signals: ['SIGQUIT'], lameduck: '20s', code: 0, minMs: 0, maxMs: 10_000, log: /SIGQUIT received, quitting at once/ },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const { kdns, port } = await serve(c.lameduck);
      try {
        const exited = exitOf(kdns.child);
        const sent = Date.now();
        for (const [i, signal] of c.signals.entries()) {
          if (i > 0) await waitFor(() => kdns.output().includes('Going into lameduck'), 5000);
          kdns.child.kill(signal);
        }
        if (c.minMs > 0) {
          await waitFor(() => kdns.output().includes('Going into lameduck'), 5000);
          assert.deepEqual(await answer(port), ['A 10.0.0.1'], 'answers during lameduck');
        }
        assert.equal(await exited, c.code, kdns.output());
        const elapsed = Date.now() - sent;
        assert.ok(elapsed >= c.minMs && elapsed < c.maxMs, `exited after ${elapsed} ms`);
        assert.match(kdns.output(), c.log);
      } finally {
        await kdns.stop();
      }
    });
  }
});

describe('other long-running commands', () => {
  test('node-resolver: SIGHUP and SIGUSR1 are ignored, SIGTERM ends it with 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-signals-nr-'));
    const hosts = join(dir, 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n');
    // Nothing listens on the port: every pass fails its lookups and says so.
    const port = await freePort();
    const kdns = startKdns(['node-resolver', '--services', 'registry.ns.svc', '--nameserver', `127.0.0.1:${port}`, '--hosts-file', hosts, '--interval', '1h', '--timeout', '200ms']);
    const said = (): string => `; kdns said:\n${kdns.output()}`;
    try {
      // Signals only once the handlers are in: the first pass's line comes from the loop, which
      // starts after them. ("keeping … every 1h" is written just before them, and a SIGHUP sent
      // on seeing it could still meet the default action, which ends the process.)
      await waitFor(() => kdns.output().includes('lookup failed, keeping the current entries'), 20_000).catch((e: Error) => {
        throw new Error(`${e.message}${said()}`);
      });
      const exited = exitOf(kdns.child);
      kdns.child.kill('SIGHUP');
      kdns.child.kill('SIGUSR1');
      await waitFor(() => kdns.output().includes('SIGHUP received, ignored') && kdns.output().includes('SIGUSR1 received: this command has nothing to reload; ignored'), 20_000).catch((e: Error) => {
        throw new Error(`${e.message}${said()}`);
      });
      const sent = Date.now();
      kdns.child.kill('SIGTERM');
      // Still running until now: a process that SIGHUP or SIGUSR1 had ended has no exit code.
      assert.equal(await exited, 0, kdns.output());
      assert.match(kdns.output(), /SIGTERM received, shutting down/);
      // Not the rest of the hour's interval, even when the signal came in the middle of a pass.
      assert.ok(Date.now() - sent < 60_000, `exited after ${Date.now() - sent} ms`);
    } finally {
      await kdns.stop();
    }
  });
});
