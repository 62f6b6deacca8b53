// `kdns nodecache` as a process: what it prints, its exit codes, and a run on loopback in front
// of a kdns cluster server (answers, /health, /metrics, clean exit on SIGTERM).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { dig } from '../../test/util/dig.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { defaultSettings, renderNodeCacheCorefile } from './corefile.js';
import { runKdns, startKdns } from '../../test/util/kdns.js';

const FIXTURE = fileURLToPath(new URL('../plugins/autopath/testdata/cluster', import.meta.url));

/** The exit code of a child (null when a signal ended it). */
function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('kdns nodecache, one-shot', () => {
  const cases: Array<{ name: string; args: string[]; code: number; stdout?: string; stderr?: RegExp }> = [
    { name: '--print-corefile prints the shipped configuration', args: ['nodecache', '--cluster-dns', '10.96.0.10', '--print-corefile'], code: 0, stdout: renderNodeCacheCorefile(defaultSettings('10.96.0.10')) },
    { name: 'a bad flag is a usage error naming it', args: ['nodecache', '--cluster-dns', '10.96.0.10', '--local-ip', 'nodelocal'], code: 2, stderr: /^kdns nodecache: --local-ip: "nodelocal" is not an IP address\n$/ },
    { name: 'no cluster DNS is a usage error', args: ['nodecache'], code: 2, stderr: /--cluster-dns is required/ },
    { name: 'a --conf that does not exist', args: ['nodecache', '--conf', '/nonexistent/Corefile'], code: 1, stderr: /^kdns nodecache: \/nonexistent\/Corefile: no such file\n$/ },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await runKdns(c.args);
      assert.equal(r.code, c.code, r.stderr);
      if (c.stdout !== undefined) assert.equal(r.stdout, c.stdout);
      if (c.stderr) assert.match(r.stderr, c.stderr);
    });
  }

  test('a --conf Corefile with an error: exit 1 and the line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-nodecache-cli-'));
    const conf = join(dir, 'Corefile');
    writeFileSync(conf, 'ap.k8s.io:1053 {\n    bind 127.0.0.1\n    searchpath {\n        edns_option 7\n    }\n}\n');
    const r = await runKdns(['nodecache', '--conf', conf]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `${conf}:4: edns_option must be between 65001 and 65534, got 7\n`);
  });
});

describe('kdns nodecache, running', () => {
  let cluster: TestServer | undefined;
  let port: number;
  let health: string;
  let metrics: string;
  let run: ReturnType<typeof startKdns> | undefined;
  test('serves through the cluster server, reports health and metrics, exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-nodecache-run-'));
    const nodeResolv = join(dir, 'resolv.conf');
    writeFileSync(nodeResolv, 'nameserver 192.0.2.53\nsearch corp.test\n');
    cluster = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    autopath ap.k8s.io ${nodeResolv}\n    kubernetes cluster.local {\n        manifests ${FIXTURE}\n    }\n}\n`);
    port = await freePort();
    health = `127.0.0.1:${await freePort()}`;
    metrics = `127.0.0.1:${await freePort()}`;
    const kdns = startKdns([
      'nodecache',
      '--local-ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--cluster-dns',
      `127.0.0.1:${cluster.port}`,
      '--upstream',
      `127.0.0.1:${cluster.port}`,
      '--resolv-conf',
      nodeResolv,
      '--health',
      health,
      '--metrics',
      metrics,
    ]);
    run = kdns;
    const exited = exitOf(kdns.child);
    try {
      await waitFor(async () => (await fetch(`http://${health}/health`).catch(() => undefined))?.status === 200, 20_000, 100);
      const r = await dig('db.otherns.search.ns1.cluster.local.ap.k8s.io', 'A', { port });
      assert.equal(r.status, 'NOERROR', r.raw);
      assert.deepEqual(
        r.answer.map((x) => `${x.type} ${x.data}`),
        ['CNAME db.otherns.svc.cluster.local.', 'A 10.96.2.20'],
      );
      const again = await dig('db.otherns.search.ns1.cluster.local.ap.k8s.io', 'A', { port });
      assert.equal(again.answer.length, 2, again.raw);
      const text = await (await fetch(`http://${metrics}/metrics`)).text();
      assert.match(text, new RegExp(`coredns_dns_requests_total\\{server="dns://127.0.0.1:${port}",zone="ap.k8s.io.",view="",proto="udp",family="1",type="A"\\} 2`));
      // The second query was a hit (the loop plugin's probe, also in this block, was a denial).
      assert.match(text, new RegExp(`coredns_cache_hits_total\\{server="dns://127.0.0.1:${port}",type="success",zones="ap.k8s.io.",view=""\\} 1`));
      assert.match(kdns.output(), new RegExp(`kdns nodecache listening on 127.0.0.1:${port} \\(udp\\+tcp\\)`));
    } finally {
      kdns.child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, kdns.output());
    assert.match(kdns.output(), /SIGTERM received, shutting down/);
  });

  after(async () => {
    await run?.stop();
    await cluster?.stop();
  });
});
