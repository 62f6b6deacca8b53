import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createLogger } from '../../server/log.js';
import type { ServerControl } from '../../server/plugin.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { answers, dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { checkPeriod, ReloadPlugin, sha512, type ReloadConfig } from './handler.js';
import { parseReload } from './setup.js';

describe('reload setup', () => {
  const valid: Array<{ corefile: string; want: ReloadConfig }> = [
    { corefile: 'reload', want: { intervalMs: 30_000, jitterMs: 15_000 } },
    { corefile: 'reload 10s', want: { intervalMs: 10_000, jitterMs: 5_000 } },
    { corefile: 'reload 1m 10s', want: { intervalMs: 60_000, jitterMs: 10_000 } },
    { corefile: 'reload 2s 0s', want: { intervalMs: 2_000, jitterMs: 0 } },
    { corefile: 'reload 4s 3s', want: { intervalMs: 4_000, jitterMs: 2_000 } },
  ];
  for (const c of valid) test(`valid: ${JSON.stringify(c.corefile)}`, () => assert.deepEqual(parseReload(directiveIn(c.corefile)), c.want));
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'reload 1s', error: 'Corefile:2: reload interval must be at least 2s, got 1s' },
    { corefile: 'reload often', error: 'Corefile:2: invalid duration for reload interval: "often" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'reload 10s -1s', error: 'Corefile:2: reload jitter must be at least 0s, got -1s' },
    { corefile: 'reload 10s 1s 1s', error: 'Corefile:2: wrong argument count for "reload": expected at most 2, got 3' },
    { corefile: 'reload {\n interval 5s\n}', error: 'Corefile:2: "reload" does not take a block' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parseReload(directiveIn(c.corefile)), { message: c.error }));
});

describe('checkPeriod: interval ± jitter', () => {
  const cases: Array<{ random: number; want: number }> = [
    { random: 0, want: 20_000 },
    { random: 0.5, want: 30_000 },
    { random: 0.75, want: 35_000 },
  ];
  for (const c of cases) test(`random ${c.random} → ${c.want}`, () => assert.equal(checkPeriod({ intervalMs: 30_000, jitterMs: 10_000 }, () => c.random), c.want));
});

/** A server stand-in that "runs" whatever text it last reloaded successfully. */
function controlledServer(initial: string, path: string, accepts: (text: string) => boolean) {
  let running = initial;
  const reloads: string[] = [];
  const server: ServerControl = {
    reload: async () => {
      const text = readFileSync(path, 'utf8');
      reloads.push(text);
      if (!accepts(text)) return false;
      running = text;
      return true;
    },
    corefileText: () => running,
    readiness: () => [],
    shuttingDown: () => false,
  };
  return { server, reloads };
}

describe('ReloadPlugin.check', () => {
  test('reloads on change, does not retry a broken file, retries when it changes again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-reload-'));
    const path = join(dir, 'Corefile');
    const good = '. {\n    whoami\n}\n';
    writeFileSync(path, good);
    const { server, reloads } = controlledServer(good, path, (t) => !t.includes('broken'));
    const lines: string[] = [];
    const log = createLogger((level, line) => lines.push(`[${level}] ${line}`));
    const metrics = new Registry();
    const plugin = new ReloadPlugin({ intervalMs: 60_000, jitterMs: 0 }, { server, corefilePath: path, loadedText: good, metrics, serverLog: log, log: log.plugin('reload') });
    plugin.start();
    try {
      const steps: Array<{ write?: string; remove?: boolean; want: string; reloads: number }> = [
        { want: 'unchanged', reloads: 0 },
        { write: good.replace('whoami', 'whoami\n    log'), want: 'reloaded', reloads: 1 },
        { want: 'unchanged', reloads: 1 },
        { write: 'broken {', want: 'failed', reloads: 2 },
        { want: 'skipped', reloads: 2 },
        { write: 'broken { again', want: 'failed', reloads: 3 },
        { remove: true, want: 'unreadable', reloads: 3 },
        { write: good, want: 'reloaded', reloads: 4 },
      ];
      for (const [i, step] of steps.entries()) {
        if (step.write !== undefined) writeFileSync(path, step.write);
        if (step.remove) rmSync(path);
        assert.equal(await plugin.check(), step.want, `step ${i}`);
        assert.equal(reloads.length, step.reloads, `reloads after step ${i}`);
      }
    } finally {
      plugin.stop();
    }
    assert.deepEqual(lines.slice(0, 4), [
      `[INFO] plugin/reload: Running configuration SHA512 = ${sha512(good)}`,
      '[INFO] Reloading',
      '[INFO] Reloading complete',
      '[INFO] Reloading',
    ]);
    assert.ok(lines.includes('[ERROR] plugin/reload: Corefile changed but reload failed; the previous configuration keeps serving'));
    const text = await metrics.metrics();
    assert.ok(text.includes(`coredns_reload_version_info{hash="sha512",value="${sha512(good)}"} 1`), text);
  });
});

describe('reload end to end: real server, real dig', () => {
  let s: TestServer;
  let metricsPort: number;
  const corefile = (address: string, extra = '') => `
example.org:{PORT} {
    bind 127.0.0.1
    reload 2s 0s
    prometheus 127.0.0.1:METRICS
    hosts {
        ${address} www.example.org
    }
${extra}}
`;
  const write = (text: string) => writeFileSync(s.corefilePath, text.replaceAll('{PORT}', String(s.port)).replaceAll('METRICS', String(metricsPort)));
  const www = async () => answers(await dig('www.example.org', 'A', { port: s.port }));
  const metric = async (name: string): Promise<string> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return text.split('\n').find((l) => l.startsWith(name)) ?? '';
  };

  before(async () => {
    metricsPort = await freePort();
    s = await startTestServer(corefile('10.0.0.1').replace('METRICS', String(metricsPort)));
  });
  after(() => s.stop());

  test('a changed Corefile is picked up; a broken one leaves the old config serving', async () => {
    assert.deepEqual(await www(), ['A 10.0.0.1']);
    assert.equal(await metric('coredns_reload_failed_total'), 'coredns_reload_failed_total 0');

    write(corefile('10.0.0.2'));
    const newText = readFileSync(s.corefilePath, 'utf8');
    await waitFor(async () => (await www())[0] === 'A 10.0.0.2', 5000, 100);
    assert.ok(s.logs.includes('[INFO] Reloading'), s.logs.join('\n'));
    assert.ok(s.logs.includes(`[INFO] plugin/reload: Running configuration SHA512 = ${sha512(newText)}`), s.logs.join('\n'));
    await waitFor(() => s.logs.includes('[INFO] Reloading complete'), 1000);
    assert.equal(await metric('coredns_reload_version_info'), `coredns_reload_version_info{hash="sha512",value="${sha512(newText)}"} 1`);

    write(corefile('10.0.0.3', '    no_such_plugin\n'));
    await waitFor(async () => (await metric('coredns_reload_failed_total')) === 'coredns_reload_failed_total 1', 5000, 100);
    assert.deepEqual(await www(), ['A 10.0.0.2'], 'the old config keeps answering');
    assert.ok(
      s.logs.some((l) => l.startsWith('[ERROR] Restart failed: ') && l.includes('no_such_plugin')),
      s.logs.join('\n'),
    );
    assert.ok(s.logs.includes('[ERROR] plugin/reload: Corefile changed but reload failed; the previous configuration keeps serving'));
  });
});

test('reload twice in one server block is refused, naming the second line', async () => {
  await assert.rejects(startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    reload\n    reload\n    whoami\n}\n`), {
    message: /Corefile:4: reload can only be used once per server block$/,
  });
});
