import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../server/log.js';
import type { ServerControl } from '../../server/plugin.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { freePort } from '../../../test/util/net.js';
import { testShared } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { readyAnswer, ReadyPlugin, type MonitorMode, type Readiness } from './handler.js';
import { parseReady } from './setup.js';

describe('ready setup', () => {
  const valid: Array<{ corefile: string; want: { host: string | undefined; port: number; monitor: MonitorMode } }> = [
    { corefile: 'ready', want: { host: undefined, port: 8181, monitor: 'until-ready' } },
    { corefile: 'ready 127.0.0.1:8182', want: { host: '127.0.0.1', port: 8182, monitor: 'until-ready' } },
    { corefile: 'ready [::1]:8183', want: { host: '::1', port: 8183, monitor: 'until-ready' } },
    { corefile: 'ready localhost:8184', want: { host: '127.0.0.1', port: 8184, monitor: 'until-ready' } },
    { corefile: 'ready {\n monitor continuously\n}', want: { host: undefined, port: 8181, monitor: 'continuously' } },
  ];
  for (const c of valid) {
    test(`valid: ${JSON.stringify(c.corefile)}`, () => {
      const r = parseReady(directiveIn(c.corefile));
      assert.deepEqual({ host: r.address.host, port: r.address.port, monitor: r.monitor }, c.want);
    });
  }
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'ready 8181', error: 'Corefile:2: ready: address 8181: missing port in address' },
    { corefile: 'ready :http', error: 'Corefile:2: ready: address :http: invalid port "http"' },
    { corefile: 'ready :70000', error: 'Corefile:2: ready: address :70000: invalid port "70000"' },
    { corefile: 'ready ::1:8181', error: 'Corefile:2: ready: address ::1:8181: too many colons in address' },
    { corefile: 'ready :8181 :8182', error: 'Corefile:2: wrong argument count for "ready": expected at most 1, got 2' },
    { corefile: 'ready {\n monitr continuously\n}', error: 'Corefile:3: unknown property "monitr" in ready block' },
    { corefile: 'ready {\n monitor sometimes\n}', error: 'Corefile:3: unknown monitor mode "sometimes" in ready block (expected until-ready or continuously)' },
    { corefile: 'ready {\n monitor\n}', error: 'Corefile:3: wrong argument count for "monitor": expected 1, got 0' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parseReady(directiveIn(c.corefile)), { message: c.error }));
});

describe('readyAnswer', () => {
  const r = (plugin: string, status: true | string, zone = 'cluster.local.') => ({ plugin, zone, status });
  const cases: Array<{ name: string; readiness: Readiness; shuttingDown?: boolean; mode?: MonitorMode; seen?: string[]; want: { status: number; body: string } }> = [
    { name: 'nobody reports readiness: ready', readiness: [], want: { status: 200, body: 'OK' } },
    { name: 'all ready', readiness: [r('kubernetes', true), r('forward', true)], want: { status: 200, body: 'OK' } },
    { name: 'names of those not ready, sorted, once each', readiness: [r('kubernetes', 'syncing'), r('forward', 'no upstream'), r('kubernetes', 'syncing', 'example.org.')], want: { status: 503, body: 'forward,kubernetes' } },
    { name: 'shutting down wins', readiness: [r('kubernetes', true)], shuttingDown: true, want: { status: 503, body: 'Shutting down' } },
    { name: 'until-ready: ready once stays ready', readiness: [r('kubernetes', 'lost API server')], seen: ['kubernetes|cluster.local.'], want: { status: 200, body: 'OK' } },
    {
      name: 'continuously: asked every time',
      readiness: [r('kubernetes', 'lost API server')],
      mode: 'continuously',
      seen: ['kubernetes|cluster.local.'],
      want: { status: 503, body: 'kubernetes' },
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(readyAnswer(c.readiness, c.shuttingDown ?? false, c.mode ?? 'until-ready', new Set(c.seen ?? [])), c.want));
  }

  test('until-ready remembers what was ready', () => {
    const seen = new Set<string>();
    readyAnswer([r('kubernetes', true), r('forward', 'x')], false, 'until-ready', seen);
    assert.deepEqual([...seen], ['kubernetes|cluster.local.']);
  });
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('ready over HTTP', () => {
  test('503 with the plugin name until it is ready, then 200 OK; 503 again when shutting down', async () => {
    let kubernetes: true | string = 'not synced';
    let stopping = false;
    const server: ServerControl = {
      reload: async () => true,
      corefileText: () => '',
      readiness: () => [{ plugin: 'kubernetes', zone: 'cluster.local.', status: kubernetes }],
      shuttingDown: () => stopping,
    };
    const port = await freePort();
    const lines: string[] = [];
    const log = createLogger((level, line) => lines.push(`[${level}] ${line}`)).plugin('ready');
    const plugin = new ReadyPlugin(parseReady(directiveIn(`ready 127.0.0.1:${port}`)), testShared(), server, log);
    await plugin.start();
    try {
      const url = `http://127.0.0.1:${port}/ready`;
      assert.deepEqual(await get(url), { status: 503, body: 'kubernetes' });
      assert.deepEqual(lines, ['[INFO] plugin/ready: Plugins not ready: "kubernetes"']);
      kubernetes = true;
      assert.deepEqual(await get(url), { status: 200, body: 'OK' });
      stopping = true;
      assert.deepEqual(await get(url), { status: 503, body: 'Shutting down' });
      assert.equal((await get(`http://127.0.0.1:${port}/health`)).status, 404);
    } finally {
      await plugin.stop();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/ready`), 'the listener closes with its last user');
  });

});

describe('ready end to end', () => {
  let t: TestServer;
  let readyPort: number;
  before(async () => {
    readyPort = await freePort();
    t = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    ready 127.0.0.1:${readyPort}\n    whoami\n}\n`);
  });
  after(() => t.stop());

  test('a running server with no plugin that reports readiness is ready', async () => {
    assert.deepEqual(await get(`http://127.0.0.1:${readyPort}/ready`), { status: 200, body: 'OK' });
  });
});

test('ready twice in one server block is refused, naming the second line', async () => {
  await assert.rejects(startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    ready 127.0.0.1:0\n    ready 127.0.0.1:0\n    whoami\n}\n`), {
    message: /Corefile:4: ready can only be used once per server block$/,
  });
});
