// The directory source while serving: files added, changed, deleted and broken under a running
// `kdns serve`, observed with real dig. A `cache 30` sits in front, as in the stock Corefile:
// the plugin's answers pass it by (Reply.kept), so a change is served at once, not after 30 s.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, dig } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const service = (name: string, ip: string): string => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: demo
spec:
  clusterIP: ${ip}
  ports:
  - name: http
    port: 80
`;

let dir: string;
let srv: TestServer;

async function lookup(name: string): Promise<string> {
  const r = await dig(`${name}.demo.svc.cluster.local`, 'A', { port: srv.port });
  return `${r.status} ${answers(r).join(',')}`.trim();
}

/** Waits until `name` answers `expected`; returns how long that took. */
async function until(name: string, expected: string): Promise<number> {
  const started = Date.now();
  await waitFor(async () => (await lookup(name)) === expected, 3000, 20);
  return Date.now() - started;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdns-watch-'));
  await writeFile(join(dir, 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n');
  await writeFile(join(dir, 'web.yaml'), service('web', '10.96.0.20'));
  srv = await startTestServer(`cluster.local:{PORT} {\n  bind 127.0.0.1\n  cache 30\n  kubernetes {\n    manifests ${dir}\n  }\n}\n`);
});

after(async () => {
  await srv?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Step {
  what: string;
  change: () => Promise<void>;
  /** For a change that must not alter answers: what shows it was read. */
  read?: () => boolean;
  name: string;
  expect: string;
}

const reportedBroken = (): boolean => srv.logs.some((l) => l.includes('web.yaml:4'));

const steps: Step[] = [
  { what: 'a new Service file is served', change: () => writeFile(join(dir, 'api.yaml'), service('api', '10.96.0.30')), name: 'api', expect: 'NOERROR A 10.96.0.30' },
  { what: 'a changed Service file is served', change: () => writeFile(join(dir, 'api.yaml'), service('api', '10.96.0.31')), name: 'api', expect: 'NOERROR A 10.96.0.31' },
  { what: 'a deleted Service file is gone', change: () => unlink(join(dir, 'api.yaml')), name: 'api', expect: 'NXDOMAIN' },
  {
    what: 'a broken file keeps the previous answers',
    change: () => writeFile(join(dir, 'web.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [web\n'),
    read: reportedBroken,
    name: 'web',
    expect: 'NOERROR A 10.96.0.20',
  },
  { what: 'the repaired file is served', change: () => writeFile(join(dir, 'web.yaml'), service('web', '10.96.0.21')), name: 'web', expect: 'NOERROR A 10.96.0.21' },
];

test('directory changes reach answers within a second', async (t) => {
  assert.equal(await lookup('web'), 'NOERROR A 10.96.0.20');
  assert.equal(await lookup('api'), 'NXDOMAIN');
  for (const s of steps) {
    await t.test(s.what, async () => {
      await s.change();
      if (s.read) await waitFor(s.read, 3000, 20);
      const ms = await until(s.name, s.expect);
      assert.ok(ms < 1000, `took ${ms} ms`);
    });
  }
});

test('the cache in front kept no copy of the cluster answers and counted none of them', async () => {
  const total = async (name: string): Promise<number> => {
    const values = (await srv.server.shared.metrics.getSingleMetric(name)?.get())?.values ?? [];
    return values.reduce((sum, v) => sum + v.value, 0);
  };
  assert.deepEqual(
    [await total('coredns_cache_entries'), await total('coredns_cache_requests_total'), await total('coredns_cache_hits_total'), await total('coredns_cache_misses_total')],
    [0, 0, 0, 0],
  );
});

test('the broken file was reported with its path and line', () => {
  const report = srv.logs.find((l) => l.includes('web.yaml:4'));
  assert.ok(reportedBroken());
  assert.ok(report, srv.logs.join('\n'));
  assert.match(report, /^\[ERROR\] plugin\/kubernetes: .*web\.yaml:4: YAML: /);
});

test('a reload keeps the cluster it has read: new options apply, nothing is read again', async () => {
  const loadedBefore = srv.logs.filter((l) => l.includes('loaded')).length;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(srv.corefilePath, `cluster.local:${srv.port} {\n  bind 127.0.0.1\n  kubernetes {\n    manifests ${dir}\n    ttl 42\n  }\n}\n`);
  assert.equal(await srv.server.reload(), true);
  const r = await dig('web.demo.svc.cluster.local', 'A', { port: srv.port });
  assert.deepEqual(r.answer.map((a) => `${a.ttl} ${a.data}`), ['42 10.96.0.21']);
  assert.equal(srv.logs.filter((l) => l.includes('loaded')).length, loadedBefore);
});
