import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { directiveIn } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { kdnsCommand } from '../../../test/util/kdns.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { parseHealth } from './setup.js';

describe('health setup', () => {
  const valid: Array<{ corefile: string; want: { host: string | undefined; port: number; lameduckMs: number } }> = [
    { corefile: 'health', want: { host: undefined, port: 8080, lameduckMs: 0 } },
    { corefile: 'health localhost:8091', want: { host: '127.0.0.1', port: 8091, lameduckMs: 0 } },
    { corefile: 'health :8092 {\n lameduck 5s\n}', want: { host: undefined, port: 8092, lameduckMs: 5000 } },
    { corefile: 'health {\n lameduck 1m30s\n}', want: { host: undefined, port: 8080, lameduckMs: 90_000 } },
  ];
  for (const c of valid) {
    test(`valid: ${JSON.stringify(c.corefile)}`, () => {
      const h = parseHealth(directiveIn(c.corefile));
      assert.deepEqual({ host: h.address.host, port: h.address.port, lameduckMs: h.lameduckMs }, c.want);
    });
  }
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'health 8080', error: 'Corefile:2: health: address 8080: missing port in address' },
    { corefile: 'health :8080 :8081', error: 'Corefile:2: wrong argument count for "health": expected at most 1, got 2' },
    { corefile: 'health {\n lameduk 5s\n}', error: 'Corefile:3: unknown property "lameduk" in health block' },
    { corefile: 'health {\n lameduck\n}', error: 'Corefile:3: wrong argument count for "lameduck": expected 1, got 0' },
    { corefile: 'health {\n lameduck soon\n}', error: 'Corefile:3: invalid duration for lameduck: "soon" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'health {\n lameduck -1s\n}', error: 'Corefile:3: lameduck must be at least 0s, got -1s' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parseHealth(directiveIn(c.corefile)), { message: c.error }));
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** Sum of a metric's samples in Prometheus text (every label set). */
function sample(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('health on a running server', () => {
  let s: TestServer;
  let httpPort: number;
  before(async () => {
    httpPort = await freePort();
    // Two blocks name the same health address, and prometheus shares it: one listener serves all.
    s = await startTestServer(`
example.org:{PORT} {
    bind 127.0.0.1
    health 127.0.0.1:${httpPort}
    prometheus 127.0.0.1:${httpPort}
    whoami
}
example.net:{PORT} {
    bind 127.0.0.1
    health 127.0.0.1:${httpPort}
    whoami
}
`);
  });
  after(() => s.stop());

  test('/health answers 200 OK', async () => {
    assert.deepEqual(await get(`http://127.0.0.1:${httpPort}/health`), { status: 200, body: 'OK' });
  });

  test('other paths are 404; /metrics of prometheus shares the port', async () => {
    assert.equal((await get(`http://127.0.0.1:${httpPort}/healthz`)).status, 404);
    assert.equal((await get(`http://127.0.0.1:${httpPort}/metrics`)).status, 200);
  });

  test('the self-check runs once a second and is exported', async () => {
    const count = await waitFor(
      async () => {
        const n = sample((await get(`http://127.0.0.1:${httpPort}/metrics`)).body, 'coredns_health_request_duration_seconds_count');
        return n >= 1 ? n : undefined;
      },
      4000,
      100,
    );
    assert.ok(count >= 1);
    const text = (await get(`http://127.0.0.1:${httpPort}/metrics`)).body;
    assert.match(text, /^coredns_health_request_failures_total 0$/m);
  });

  test('a reload keeps the port answering', async () => {
    assert.equal(await s.server.reload(), true);
    assert.deepEqual(await get(`http://127.0.0.1:${httpPort}/health`), { status: 200, body: 'OK' });
  });
});

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** `kdns serve --conf PATH` as a child process, the production build as users run it. */
function kdnsServe(corefilePath: string) {
  const args = kdnsCommand(['serve', '--conf', corefilePath]);
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('lameduck: SIGTERM to kdns serve', () => {
  test('DNS keeps answering for the lameduck time, ready says so, then the process exits', async () => {
    const [dnsPort, healthPort, readyPort] = [await freePort(), await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'kdns-lameduck-'));
    const corefile = join(dir, 'Corefile');
    writeFileSync(
      corefile,
      `.:${dnsPort} {
    bind 127.0.0.1
    health 127.0.0.1:${healthPort} {
        lameduck 1s
    }
    ready 127.0.0.1:${readyPort}
    whoami
}
`,
    );
    const kdns = kdnsServe(corefile);
    try {
      const healthy = waitFor(() => get(`http://127.0.0.1:${healthPort}/health`).then((r) => r.status === 200, () => false), 20_000, 100);
      const started = await Promise.race([healthy.then(() => 'healthy', () => 'timed out'), kdns.exited.then(() => 'exited')]);
      assert.equal(started, 'healthy', `kdns serve ${started} before /health answered:\n${kdns.output()}`);
      const sigterm = Date.now();
      kdns.child.kill('SIGTERM');
      await waitFor(() => kdns.output().includes('Going into lameduck mode'), 2000, 10);
      const during = await dig('example.org', 'A', { port: dnsPort });
      assert.equal(during.status, 'NOERROR', 'answers during lameduck');
      assert.deepEqual(await get(`http://127.0.0.1:${readyPort}/ready`), { status: 503, body: 'Shutting down' });
      assert.deepEqual(await get(`http://127.0.0.1:${healthPort}/health`), { status: 200, body: 'OK' });
      const code = await kdns.exited;
      const elapsed = Date.now() - sigterm;
      assert.equal(code, 0, kdns.output());
      assert.ok(elapsed >= 1000, `exited after ${elapsed} ms, before the 1s lameduck`);
      assert.ok(elapsed < 5000, `exited after ${elapsed} ms`);
      assert.match(kdns.output(), /^\[INFO\] plugin\/health: Going into lameduck mode for 1s$/m);
      await assert.rejects(dig('example.org', 'A', { port: dnsPort, timeout: 1 }), 'no answer once it has exited');
    } finally {
      kdns.child.kill('SIGKILL');
    }
  });
});
